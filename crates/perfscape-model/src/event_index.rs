//! [`EventIndex`]: finds an interval event by its call-tree key (parent node, own frame) or by
//! its whole callpath name, without storing whole names.
//!
//! Every event is keyed by `(parent, frame)` ([`crate::Event::parent`],
//! [`crate::Event::frame`]); the table holds only event ids and hashes the key from the
//! events themselves, so its size does not depend on name lengths. A whole name
//! `f1 => ... => fn` is resolved as TAU's naming defines it: either an event without parent
//! whose frame is the whole name (a flat event, or a path whose prefix is not in the profile),
//! or the event with frame `fn` under the event named `f1 => ... => fn-1`.

use crate::event::{CALLPATH_SEPARATOR, Event};
use crate::ids::EventId;
use hashbrown::HashTable;
use std::hash::{BuildHasher, Hash, Hasher};

/// Hash table over events keyed by `(parent, frame)`; see the module documentation.
#[derive(Clone, Default)]
pub struct EventIndex {
    table: HashTable<EventId>,
    hasher: rustc_hash::FxBuildHasher,
}

impl std::fmt::Debug for EventIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventIndex")
            .field("len", &self.table.len())
            .finish()
    }
}

/// Two indexes are equal when they hold the same number of events: an index is a function of
/// the events it was built from, which [`crate::Profile`]'s equality compares.
impl PartialEq for EventIndex {
    fn eq(&self, other: &Self) -> bool {
        self.table.len() == other.table.len()
    }
}

/// The hash of the key `(parent, frame)` with `hasher`: what the table is keyed by. It
/// combines the parent with the frame's [`text_hash`], so that a caller interning many nodes
/// of one frame hashes the frame's text once ([`EventIndex::hash_with_text`]).
fn key_hash(hasher: rustc_hash::FxBuildHasher, parent: Option<EventId>, frame: &str) -> u64 {
    key_hash_with_text(hasher, parent, text_hash(hasher, frame))
}

/// [`key_hash`] from the frame's [`text_hash`].
fn key_hash_with_text(hasher: rustc_hash::FxBuildHasher, parent: Option<EventId>, text: u64) -> u64 {
    let mut h = hasher.build_hasher();
    parent.map_or(u32::MAX, |p| p.0).hash(&mut h);
    text.hash(&mut h);
    h.finish()
}

/// The hash of a frame's text alone, the part of [`key_hash`] that depends on the text.
fn text_hash(hasher: rustc_hash::FxBuildHasher, frame: &str) -> u64 {
    hasher.hash_one(frame)
}

impl EventIndex {
    /// The hash of the key `(parent, frame)`, for [`EventIndex::get_hashed`] and
    /// [`EventIndex::insert_absent_hashed`] (one hash of the frame for a lookup and the insert
    /// after it).
    pub(crate) fn hash(&self, parent: Option<EventId>, frame: &str) -> u64 {
        key_hash(self.hasher, parent, frame)
    }

    /// The hash of a frame's text, from which [`EventIndex::hash_with_text`] gives the hash
    /// of any key with that frame.
    pub(crate) fn text_hash(&self, frame: &str) -> u64 {
        text_hash(self.hasher, frame)
    }

    /// [`EventIndex::hash`] of `(parent, frame)` from the frame's
    /// [`EventIndex::text_hash`]: equal to `hash(parent, frame)`.
    pub(crate) fn hash_with_text(&self, parent: Option<EventId>, text_hash: u64) -> u64 {
        key_hash_with_text(self.hasher, parent, text_hash)
    }

    /// An index of `events`. When two events share a key (which readers avoid), the first is
    /// found.
    pub fn build(events: &[Event]) -> Self {
        let mut index = Self::default();
        index.table.reserve(events.len(), |_| 0);
        for i in 0..events.len() {
            index.insert(events, EventId::from(i));
        }
        index
    }

