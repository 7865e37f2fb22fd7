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
//! A name is reduced only where that is unambiguous: when some run has several events with the
//! same reduced path — TAU's `[SAMPLE] f [{file} {line}]` events (one per source line, the
//! line is their identity) or two static functions `f` in different files — those events are
//! keyed by their exact frame text in every run, so that a line or a file never matches
//! another.

use perfscape_model::event::{CALLPATH_SEPARATOR, routine_name};
use perfscape_model::{EventId, Profile};
use std::collections::{HashMap, HashSet};

/// Identity of a canonical path among the runs given to [`canonical_keys`]: events of
/// different runs with the same key are the same event.
pub type CanonicalKey = u32;

/// The canonical keys of the events of several runs.
#[derive(Clone, Debug)]
pub struct CanonicalKeys {
    /// Per run (in the order given), per event id: its key.
    pub per_run: Vec<Vec<CanonicalKey>>,
    /// Per key: its parent path's key (`None` for a path of one frame).
    pub parents: Vec<Option<CanonicalKey>>,
}

/// Interns paths: (parent path, exact?, frame text) -> key.
#[derive(Default)]
struct Interner<'a> {
    ids: HashMap<(Option<CanonicalKey>, bool, &'a str), CanonicalKey>,
    parents: Vec<Option<CanonicalKey>>,
}

impl<'a> Interner<'a> {
    fn intern(&mut self, parent: Option<CanonicalKey>, exact: bool, text: &'a str) -> CanonicalKey {
        let next = self.parents.len() as CanonicalKey;
        let id = *self.ids.entry((parent, exact, text)).or_insert(next);
        if id == next {
            self.parents.push(parent);
        }
        id
    }

    /// The path of `frame` below `parent`: reduced to routine names frame by frame (a path cut
    /// by TAU_CALLPATH_DEPTH holds several), or, `exact`, the frame's text as one step.
    fn intern_frame(&mut self, parent: Option<CanonicalKey>, frame: &'a str, exact: bool) -> CanonicalKey {
        if exact {
            return self.intern(parent, true, frame.trim());
        }
        let mut key = parent;
        for f in frame.split(CALLPATH_SEPARATOR) {
            key = Some(self.intern(key, false, routine_name(f)));
        }
        // `split` yields at least one piece, so `key` is set.
        key.unwrap_or_else(|| self.intern(parent, true, frame))
    }
}

/// The canonical keys of every event of each run of `runs`, in one key space: an event of
/// run i and an event of run j are the same event when their keys are equal.
///
/// Cost: two passes over each run's events (parents resolved once each, iteratively).
pub fn canonical_keys(runs: &[&Profile]) -> CanonicalKeys {
    // Pass 1: reduced paths, and which of them some run has more than once.
    let mut reduced = Interner::default();
    let mut ambiguous: HashSet<CanonicalKey> = HashSet::new();
    for p in runs {
        let keys = run_keys(p, |parent, e| {
            reduced.intern_frame(parent, &p.event(e).frame, false)
        });
        let mut seen: HashSet<CanonicalKey> = HashSet::with_capacity(keys.len());
        for k in keys {
            if !seen.insert(k) {
                ambiguous.insert(k);
            }
        }
    }
    // Pass 2: the keys, exact where the reduced path is ambiguous.
    let mut keys = Interner::default();
    let mut per_run = Vec::with_capacity(runs.len());
    for p in runs {
        let mut reduced_parent: Vec<Option<CanonicalKey>> = vec![None; p.events().len()];
        let run = run_keys(p, |parent, e| {
            let ev = p.event(e);
            let r_parent = ev.parent().and_then(|q| reduced_parent[q.index()]);
            let r = reduced.intern_frame(r_parent, &ev.frame, false);
            reduced_parent[e.index()] = Some(r);
            keys.intern_frame(parent, &ev.frame, ambiguous.contains(&r))
        });
        per_run.push(run);
    }
    CanonicalKeys {
        per_run,
        parents: keys.parents,
    }
}

/// One event of several runs (see [`events_across`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventAcross {
    /// Per run, in the order given: the event's id there (`None` when the run lacks it).
    pub events: Vec<Option<EventId>>,
    /// Its name, from the first run that has it.
    pub name: String,
    /// Whether it is a callpath event.
    pub callpath: bool,
}

