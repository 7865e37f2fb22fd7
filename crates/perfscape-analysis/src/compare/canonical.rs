//! Canonical event keys shared by several runs: the identity under which the events of
//! different runs of a program are the same event.
//!
//! An event's canonical path is its callpath with every frame reduced to the routine name
//! ([`perfscape_model::event::routine_name`]: the source location `[{file} {l,c}]`, the PDT
//! ` C ` marker and the `[THROTTLED]` suffix removed), frames joined as ParaProf writes them
//! (`a => b => c`). Two runs built by different compilers or instrumentations (compiler
//! instrumentation `main [{stencil.c} {69,0}]`, PDT `main int (int, char **) C [{..} {..}]`
//! vs a plain `main`) thus share the routines they have in common.
//!
//! Keys are interned as a tree — (key of the parent path, routine name of the frame) — so
//! that deep call trees (10^5–10^6 contexts) do not build names that grow with the square of
//! their depth. A path cut by TAU_CALLPATH_DEPTH (an event whose frame holds several frames)
//! is interned frame by frame, so it meets the same path of another run wherever it starts.
//!
//! Several events of one run with the same canonical path (two static functions `f` in
//! different files) are told apart by their occurrence: ordered by their own frame text, the
//! first is occurrence 0, the next 1, ...; events of different runs match when path and
//! occurrence are equal.

use perfscape_model::event::{CALLPATH_SEPARATOR, routine_name};
use perfscape_model::{EventId, Profile};
use std::collections::HashMap;

/// Identity of a canonical path among the runs given to [`canonical_keys`].
pub type PathKey = u32;

/// The canonical key of one event: its path and its occurrence among the events of its run
/// with that path (0 for the first, in the order of their own frame text).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CanonicalKey {
    /// The canonical path (see the module documentation).
    pub path: PathKey,
    /// 0 unless the run has several events with this path.
    pub occurrence: u32,
}

/// The canonical keys of the events of several runs.
#[derive(Clone, Debug)]
pub struct CanonicalKeys {
    /// Per run (in the order given), per event id: its key.
    pub per_run: Vec<Vec<CanonicalKey>>,
    /// Per path key: its parent path (`None` for a path of one frame).
    pub parents: Vec<Option<PathKey>>,
}

/// Interns canonical paths: (parent path, routine name) -> key.
struct Interner<'a> {
    ids: HashMap<(Option<PathKey>, &'a str), PathKey>,
    parents: Vec<Option<PathKey>>,
}

impl<'a> Interner<'a> {
    fn intern(&mut self, parent: Option<PathKey>, routine: &'a str) -> PathKey {
        let next = self.parents.len() as PathKey;
        let id = *self.ids.entry((parent, routine)).or_insert(next);
        if id == next {
            self.parents.push(parent);
        }
        id
    }

    /// The path of `frame` (one or more frames) below `parent`.
    fn intern_frames(&mut self, parent: Option<PathKey>, frame: &'a str) -> PathKey {
        let mut key = parent;
        for f in frame.split(CALLPATH_SEPARATOR) {
            key = Some(self.intern(key, routine_name(f)));
        }
        // A frame is never empty (the builder refuses empty names), so `key` is set; the
        // fallback keeps an impossible empty frame a path of its own.
        key.unwrap_or_else(|| self.intern(parent, ""))
    }
}

/// The canonical keys of every event of each run of `runs`, in one key space: an event of
/// run i and an event of run j are the same event when their keys are equal.
///
/// Cost: one pass over each run's events (parents resolved once each, iteratively) plus a
/// sort of the events that share a path.
pub fn canonical_keys(runs: &[&Profile]) -> CanonicalKeys {
    let mut interner = Interner {
        ids: HashMap::new(),
        parents: Vec::new(),
    };
    let mut per_run = Vec::with_capacity(runs.len());
    for p in runs {
        let paths = run_paths(p, &mut interner);
        per_run.push(with_occurrences(p, &paths));
    }
    CanonicalKeys {
        per_run,
        parents: interner.parents,
    }
}

