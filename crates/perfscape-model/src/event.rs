//! Interval events (timers) and user (atomic) events, and the pure functions that read
//! structure out of TAU event names: callpaths, source locations, sampling prefixes.
//!
//! Name conventions follow TAU (see `../shared/FORMATS.md`): a callpath event is named
//! `a => b => c`, a source location is written `[{file} {line,col}-{line,col}]`,
//! `[{file} {line,col}]` or `[{file} {line}]`, event-based sampling adds `[SAMPLE]`,
//! `[CONTEXT]`, `[INTERMEDIATE]` prefixes, and throttled timers end with `[THROTTLED]`.

use crate::ids::{AtomicEventId, EventId, GroupId};
pub use crate::shared::{SharedList, SharedStr};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The callpath separator TAU writes between frames, in the canonical (ParaProf) spacing.
pub const CALLPATH_SEPARATOR: &str = " => ";

/// What kind of measurement an interval event is, read from the prefix of its leaf name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// An instrumented timer (routine, region, MPI call, ...).
    Timer,
    /// `[SAMPLE] f [{file} {line}]`: time attributed to a source line by event-based sampling.
    Sample,
    /// `[CONTEXT] timer`: the timer that was active when samples were taken.
    SampleContext,
    /// `[INTERMEDIATE] f`: an intermediate frame of an unwound sample.
    Intermediate,
    /// `[SUMMARY] f`: ParaProf's per-function aggregate of `[SAMPLE]` lines.
    Summary,
    /// `[UNWIND] f`: an unwound call-stack frame of a sample.
    Unwind,
}

impl EventKind {
    /// The kind's name in the API, the tables and the exports: `timer`, `sample`,
    /// `sample_context`, `intermediate`, `summary`, `unwind`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Timer => "timer",
            EventKind::Sample => "sample",
            EventKind::SampleContext => "sample_context",
            EventKind::Intermediate => "intermediate",
            EventKind::Summary => "summary",
            EventKind::Unwind => "unwind",
        }
    }

    /// Classifies a (leaf) event name by its TAU prefix.
    pub fn of_leaf(leaf: &str) -> Self {
        let s = leaf.trim_start();
        if s.starts_with("[SAMPLE]") {
            EventKind::Sample
        } else if s.starts_with("[CONTEXT]") {
            EventKind::SampleContext
        } else if s.starts_with("[INTERMEDIATE]") {
            EventKind::Intermediate
        } else if s.starts_with("[SUMMARY]") {
            EventKind::Summary
        } else if s.starts_with("[UNWIND]") {
            EventKind::Unwind
        } else {
            EventKind::Timer
        }
    }
}

/// A source location parsed from an event name.
///
/// TAU writes `[{file} {line,col}-{line,col}]` (PDT instrumentation: start and end of the
/// routine), `[{file} {line,col}]` (compiler instrumentation) or `[{file} {line}]` (samples).
/// Column 0 means "unknown column".
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SourceLocation {
    /// File path as written by the tool (may be relative, or `(unknown)`).
    pub file: String,
    /// First line (1-based; 0 when the tool did not know it).
    pub line: u32,
    /// First column, if given.
    pub column: Option<u32>,
    /// Last line of a range, if given.
    pub end_line: Option<u32>,
    /// Last column of a range, if given.
    pub end_column: Option<u32>,
}

impl SourceLocation {
    /// Parses the last `[{file} {spec}]` group of `name`, if there is one (see
    /// [`SourceRef::parse_from_name`], which borrows the file instead of copying it).
    pub fn parse_from_name(name: &str) -> Option<Self> {
        SourceRef::parse_from_name(name).map(SourceRef::to_owned)
    }
}

/// A [`SourceLocation`] whose file is borrowed from the name it was parsed from
/// ([`Event::source`] gives one without copying). Serializes as a [`SourceLocation`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct SourceRef<'a> {
    /// File path as written by the tool (may be relative, or `(unknown)`).
    pub file: &'a str,
    /// First line (1-based; 0 when the tool did not know it).
    pub line: u32,
    /// First column, if given.
    pub column: Option<u32>,
    /// Last line of a range, if given.
    pub end_line: Option<u32>,
    /// Last column of a range, if given.
    pub end_column: Option<u32>,
}

