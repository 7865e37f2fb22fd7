//! [`Shared`]: one copy of each distinct frame text and group list of a profile's events.
//!
//! A call tree of 10^6 nodes has 10^3–10^4 distinct frames (functions) and a few distinct
//! group lists; each [`crate::Event`] points to the shared copy ([`std::sync::Arc`]), so a node
//! costs 16 bytes for its frame instead of a heap block of its own.

use crate::ids::GroupId;
use rustc_hash::FxHashSet as HashSet;
use std::sync::Arc;

/// Interner of frame texts and group lists (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct Shared {
    frames: HashSet<Arc<str>>,
    group_lists: HashSet<Arc<[GroupId]>>,
    /// The empty list (every new event starts with it).
    empty_groups: Option<Arc<[GroupId]>>,
}

impl Shared {
    /// The shared copy of `frame`.
    pub(crate) fn frame(&mut self, frame: &str) -> Arc<str> {
        if let Some(f) = self.frames.get(frame) {
            return Arc::clone(f);
        }
        let f: Arc<str> = Arc::from(frame);
        self.frames.insert(Arc::clone(&f));
        f
    }

    /// The shared copy of the group list `groups`.
    pub(crate) fn groups(&mut self, groups: &[GroupId]) -> Arc<[GroupId]> {
        if groups.is_empty() {
            return Arc::clone(self.empty_groups.get_or_insert_with(|| Arc::from(groups)));
        }
        if let Some(g) = self.group_lists.get(groups) {
            return Arc::clone(g);
        }
        let g: Arc<[GroupId]> = Arc::from(groups);
        self.group_lists.insert(Arc::clone(&g));
        g
    }
}
