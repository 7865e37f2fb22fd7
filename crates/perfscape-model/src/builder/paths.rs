//! Interning events by whole name (TAU's `a => b => c` callpaths) as call-tree nodes while
//! a [`ProfileBuilder`] reads: a callpath whose parent path is an event already is made
//! the node (parent, last frame) at once, so that the builder never keeps a copy of its
//! whole name; only a callpath that comes before its parent (or whose path TAU cut at
//! `TAU_CALLPATH_DEPTH`) is kept by whole name until [`ProfileBuilder::finish`] links it.
//!
//! The parent path is found from the frames it shares with the last path looked up
//! ([`PathCache`]): TAU writes a callpath after its parent and next to its siblings, so
//! most lines need one lookup, of their last frame, not one per frame of their path.

use super::ProfileBuilder;
use crate::event::{CALLPATH_SEPARATOR, callpath_depth};
use crate::ids::EventId;

/// The last path [`ProfileBuilder::resolve_path`] looked up, and events of its prefixes that
/// end at a frame's end: `chain[k] = (end, e)`, `e` the event named `name[..end]`, ends
/// ascending (the prefix of each frame, up to the first that is not a node of such a chain).
/// An event's name never changes while the builder reads (only `finish` links), so an entry
/// stays true.
#[derive(Debug, Default)]
pub(super) struct PathCache {
    name: String,
    chain: Vec<(usize, EventId)>,
}

impl ProfileBuilder {
    /// Interns an already normalized event name: the event of that name (an event without
    /// parent of that whole name, or the call-tree node the name resolves to), else a new
    /// event: for a callpath whose parent path is a chain of nodes
    /// ([`ProfileBuilder::resolve_path`]), the node (that event, last frame); otherwise an
    /// event keyed by the whole name, which [`ProfileBuilder::finish`] links to its parent
    /// when the profile has one by then.
    ///
    /// The same events, with the same ids, as interning every name whole and linking the
    /// callpaths at the end (TAU's naming: the event named `f1 => ... => fn` is the frame
    /// `fn` under the event named `f1 => ... => fn-1`, or an event of that whole name).
    pub(super) fn intern_event(&mut self, name: &str, raw_groups: &str) -> EventId {
        let id = match name.rfind(CALLPATH_SEPARATOR) {
            None => self.intern_root(name, 1),
            Some(cut) => {
                // Only while callpaths wait to be linked can one be this name's event, or an
                // ancestor of it.
                let waiting = !self.named_callpaths.is_empty();
                match self.resolve_path(&name[..cut]) {
                    Some(p) => match waiting
                        .then(|| self.event_index.get(&self.events, None, name))
                        .flatten()
                    {
                        Some(id) => id,
                        None => {
                            let id = self.intern_child(p, &name[cut + CALLPATH_SEPARATOR.len()..]);
                            // The next line is often this one's child: its parent is here.
                            self.path_cache.name.push_str(&name[cut..]);
                            self.path_cache.chain.push((name.len(), id));
                            id
                        }
                    },
                    // The name waits by whole name, or is a node below a waiting callpath (a
                    // call-tree reader's, under an event it found by name): found as the
                    // index resolves names.
                    None => match waiting
                        .then(|| self.event_index.resolve(&self.events, name))
                        .flatten()
                    {
                        Some(id) => id,
                        None => self.push_waiting(name),
                    },
                }
            }
        };
        self.add_groups(id, raw_groups);
        id
    }

    /// A new event keyed by the callpath `name` whole, to link in `finish`: the caller found
    /// no event of that name.
    fn push_waiting(&mut self, name: &str) -> EventId {
        let depth = u32::try_from(callpath_depth(name)).unwrap_or(u32::MAX);
        let hash = self.event_index.hash(None, name);
        let id = self.push_event(None, name, depth, hash);
        self.named_callpaths.push(id);
        id
    }

    /// The event without parent whose frame is `name`, made (with depth `depth`) if there is
    /// none.
    fn intern_root(&mut self, name: &str, depth: u32) -> EventId {
        let hash = self.event_index.hash(None, name);
        match self.event_index.get_hashed(&self.events, None, name, hash) {
            Some(id) => id,
            None => self.push_event(None, name, depth, hash),
        }
    }

    /// The node with frame `frame` under `parent`, made if there is none.
    fn intern_child(&mut self, parent: EventId, frame: &str) -> EventId {
        let hash = self.event_index.hash(Some(parent), frame);
        match self
            .event_index
            .get_hashed(&self.events, Some(parent), frame, hash)
        {
            Some(id) => id,
            None => {
                let depth = self.events[parent.index()].depth.saturating_add(1);
                self.push_event(Some(parent), frame, depth, hash)
            }
        }
    }