impl<'a> SourceRef<'a> {
    /// Parses the last `[{file} {spec}]` group of `name`, if there is one.
    ///
    /// `spec` is `l`, `l,c`, `l, c` or `l,c}-{l,c`. Returns `None` when the name carries no
    /// well-formed location (nothing is guessed).
    pub fn parse_from_name(name: &'a str) -> Option<Self> {
        let start = memchr::memmem::rfind(name.as_bytes(), b"[{")?;
        let rest = &name[start + 2..];
        let end = rest.find("}]")?;
        let body = &rest[..end]; // file} {spec   or   file} {l,c}-{l,c
        let sep = body.find("} {")?;
        let file = &body[..sep];
        let spec = &body[sep + 3..];
        let (first, second) = match spec.split_once("}-{") {
            Some((a, b)) => (a, Some(b)),
            None => (spec, None),
        };
        let parse_pair = |s: &str| -> Option<(u32, Option<u32>)> {
            match s.split_once(',') {
                Some((l, c)) => Some((l.trim().parse().ok()?, Some(c.trim().parse().ok()?))),
                None => Some((s.trim().parse().ok()?, None)),
            }
        };
        let (line, column) = parse_pair(first)?;
        let (end_line, end_column) = match second {
            Some(s) => {
                let (l, c) = parse_pair(s)?;
                (Some(l), c)
            }
            None => (None, None),
        };
        Some(SourceRef {
            file,
            line,
            column,
            end_line,
            end_column,
        })
    }

    /// The location with its file copied.
    pub fn to_owned(self) -> SourceLocation {
        SourceLocation {
            file: self.file.to_string(),
            line: self.line,
            column: self.column,
            end_line: self.end_line,
            end_column: self.end_column,
        }
    }
}

/// Normalizes a timer name the way ParaProf shows it: surrounding whitespace trimmed and,
/// for callpaths, every frame trimmed and the frames joined by `" => "`.
///
/// TAU writes MPI timers with a trailing type part (`"MPI_Init()  "`) and so produces
/// separators such as `"   => "` or `"  => "`; ParaProf displays
/// `.TAU application => MPI_Init()`. Borrows when nothing changes.
pub fn normalize_timer_name(raw: &str) -> Cow<'_, str> {
    let trimmed = raw.trim();
    if is_canonical_path(trimmed) {
        return Cow::Borrowed(trimmed);
    }
    let mut out = String::with_capacity(trimmed.len());
    for (i, frame) in trimmed.split("=>").enumerate() {
        if i > 0 {
            out.push_str(CALLPATH_SEPARATOR);
        }
        out.push_str(frame.trim());
    }
    Cow::Owned(out)
}

/// True when `s` (trimmed) is already a normalized name: a flat name without `=>`, or frames
/// joined by `" => "`, each non-empty, without `=>` and without whitespace at its ends. One
/// pass over the `=>` of the name with a searcher built once (TAU readers ask this of every
/// timer line of every file); the same test as splitting at `" => "` and checking each frame.
fn is_canonical_path(s: &str) -> bool {
    static ARROW: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new("=>"));
    let b = s.as_bytes();
    let trimmed_frame = |f: &str| !f.is_empty() && f.trim() == f;
    let mut frame_start = 0;
    for i in ARROW.find_iter(b) {
        // The arrow must be the middle of " => ", after a frame and before another one.
        if i == 0 || i - 1 < frame_start || b[i - 1] != b' ' || b.get(i + 2) != Some(&b' ') {
            return false;
        }
        if !trimmed_frame(&s[frame_start..i - 1]) {
            return false;
        }
        frame_start = i + 3;
    }
    frame_start == 0 || trimmed_frame(&s[frame_start.min(s.len())..])
}

/// Collapses every run of two or more spaces into one space and trims the ends.
///
/// This is how ParaProf names user events (`Utility.removeRuns` in TAU's `perfdmf`), so
/// `"Message size : f()   => MPI_Send()  "` becomes `"Message size : f() => MPI_Send()"`.
pub fn normalize_user_event_name(raw: &str) -> Cow<'_, str> {
    let trimmed = raw.trim();
    if !trimmed.contains("  ") {
        return Cow::Borrowed(trimmed);
    }
    let mut out = String::with_capacity(trimmed.len());
    let mut prev_space = false;
    for ch in trimmed.chars() {
        if ch == ' ' {
            if !prev_space {
                out.push(' ');
            }
            prev_space = true;
        } else {
            out.push(ch);
            prev_space = false;
        }
    }
    Cow::Owned(out)
}

/// The frames of a (normalized) callpath name; a flat name is a path of one frame.
pub fn callpath_frames(name: &str) -> impl Iterator<Item = &str> {
    name.split(CALLPATH_SEPARATOR)
}

/// The number of frames of a (normalized) callpath name: `callpath_frames(name).count()`,
/// with a searcher for the separator built once (a `str` split builds one per call; a TAU
/// reader asks this of every new callpath).
pub fn callpath_depth(name: &str) -> usize {
    static SEPARATOR: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(CALLPATH_SEPARATOR));
    1 + SEPARATOR.find_iter(name.as_bytes()).count()
}