    /// Adds event `id` (which must be in `events`) under its current key, unless an event
    /// with that key is already indexed.
    pub fn insert(&mut self, events: &[Event], id: EventId) {
        let e = &events[id.index()];
        if self.get(events, e.parent(), &e.frame).is_some() {
            return;
        }
        self.insert_absent(events, id);
    }

    /// Room for `additional` more events without growing the table (a growth re-hashes
    /// every indexed event's frame).
    pub fn reserve(&mut self, events: &[Event], additional: usize) {
        let hasher = self.hasher;
        self.table
            .reserve(additional, |&x| Self::hash_event(hasher, &events[x.index()]));
    }

    fn hash_event(hasher: rustc_hash::FxBuildHasher, e: &Event) -> u64 {
        key_hash(hasher, e.parent(), &e.frame)
    }

    /// Adds event `id` (which must be in `events`) under its current key, which the caller
    /// knows no indexed event has (it just looked it up): one lookup fewer than
    /// [`EventIndex::insert`]. Given a key already indexed, [`EventIndex::get`] finds either.
    pub(crate) fn insert_absent(&mut self, events: &[Event], id: EventId) {
        let e = &events[id.index()];
        let hash = self.hash(e.parent(), &e.frame);
        self.insert_absent_hashed(events, id, hash);
    }

    /// [`EventIndex::insert_absent`] given the key's [`EventIndex::hash`].
    pub(crate) fn insert_absent_hashed(&mut self, events: &[Event], id: EventId, hash: u64) {
        let hasher = self.hasher;
        self.table
            .insert_unique(hash, id, |&x| Self::hash_event(hasher, &events[x.index()]));
    }

    /// Number of indexed events.
    pub fn len(&self) -> usize {
        self.table.len()
    }

    /// The event with that parent and frame (exact, normalized text).
    pub fn get(&self, events: &[Event], parent: Option<EventId>, frame: &str) -> Option<EventId> {
        self.get_hashed(events, parent, frame, self.hash(parent, frame))
    }

    /// [`EventIndex::get`] given the key's [`EventIndex::hash`].
    pub(crate) fn get_hashed(
        &self,
        events: &[Event],
        parent: Option<EventId>,
        frame: &str,
        hash: u64,
    ) -> Option<EventId> {
        self.table
            .find(hash, |&x| {
                let e = &events[x.index()];
                // The same shared text (a call tree's nodes of one frame) needs no comparison.
                let own: &str = &e.frame;
                e.parent() == parent
                    && ((own.as_ptr() == frame.as_ptr() && own.len() == frame.len()) || own == frame)
            })
            .copied()
    }

    /// The event whose whole name is `name` (normalized: frames joined by `" => "`).
    ///
    /// Tries the whole name as an event without parent, then the last frame under the
    /// resolved prefix, and so on down the path: O(depth) lookups.
    pub fn resolve(&self, events: &[Event], name: &str) -> Option<EventId> {
        if let Some(e) = self.get(events, None, name) {
            return Some(e);
        }
        let cut = name.rfind(CALLPATH_SEPARATOR)?;
        let parent = self.resolve(events, &name[..cut])?;
        self.get(events, Some(parent), &name[cut + CALLPATH_SEPARATOR.len()..])
    }
}

/// Appends the whole name of event `e` (its ancestors' frames and its own, joined by
/// `" => "`) to `out`.
pub(crate) fn write_name(events: &[Event], e: EventId, out: &mut String) {
    let mut chain = Vec::new();
    let mut at = Some(e);
    while let Some(x) = at {
        chain.push(x);
        at = events[x.index()].parent();
        if chain.len() > events.len() {
            break; // a cycle (only in corrupt input): stop rather than loop
        }
    }
    for (i, x) in chain.iter().rev().enumerate() {
        if i > 0 {
            out.push_str(CALLPATH_SEPARATOR);
        }
        out.push_str(&events[x.index()].frame);
    }
}