/// The events of `runs` matched across them by [`canonical_keys`], in the order first seen
/// (run by run, event id order); callpath events only with `include_callpaths`.
pub fn events_across(runs: &[&Profile], include_callpaths: bool) -> Vec<EventAcross> {
    let keys = canonical_keys(runs);
    let mut row_of: HashMap<CanonicalKey, usize> = HashMap::new();
    let mut rows: Vec<EventAcross> = Vec::new();
    for (r, p) in runs.iter().enumerate() {
        for e in p
            .event_ids()
            .filter(|&e| include_callpaths || !p.event(e).is_callpath())
        {
            let i = *row_of.entry(keys.per_run[r][e.index()]).or_insert_with(|| {
                rows.push(EventAcross {
                    events: vec![None; runs.len()],
                    name: p.event_name(e),
                    callpath: p.event(e).is_callpath(),
                });
                rows.len() - 1
            });
            rows[i].events[r] = Some(e);
        }
    }
    rows
}

/// The key of every event of `p`, `key(parent's key, event)` called parents before children.
fn run_keys(
    p: &Profile,
    mut key: impl FnMut(Option<CanonicalKey>, EventId) -> CanonicalKey,
) -> Vec<CanonicalKey> {
    const UNSET: CanonicalKey = CanonicalKey::MAX;
    let mut keys = vec![UNSET; p.events().len()];
    let mut chain: Vec<EventId> = Vec::new();
    for e in p.event_ids() {
        if keys[e.index()] != UNSET {
            continue;
        }
        // Walk up to the first ancestor already keyed (or a root), then key downwards.
        chain.clear();
        let mut cur = Some(e);
        while let Some(c) = cur {
            if keys[c.index()] != UNSET {
                break;
            }
            chain.push(c);
            cur = p.event(c).parent();
        }
        let mut parent_key = cur.map(|c| keys[c.index()]);
        for &c in chain.iter().rev() {
            let k = key(parent_key, c);
            keys[c.index()] = k;
            parent_key = Some(k);
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
        assert_ne!(key(&k, 0, &a, "main"), key(&k, 0, &a, "main => MPI_Send()"));
    }

    #[test]
    fn cut_paths_stay_apart_and_ambiguous_names_match_exactly() {
        // `b => c` has no `b` event: a path cut by TAU_CALLPATH_DEPTH, frame "b => c".
        let a = run(&["a", "a => b", "a => b => c"]);
        let b = run(&[
            "b => c",
            "f [{x.c} {1}]",
            "f [{y.c} {5}]",
            "[SAMPLE] k [{k.c} {10}]",
            "[SAMPLE] k [{k.c} {11}]",
        ]);
        let c = run(&["f [{y.c} {5}]", "[SAMPLE] k [{k.c} {11}]", "g [{g.c} {1}]"]);
        let d = run(&["g [{g.c} {2}]"]);
        let k = canonical_keys(&[&a, &b, &c, &d]);
        let cut = key(&k, 1, &b, "b => c");
        assert_ne!(
            cut,
            key(&k, 0, &a, "a => b => c"),
            "a cut path is not the whole path"
        );
        assert_eq!(k.parents[cut as usize].map(|p| k.parents[p as usize]), Some(None));
        // Two `f` in run B: each matches only itself; run C's `f` is B's second one.
        assert_ne!(key(&k, 1, &b, "f [{x.c} {1}]"), key(&k, 1, &b, "f [{y.c} {5}]"));
        assert_eq!(key(&k, 2, &c, "f [{y.c} {5}]"), key(&k, 1, &b, "f [{y.c} {5}]"));
        // Sample lines match line by line.
        assert_eq!(
            key(&k, 2, &c, "[SAMPLE] k [{k.c} {11}]"),
            key(&k, 1, &b, "[SAMPLE] k [{k.c} {11}]")
        );
        assert_ne!(
            key(&k, 1, &b, "[SAMPLE] k [{k.c} {10}]"),
            key(&k, 1, &b, "[SAMPLE] k [{k.c} {11}]")
        );
        // Unambiguous in every run: `g` at another line is still `g`.
        assert_eq!(key(&k, 2, &c, "g [{g.c} {1}]"), key(&k, 3, &d, "g [{g.c} {2}]"));
    }
}