/// The last frame of a (normalized) callpath name: the routine the path measures.
pub fn callpath_leaf(name: &str) -> &str {
    // One reverse searcher for the separator, built once (a `str` search builds one per call,
    // and a call tree asks this of every node).
    static SEPARATOR: std::sync::LazyLock<memchr::memmem::FinderRev<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::FinderRev::new(CALLPATH_SEPARATOR));
    match SEPARATOR.rfind(name.as_bytes()) {
        Some(i) => &name[i + CALLPATH_SEPARATOR.len()..],
        None => name,
    }
}

/// The path without its last frame (`a => b` for `a => b => c`), or `None` for a flat name.
pub fn callpath_parent(name: &str) -> Option<&str> {
    name.rfind(CALLPATH_SEPARATOR).map(|i| &name[..i])
}

/// A routine name without TAU's decorations: the source location group `[{..} {..}]`, the
/// ` C ` language marker of PDT names, `[THROTTLED]` and surrounding whitespace removed.
///
/// `int foo(int) C [{foo.c} {3,1}-{7,1}]` gives `int foo(int)`;
/// `[SAMPLE] compute [{matmult.c} {99}]` gives `[SAMPLE] compute`.
pub fn routine_name(leaf: &str) -> &str {
    let mut s = leaf.trim();
    if let Some(stripped) = s.strip_suffix("[THROTTLED]") {
        s = stripped.trim_end();
    }
    if let Some(i) = s.rfind("[{") {
        // Only strip when the bracket group is well formed and ends the name or is followed
        // by parameter annotations only.
        if s[i..].contains("}]") {
            s = s[..i].trim_end();
        }
    }
    if let Some(stripped) = s.strip_suffix(" C") {
        s = stripped.trim_end();
    }
    s
}

/// One interval event (timer) of a profile. Flat timers and callpath timers are both events;
/// a callpath event is a call-tree node: its [`Event::parent`] node and its own
/// [`Event::frame`]. Its whole name (`a => b => c`, as ParaProf shows it) is not stored: it is
/// built when shown, by [`crate::Profile::event_name`], so that deep call trees (10^5–10^6
/// calling contexts) do not hold names that grow with the square of their depth.
///
/// 32 bytes: what can be derived from the frame (its [`Event::source`] location) is derived
/// when asked, and the parent and routine links are 4 bytes each (`u32::MAX` for none: a
/// profile would need 2^32 - 1 events, 128 GiB of them alone, for an id to reach it).
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// The event's own part of its name (normalized, see [`normalize_timer_name`]): for an
    /// event with a [`Event::parent`], the frames after the parent's name (one frame: `c` of
    /// `a => b => c`); for a flat event, or a callpath whose parent is not in the profile (a
    /// path cut by TAU_CALLPATH_DEPTH), the whole name.
    ///
    /// Shared: the nodes of a call tree that have the same frame point to one string (one
    /// pointer wide: see [`SharedStr`]).
    pub frame: SharedStr,
    /// Groups the event belongs to (TAU's `GROUP="a|b"`), in the order first written. Shared:
    /// the events with the same groups point to one list (one pointer wide, as `frame`).
    pub groups: SharedList<GroupId>,
    /// Number of frames: 1 for a flat event, n for `f1 => ... => fn`.
    pub depth: u32,
    /// See [`Event::parent`].
    parent: EventLink,
    /// See [`Event::routine`].
    routine: EventLink,
    /// Kind, from the leaf name's prefix.
    pub kind: EventKind,
    /// True when TAU throttled the timer (`[THROTTLED]` suffix): its numbers stop early.
    pub throttled: bool,
}

/// An optional [`EventId`] in 4 bytes (`Option<EventId>` takes 8): `u32::MAX` is none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct EventLink(u32);

impl EventLink {
    const NONE: Self = Self(u32::MAX);

    fn new(e: Option<EventId>) -> Self {
        // An id equals the sentinel only in a profile of 2^32 - 1 events or more (128 GiB of
        // events alone), where `EventId::from` already saturates: not one that fits in memory.
        e.map_or(Self::NONE, |e| Self(e.0))
    }

    fn get(self) -> Option<EventId> {
        (self != Self::NONE).then_some(EventId(self.0))
    }
}

