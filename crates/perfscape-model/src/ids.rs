//! Typed handles into the tables of a [`crate::Profile`].
//!
//! Every table of the model is addressed by a small newtype index (as in samply's
//! `fxprof-processed-profile`), so a thread index can never be used where an event
//! index is expected.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The address of one thread of execution as TAU and ParaProf name it: `node.context.thread`.
///
/// For MPI programs `node` is the rank, `context` is almost always 0 and `thread` is the
/// thread within the rank. Ordering is numeric on (node, context, thread), so `0.0.2`
/// sorts before `0.0.10` (file names are not zero padded).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ThreadId {
    /// Node (MPI rank / process).
    pub node: u32,
    /// Context within the node (usually 0).
    pub context: u32,
    /// Thread within the context.
    pub thread: u32,
}

impl ThreadId {
    /// Builds a thread address from its three parts.
    pub const fn new(node: u32, context: u32, thread: u32) -> Self {
        Self {
            node,
            context,
            thread,
        }
    }
}

impl fmt::Display for ThreadId {
    /// Writes `N.C.T`, the form ParaProf and the TAU file names use.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.node, self.context, self.thread)
    }
}

/// Error returned when a string is not of the form `N.C.T` (three unsigned integers).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a thread address of the form N.C.T (three unsigned integers)")]
pub struct ParseThreadIdError(pub String);

impl FromStr for ThreadId {
    type Err = ParseThreadIdError;

    /// Parses `N.C.T`, e.g. `3.0.12`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let mut parts = s.split('.');
        let mut next = || -> Result<u32, ParseThreadIdError> {
            parts
                .next()
                .and_then(|p| p.parse::<u32>().ok())
                .ok_or_else(|| ParseThreadIdError(s.to_string()))
        };
        let id = ThreadId::new(next()?, next()?, next()?);
        if parts.next().is_some() {
            return Err(ParseThreadIdError(s.to_string()));
        }
        Ok(id)
    }
}

macro_rules! index_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub u32);

        impl $name {
            /// The index as a `usize`, for indexing the table it points into.
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl From<usize> for $name {
            /// Converts a table position; panics only if the table has more than `u32::MAX` rows,
            /// which the builder never lets happen.
            #[inline]
            fn from(i: usize) -> Self {
                Self(u32::try_from(i).unwrap_or(u32::MAX))
            }
        }
    };
}

index_type!(
    /// Position of a thread in [`crate::Profile::threads`] (sorted by [`ThreadId`]).
    ThreadIndex
);
index_type!(
    /// Position of an interval event (timer) in [`crate::Profile::events`].
    EventId
);
index_type!(
    /// Position of a metric in [`crate::Profile::metrics`].
    MetricId
);
index_type!(
    /// Position of a user (atomic) event in [`crate::Profile::atomic_events`].
    AtomicEventId
);
index_type!(
    /// Position of a group name in [`crate::Profile::groups`].
    GroupId
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_ids_sort_numerically() {
        let mut ids: Vec<ThreadId> = ["0.0.10", "0.0.2", "1.0.0", "0.1.0"]
            .iter()
            .map(|s| s.parse().unwrap())
            .collect();
        ids.sort();
        let shown: Vec<String> = ids.iter().map(|t| t.to_string()).collect();
        assert_eq!(shown, ["0.0.2", "0.0.10", "0.1.0", "1.0.0"]);
    }

    #[test]
    fn thread_id_rejects_malformed() {
        for bad in ["", "1", "1.2", "1.2.3.4", "a.0.0", "-1.0.0", "1..0"] {
            assert!(bad.parse::<ThreadId>().is_err(), "{bad}");
        }
    }
}
