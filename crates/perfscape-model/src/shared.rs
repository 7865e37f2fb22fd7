//! [`Shared`]: one copy of each distinct frame text and group list of a profile's events.
//!
//! A call tree of 10^6 nodes has 10^3–10^4 distinct frames (functions) and a few distinct
//! group lists; each [`crate::Event`] points to the shared copy ([`std::sync::Arc`]), so a node
//! costs 16 bytes for its frame instead of a heap block of its own.

use crate::ids::GroupId;
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::ops::Deref;
use std::sync::Arc;

/// Frame texts of this many bytes or more are kept once ([`Shared`]'s `long_frames`), shorter
/// ones with a copy as their key.
const LONG_FRAME: usize = 128;

/// Interner of frame texts and group lists (see the module documentation). With each frame
/// text it keeps `F`, what its user derives from the text once (the builder: what an event
/// takes from its frame); `()` for none.
#[derive(Debug)]
pub(crate) struct Shared<F = ()> {
    /// Texts shorter than [`LONG_FRAME`], keyed by a copy of the text: found without going
    /// through the shared copy (a call tree's frames are looked up once per node).
    frames: HashMap<Box<str>, (SharedStr, F)>,
    /// Texts of [`LONG_FRAME`] bytes or more, keyed by the shared copy itself, looked up by
    /// `&str` ([`SharedStr`] hashes and compares as its text): one copy of each. A TAU
    /// callpath that comes before its parent is interned by its whole name until the builder
    /// links it, so there can be many long texts here.
    long_frames: HashMap<SharedStr, F>,
    group_lists: HashMap<Box<[GroupId]>, SharedList<GroupId>>,
    /// The empty list (every new event starts with it).
    empty_groups: Option<SharedList<GroupId>>,
}

impl<F> Default for Shared<F> {
    fn default() -> Self {
        Self {
            frames: HashMap::default(),
            long_frames: HashMap::default(),
            group_lists: HashMap::default(),
            empty_groups: None,
        }
    }
}

impl Shared {
    /// The shared copy of `frame`.
    pub(crate) fn frame(&mut self, frame: &str) -> SharedStr {
        self.frame_with(frame, |_| ()).0
    }
}

impl<F> Shared<F> {
    /// Forgets the texts of [`LONG_FRAME`] bytes or more (the builder's whole callpath names,
    /// once they are linked); who holds them keeps them.
    pub(crate) fn forget_long_frames(&mut self) {
        self.long_frames = HashMap::default();
    }
}

impl<F: Copy> Shared<F> {
    /// The shared copy of `frame` and what `derive` gives for it, called only when the text is
    /// new.
    pub(crate) fn frame_with(&mut self, frame: &str, derive: impl FnOnce(&str) -> F) -> (SharedStr, F) {
        if frame.len() >= LONG_FRAME {
            if let Some((f, d)) = self.long_frames.get_key_value(frame) {
                return (f.clone(), *d);
            }
            let f = SharedStr::from(frame);
            let d = derive(frame);
            self.long_frames.insert(f.clone(), d);
            return (f, d);
        }
        if let Some((f, d)) = self.frames.get(frame) {
            return (f.clone(), *d);
        }
        let f = SharedStr::from(frame);
        let d = derive(frame);
        self.frames.insert(Box::from(frame), (f.clone(), d));
        (f, d)
    }

    /// The shared copy of the group list `groups`.
    pub(crate) fn groups(&mut self, groups: &[GroupId]) -> SharedList<GroupId> {
        if groups.is_empty() {
            return self
                .empty_groups
                .get_or_insert_with(|| SharedList::from(Vec::new()))
                .clone();
        }
        if let Some(g) = self.group_lists.get(groups) {
            return g.clone();
        }
        let g = SharedList::from(groups.to_vec());
        self.group_lists.insert(Box::from(groups), g.clone());
        g
    }
}

/// A shared, immutable text one pointer wide (an `Arc<String>`; an `Arc<str>` is two):
/// dereferences to `str`, compares, hashes, prints and serializes as its text (so a map
/// keyed by it is looked up by `&str`: `Hash` and `Eq` agree with `str`'s, as `Borrow`
/// requires). The frame of
/// every [`crate::Event`] (10^6 events of a call tree point to 10^3–10^4 texts).
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedStr(Arc<String>);