/// The canonical path of every event of `p`, parents before children.
fn run_paths<'a>(p: &'a Profile, interner: &mut Interner<'a>) -> Vec<PathKey> {
    const UNSET: PathKey = PathKey::MAX;
    let mut paths = vec![UNSET; p.events().len()];
    let mut chain: Vec<EventId> = Vec::new();
    for e in p.event_ids() {
        if paths[e.index()] != UNSET {
            continue;
        }
        // Walk up to the first ancestor already keyed (or a root), then key downwards.
        chain.clear();
        let mut cur = Some(e);
        while let Some(c) = cur {
            if paths[c.index()] != UNSET {
                break;
            }
            chain.push(c);
            cur = p.event(c).parent;
        }
        let mut parent_key = cur.map(|c| paths[c.index()]);
        for &c in chain.iter().rev() {
            let k = interner.intern_frames(parent_key, &p.event(c).frame);
            paths[c.index()] = k;
            parent_key = Some(k);
        }
    }
    paths
}

/// Keys with occurrences: events sharing a path numbered in the order of their frame text.
fn with_occurrences(p: &Profile, paths: &[PathKey]) -> Vec<CanonicalKey> {
    let mut keys: Vec<CanonicalKey> = paths
        .iter()
        .map(|&path| CanonicalKey { path, occurrence: 0 })
        .collect();
    let mut seen: HashMap<PathKey, Vec<EventId>> = HashMap::new();
    let mut shared: Vec<PathKey> = Vec::new();
    for e in p.event_ids() {
        let v = seen.entry(paths[e.index()]).or_default();
        v.push(e);
        if v.len() == 2 {
            shared.push(paths[e.index()]);
        }
    }
    for path in shared {
        if let Some(events) = seen.get_mut(&path) {
            events.sort_by(|&x, &y| p.event(x).frame.cmp(&p.event(y).frame).then(x.cmp(&y)));
            for (i, &e) in events.iter().enumerate() {
                keys[e.index()].occurrence = i as u32;
            }
        }
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfscape_model::{Metric, ProfileBuilder, ThreadData, ThreadId};

    fn run(names: &[&str]) -> Profile {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        let mut d = ThreadData::new(1);
        for n in names {
            d.push_timer(n, "TAU_DEFAULT", 1.0, 0.0, &[1.0], &[1.0]).unwrap();
        }
        b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        b.finish().0
    }

    fn key(keys: &CanonicalKeys, run: usize, p: &Profile, name: &str) -> CanonicalKey {
        keys.per_run[run][p.event_by_name(name).unwrap().index()]
    }

    #[test]
    fn source_locations_and_markers_do_not_part_events() {
        let a = run(&["main", "main => MPI_Send()", "solve [THROTTLED]"]);
        let b = run(&[
            "main [{stencil.c} {69,0}]",
            "main [{stencil.c} {69,0}] => MPI_Send()",
            "solve C [{s.c} {3,1}-{9,1}]",
        ]);
        let k = canonical_keys(&[&a, &b]);
        assert_eq!(
            key(&k, 0, &a, "main"),
            key(&k, 1, &b, "main [{stencil.c} {69,0}]")
        );
        assert_eq!(
            key(&k, 0, &a, "main => MPI_Send()"),
            key(&k, 1, &b, "main [{stencil.c} {69,0}] => MPI_Send()")
        );
        assert_eq!(
            key(&k, 0, &a, "solve [THROTTLED]"),
            key(&k, 1, &b, "solve C [{s.c} {3,1}-{9,1}]")
        );
        assert_ne!(
            key(&k, 0, &a, "main").path,
            key(&k, 0, &a, "main => MPI_Send()").path
        );
    }

    #[test]
    fn cut_paths_meet_whole_paths_and_duplicates_get_occurrences() {
        // `b => c` has no `b` event: a path cut by TAU_CALLPATH_DEPTH, frame "b => c".
        let a = run(&["a", "a => b", "a => b => c"]);
        let b = run(&["b => c", "f [{x.c} {1}]", "f [{y.c} {5}]"]);
        let k = canonical_keys(&[&a, &b]);
        let cut = key(&k, 1, &b, "b => c");
        assert_ne!(
            cut,
            key(&k, 0, &a, "a => b => c"),
            "a cut path is not the whole path"
        );
        assert_eq!(
            k.parents[cut.path as usize].map(|p| k.parents[p as usize]),
            Some(None)
        );
        let f1 = key(&k, 1, &b, "f [{x.c} {1}]");
        let f2 = key(&k, 1, &b, "f [{y.c} {5}]");
        assert_eq!(f1.path, f2.path);
        assert_eq!((f1.occurrence, f2.occurrence), (0, 1));
    }
}