impl Event {
    /// A new event; `frame`, `groups`, `depth`, `parent`, `routine`, `kind` and `throttled`
    /// as the fields and methods of the same names say.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        frame: SharedStr,
        groups: SharedList<GroupId>,
        kind: EventKind,
        throttled: bool,
        depth: u32,
        parent: Option<EventId>,
        routine: Option<EventId>,
    ) -> Self {
        Self {
            frame,
            groups,
            depth,
            parent: EventLink::new(parent),
            routine: EventLink::new(routine),
            kind,
            throttled,
        }
    }

    /// True for `a => b` events.
    pub fn is_callpath(&self) -> bool {
        self.depth > 1
    }

    /// The last frame of the name: the routine the event measures.
    pub fn leaf(&self) -> &str {
        callpath_leaf(&self.frame)
    }

    /// For a callpath event, its parent call-tree node: the event named by the path without
    /// its last frame, when the profile has it. `None` for flat events and for paths cut by
    /// TAU_CALLPATH_DEPTH (whose [`Event::frame`] is then the whole path).
    pub fn parent(&self) -> Option<EventId> {
        self.parent.get()
    }

    /// For a callpath event, the flat event of its last frame when the profile has it; for a
    /// flat event, itself.
    pub fn routine(&self) -> Option<EventId> {
        self.routine.get()
    }

    /// The source location written in the leaf name ([`SourceRef::parse_from_name`] of
    /// [`Event::leaf`]), if it has one, borrowing the file from the name. Parsed on each call
    /// (one search for `[{` in a name without one), not stored: a call tree of 10^6 nodes
    /// would pay for it in every node.
    pub fn source(&self) -> Option<SourceRef<'_>> {
        SourceRef::parse_from_name(self.leaf())
    }

    pub(crate) fn set_parent(&mut self, parent: Option<EventId>) {
        self.parent = EventLink::new(parent);
    }

    pub(crate) fn set_routine(&mut self, routine: Option<EventId>) {
        self.routine = EventLink::new(routine);
    }
}