impl Deref for SharedStr {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl SharedStr {
    /// The address of the shared copy: equal for two `SharedStr` that share it, different
    /// for any two alive at the same time that do not (a key for what is found once per
    /// shared frame while the events holding them are alive).
    pub(crate) fn address(&self) -> usize {
        Arc::as_ptr(&self.0) as usize
    }
}

impl From<&str> for SharedStr {
    fn from(s: &str) -> Self {
        Self(Arc::new(s.to_string()))
    }
}

impl From<String> for SharedStr {
    fn from(s: String) -> Self {
        Self(Arc::new(s))
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        self
    }
}

impl std::borrow::Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        self
    }
}

impl std::fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl std::fmt::Display for SharedStr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&**self, f)
    }
}

impl Serialize for SharedStr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
    }
}

impl<'de> Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(Self::from)
    }
}

/// A shared, immutable list one pointer wide (an `Arc<Vec<T>>`; an `Arc<[T]>` is two):
/// dereferences to `[T]`, compares, hashes and serializes as its elements. The groups of
/// every [`crate::Event`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct SharedList<T>(Arc<Vec<T>>);

impl<T> Default for SharedList<T> {
    fn default() -> Self {
        Self(Arc::new(Vec::new()))
    }
}

impl<T> Deref for SharedList<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> From<Vec<T>> for SharedList<T> {
    fn from(v: Vec<T>) -> Self {
        Self(Arc::new(v))
    }
}

impl<T: Clone> From<&[T]> for SharedList<T> {
    fn from(v: &[T]) -> Self {
        Self(Arc::new(v.to_vec()))
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for SharedList<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl<T: Serialize> Serialize for SharedList<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for SharedList<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<T>::deserialize(d).map(Self::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_text_and_lists_are_one_pointer_and_behave_as_their_contents() {
        assert_eq!(std::mem::size_of::<SharedStr>(), 8);
        assert_eq!(std::mem::size_of::<SharedList<GroupId>>(), 8);
        // What a call-tree node costs in the event array (64 bytes with `Arc<str>` and
        // `Arc<[GroupId]>`, 48 with the source location stored and 8-byte links).
        assert_eq!(std::mem::size_of::<crate::Event>(), 32);
        let mut shared = Shared::default();
        let a = shared.frame("main");
        let b = shared.frame("main");
        assert!(Arc::ptr_eq(&a.0, &b.0), "one copy per distinct text");
        // The frame map is keyed by `SharedStr` and looked up by `&str`: both hash alike.
        use std::hash::BuildHasher;
        let fx = rustc_hash::FxBuildHasher;
        for text in ["", "main", ".TAU application => MPI_Init()  "] {
            assert_eq!(fx.hash_one(SharedStr::from(text)), fx.hash_one(text), "{text:?}");
        }
        assert_eq!((shared.frames.len(), shared.long_frames.len()), (1, 0));
        // A long text (a TAU callpath's whole name) is kept once and found again.
        let long = "main => solve => ".repeat(10) + "MPI_Waitall()";
        let (l1, l2) = (shared.frame(&long), shared.frame(&long));
        assert!(Arc::ptr_eq(&l1.0, &l2.0));
        assert_eq!(&*l1, long);
        assert_eq!((shared.frames.len(), shared.long_frames.len()), (1, 1));
        assert_eq!(&*a, "main");
        assert_eq!(format!("{a} {a:?}"), "main \"main\"");
        let g = shared.groups(&[GroupId(2), GroupId(1)]);
        assert!(Arc::ptr_eq(&g.0, &shared.groups(&[GroupId(2), GroupId(1)]).0));
        assert_eq!(&*g, &[GroupId(2), GroupId(1)][..]);
        assert!(shared.groups(&[]).is_empty());
        // Serialized as the text and the elements.
        assert_eq!(serde_json::to_string(&a).unwrap(), "\"main\"");
        let back: SharedStr = serde_json::from_str("\"f => g\"").unwrap();
        assert_eq!(&*back, "f => g");
        let list: SharedList<u32> = serde_json::from_str("[3,4]").unwrap();
        assert_eq!(&*list, &[3, 4][..]);
    }
}