    /// The event named `path` (normalized) when it is a call-tree node whose ancestors are
    /// all nodes too, from a root event of one frame: found frame by frame, from the frames it
    /// shares with the last path looked up. `None` when a prefix is no such event, even when
    /// it is a callpath waiting (by whole name) to be linked: a callpath below it then waits
    /// too, and `finish` links both as it would have linked this one. Leaves `path` in the
    /// cache with the events of its frames up to the first that is not one.
    pub(super) fn resolve_path(&mut self, path: &str) -> Option<EventId> {
        let mut cache = std::mem::take(&mut self.path_cache);
        let b = path.as_bytes();
        let common = cache
            .name
            .bytes()
            .zip(b)
            .position(|(x, &y)| x != y)
            .unwrap_or(cache.name.len().min(b.len()));
        // The cached prefixes that are prefixes of `path` ending at one of its frames' ends.
        let keep = cache
            .chain
            .iter()
            .take_while(|&&(end, _)| {
                end <= common && (end == b.len() || b[end..].starts_with(CALLPATH_SEPARATOR.as_bytes()))
            })
            .count();
        cache.chain.truncate(keep);
        cache.name.clear();
        cache.name.push_str(path);
        let (mut at, mut parent) = match cache.chain.last() {
            Some(&(end, e)) => (end + CALLPATH_SEPARATOR.len(), Some(e)),
            None => (0, None),
        };
        while at < b.len() {
            let end = path[at..].find(CALLPATH_SEPARATOR).map_or(path.len(), |i| at + i);
            match self.event_index.get(&self.events, parent, &path[at..end]) {
                Some(e) => cache.chain.push((end, e)),
                None => {
                    parent = None;
                    break;
                }
            }
            parent = cache.chain.last().map(|&(_, e)| e);
            at = end + CALLPATH_SEPARATOR.len();
        }
        self.path_cache = cache;
        parent
    }

    /// Whether event `e`'s whole name is `name` (normalized): its frame and its ancestors'
    /// frames, compared from the end, with no lookup.
    pub(super) fn is_named(&self, e: EventId, name: &str) -> bool {
        let mut rest = name;
        let mut at = e;
        // At most one step per event (a parent comes before its child while reading).
        for _ in 0..=self.events.len() {
            let ev = &self.events[at.index()];
            match ev.parent() {
                None => return *ev.frame == *rest,
                Some(p) => {
                    let Some(head) = rest
                        .strip_suffix(&*ev.frame)
                        .and_then(|h| h.strip_suffix(CALLPATH_SEPARATOR))
                    else {
                        return false;
                    };
                    rest = head;
                    at = p;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use crate::ids::ThreadId;
    use crate::{Metric, ProfileBuilder, ThreadData};
    use proptest::prelude::*;

    /// Callpath names of up to 4 frames over 4 routines (so that paths share prefixes and
    /// leaves, and one routine's name is the start of another's), as frame indices.
    fn paths() -> impl Strategy<Value = Vec<Vec<u8>>> {
        proptest::collection::vec(proptest::collection::vec(0u8..4, 1..=4), 1..24)
    }

    fn name(frames: &[u8]) -> String {
        let routines = ["main", "solve", "solve_x", "MPI_Send()"];
        frames
            .iter()
            .map(|&f| routines[f as usize])
            .collect::<Vec<_>>()
            .join(" => ")
    }

    #[test]
    fn a_node_under_a_waiting_callpath_is_found_by_its_name() {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        // `x => y` waits for `x`, which comes later; a call-tree reader puts `z` under it.
        let xy = b.declare_event("x => y", "");
        let z = b.intern_node(Some(xy), "z", "");
        let x = b.declare_event("x", "");
        let mut d = ThreadData::new(1);
        d.push_timer("x => y => z", "", 1.0, 0.0, &[2.0], &[2.0]).unwrap();
        d.push_timer("x => y", "", 1.0, 1.0, &[1.0], &[3.0]).unwrap();
        b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        let (p, _) = b.finish();
        assert_eq!(p.events().len(), 3);
        assert_eq!(p.event_by_name("x => y => z"), Some(z));
        assert_eq!(p.event(z).parent(), Some(xy));
        assert_eq!(p.event(xy).parent(), Some(x));
        assert_eq!(p.interval(z).len(), 1);
    }

    proptest! {
        /// Names interned in any order, over two threads, give TAU's naming: one event per
        /// distinct name, numbered in order of first appearance; a callpath's parent is the
        /// event named by its path without the last frame when the run has one (a path cut
        /// by `TAU_CALLPATH_DEPTH` keeps its whole name and is a root).
        #[test]
        fn names_in_any_order_are_tau_callpaths(first in paths(), second in paths()) {
            let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
            let mut order: Vec<String> = Vec::new();
            // Per name, the threads that list it.
            let mut cells = std::collections::HashMap::<String, usize>::new();
            for (t, list) in [first, second].iter().enumerate() {
                let mut d = ThreadData::new(1);
                let mut seen = std::collections::HashSet::new();
                for frames in list {
                    let n = name(frames);
                    if seen.insert(n.clone()) {
                        *cells.entry(n.clone()).or_default() += 1;
                        d.push_timer(&n, "", 1.0, 0.0, &[1.0], &[1.0]).unwrap();
                        if !order.contains(&n) {
                            order.push(n);
                        }
                    }
                }
                b.add_thread(ThreadId::new(t as u32, 0, 0), d).unwrap();
            }
            let (p, _) = b.finish();
            prop_assert_eq!(p.events().len(), order.len());
            for (i, n) in order.iter().enumerate() {
                let e = p.event_by_name(n);
                prop_assert_eq!(e.map(|e| e.index()), Some(i), "{}", n);
                let e = e.unwrap();
                prop_assert_eq!(&p.event_name(e), n);
                let ev = p.event(e);
                prop_assert_eq!(ev.depth as usize, n.split(" => ").count());
                match n.rsplit_once(" => ") {
                    Some((parent, leaf)) if order.contains(&parent.to_string()) => {
                        prop_assert_eq!(ev.parent(), p.event_by_name(parent));
                        prop_assert_eq!(&*ev.frame, leaf);
                    }
                    _ => {
                        prop_assert_eq!(ev.parent(), None);
                        prop_assert_eq!(&*ev.frame, n.as_str());
                    }
                }
                prop_assert_eq!(p.interval(e).len(), cells[n], "{}", n);
            }
        }
    }
}