/// One user (atomic) event: a quantity sampled at points of the program (message sizes,
/// memory use), summarized per thread by count, min, max, mean and sum of squares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AtomicEvent {
    /// Name as ParaProf shows it (runs of spaces collapsed, see [`normalize_user_event_name`]).
    pub name: String,
    /// For a context event `name : a => b`, the interval event whose callpath it was
    /// recorded in (TAU writes the path without the `.TAU application` root). `None` when the
    /// profile has no such event (e.g. a flat profile: the path is then only in
    /// [`AtomicEvent::context_path`]).
    pub context: Option<EventId>,
    /// For a context event, the callpath text after ` : `, normalized like timer names.
    pub context_path: Option<String>,
    /// For a context event, the plain user event of the same base name, if the profile has it.
    pub base: Option<AtomicEventId>,
    /// For a context event, the base name (the part before ` : `).
    pub base_name: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_keep_every_id_but_the_sentinel_and_none() {
        for e in [
            None,
            Some(EventId(0)),
            Some(EventId(7)),
            Some(EventId(u32::MAX - 1)),
        ] {
            assert_eq!(EventLink::new(e).get(), e);
        }
    }

    #[test]
    fn the_source_is_the_leaf_names() {
        let mut frames = crate::shared::Shared::default();
        let ev = Event::new(
            frames.frame("main => int foo(int) C [{foo.c} {3,1}-{7,1}]"),
            frames.groups(&[]),
            EventKind::Timer,
            false,
            1,
            None,
            None,
        );
        let src = ev.source().unwrap();
        assert_eq!(
            (src.file, src.line, src.column, src.end_line, src.end_column),
            ("foo.c", 3, Some(1), Some(7), Some(1))
        );
        assert_eq!(
            src.to_owned(),
            SourceLocation::parse_from_name("int foo(int) C [{foo.c} {3,1}-{7,1}]").unwrap()
        );
        assert_eq!(
            serde_json::to_value(src).unwrap(),
            serde_json::to_value(src.to_owned()).unwrap()
        );
    }

    #[test]
    fn normalizes_callpath_spacing_like_paraprof() {
        assert_eq!(normalize_timer_name("MPI_Init()  "), "MPI_Init()");
        assert_eq!(
            normalize_timer_name(".TAU application => MPI_Finalize()   => MPI_Info_create()"),
            ".TAU application => MPI_Finalize() => MPI_Info_create()"
        );
        assert_eq!(
            normalize_timer_name(
                ".TAU application  => [CONTEXT] .TAU application  => [SAMPLE] f [{a.c} {12}]"
            ),
            ".TAU application => [CONTEXT] .TAU application => [SAMPLE] f [{a.c} {12}]"
        );
        assert_eq!(normalize_timer_name("a=>b"), "a => b");
        assert!(matches!(normalize_timer_name("a => b => c"), Cow::Borrowed(_)));
    }

    /// The canonical-name test as it was written first (split at `" => "`, check each frame):
    /// the oracle of the one-pass [`is_canonical_path`].
    fn canonical_by_split(s: &str) -> bool {
        !s.contains("=>")
            || s.split(CALLPATH_SEPARATOR)
                .all(|f| !f.is_empty() && f.trim() == f && !f.contains("=>"))
    }

    #[test]
    fn the_one_pass_canonical_test_equals_splitting() {
        for s in [
            "",
            "a",
            "a => b",
            "a => b => c",
            "a=>b",
            "a  => b",
            "a =>  b",
            " => b",
            "a => ",
            "a => => b",
            "a =>> b",
            "a ==> b",
            "=>",
            " => ",
            "a => b=>c",
            "a =>\tb",
            "a\u{a0}=> b",
            "a => \u{a0}b",
            "f(x >= 0) => g",
            "a => b >= c",
        ] {
            let s = s.trim();
            assert_eq!(is_canonical_path(s), canonical_by_split(s), "{s:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_one_pass_canonical_test_equals_splitting_on_any_text(
            s in "[ab =>\t\u{a0}]{0,24}"
        ) {
            let s = s.trim();
            proptest::prop_assert_eq!(is_canonical_path(s), canonical_by_split(s), "{:?}", s);
        }
    }

    #[test]
    fn user_event_names_collapse_runs() {
        assert_eq!(
            normalize_user_event_name("Msg : f() [{a.cpp} {1,1}-{2,1}]   => MPI_Bcast()  "),
            "Msg : f() [{a.cpp} {1,1}-{2,1}] => MPI_Bcast()"
        );
    }

    #[test]
    fn parses_every_source_location_form() {
        let l = SourceLocation::parse_from_name("int foo(int) C [{foo.c} {3,1}-{7,1}]").unwrap();
        assert_eq!(
            (l.file.as_str(), l.line, l.column, l.end_line, l.end_column),
            ("foo.c", 3, Some(1), Some(7), Some(1))
        );
        let l = SourceLocation::parse_from_name("[SAMPLE] compute [{/x/matmult.c} {99}]").unwrap();
        assert_eq!(
            (l.file.as_str(), l.line, l.column, l.end_line),
            ("/x/matmult.c", 99, None, None)
        );
        let l = SourceLocation::parse_from_name("f [{/p/s.c} {275,0}]").unwrap();
        assert_eq!((l.line, l.column), (275, Some(0)));
        let l = SourceLocation::parse_from_name("[PTHREAD] addr=<0x7f> [{(unknown)} {0, 0}]").unwrap();
        assert_eq!((l.file.as_str(), l.line, l.column), ("(unknown)", 0, Some(0)));
        let l = SourceLocation::parse_from_name("int w(int) C [{wb.c} {5,1}-{11,1}]   [ <size> = <100> ]")
            .unwrap();
        assert_eq!((l.file.as_str(), l.line), ("wb.c", 5));
        assert!(SourceLocation::parse_from_name("MPI_Init()").is_none());
        assert!(SourceLocation::parse_from_name("f [{a.c} {x}]").is_none());
        assert!(SourceLocation::parse_from_name("f [{a.c}]").is_none());
    }

    #[test]
    fn classifies_and_strips() {
        assert_eq!(EventKind::of_leaf("[SAMPLE] f [{a} {1}]"), EventKind::Sample);
        assert_eq!(
            EventKind::of_leaf("[CONTEXT] .TAU application"),
            EventKind::SampleContext
        );
        assert_eq!(EventKind::of_leaf("[INTERMEDIATE] g"), EventKind::Intermediate);
        assert_eq!(EventKind::of_leaf("MPI_Send()"), EventKind::Timer);
        assert_eq!(
            routine_name("int foo(int) C [{foo.c} {3,1}-{7,1}]"),
            "int foo(int)"
        );
        assert_eq!(
            routine_name("double U() [{R.cpp} {98,1}-{166,1}] [THROTTLED]"),
            "double U()"
        );
        assert_eq!(routine_name("MPI_Init()"), "MPI_Init()");
        assert_eq!(callpath_leaf("a => b => c"), "c");
        assert_eq!(callpath_parent("a => b => c"), Some("a => b"));
        assert_eq!(callpath_parent("a"), None);
        for name in [
            "a",
            "",
            "a => b => c",
            " => ",
            "a => => b",
            "x =>y => z",
            "a => b => ",
        ] {
            assert_eq!(callpath_depth(name), callpath_frames(name).count(), "{name:?}");
        }
        assert_eq!(callpath_depth("a => b => c"), 3);
    }
}
