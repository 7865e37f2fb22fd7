//! A compact binary encoding of a whole [`Profile`](crate::Profile), for the on-disk cache of
//! `perfscape-formats` (the byte layout is documented in `CACHE.md` at the repository root).
//!
//! [`Profile::encode`](crate::Profile::encode) / [`Profile::encode_to`](crate::Profile::encode_to)
//! write the profile; [`Profile::decode`](crate::Profile::decode) reads it
//! back, bit for bit (`decode(encode(p)) == p`, every `f64` with its exact bits). The name and
//! id indices and the call tree are rebuilt on decode from the events they are derived from.
//!
//! Layout in one line: a 16-byte header (`PSPROFIL`, format version, flags), the payload, and
//! a 16-byte trailer (payload length, CRC-32 of the payload, `PEND`). Value arrays are written
//! as little-endian blocks, each with a one-byte encoding tag so that common shapes stay small
//! (all values equal, small integers, identical to the previous array, every thread present).
//!
//! Decoding never panics and never allocates from a length it has not checked against the
//! bytes that remain: a damaged or truncated input gives a [`DecodeError`] naming the byte
//! offset and what was expected.
//!
//! The byte framing ([`Writer`], [`Reader`], [`checksum`], [`DecodeError`]; `framing.rs`) is
//! public so the cache file of `perfscape-formats` can frame its own sections the same way;
//! the profile codec (`encode.rs`, `decode.rs`) builds on it.

mod decode;
mod encode;
mod framing;
#[cfg(test)]
mod tests;

pub use framing::{DecodeError, Reader, Writer, checksum};

use crate::event::EventKind;

/// First 8 bytes of an encoded profile.
pub const PROFILE_MAGIC: [u8; 8] = *b"PSPROFIL";
/// Last 4 bytes of an encoded profile.
pub const PROFILE_END: [u8; 4] = *b"PEND";
/// Version of the profile encoding; bumped whenever the layout changes (old caches are then
/// rebuilt, never misread).
pub const PROFILE_FORMAT_VERSION: u32 = 4;
/// Bytes of the header: magic, version, flags.
pub const HEADER_LEN: usize = 16;
/// Bytes of the trailer: payload length, CRC-32, end magic.
pub const TRAILER_LEN: usize = 16;

/// How many bytes the decoder may materialize per input byte (plus a fixed allowance of
/// [`DECODE_SLACK_BYTES`]): the compact encodings (constant arrays, thread ranges) expand, and
/// this bounds what a crafted input can make the decoder allocate.
pub const DECODE_EXPANSION_LIMIT: u64 = 256;
/// Fixed allowance added to the input length before applying [`DECODE_EXPANSION_LIMIT`].
pub const DECODE_SLACK_BYTES: u64 = 64 * 1024;

// Encoding tags of value arrays (`f64` columns).
const ARRAY_RAW: u8 = 0;
const ARRAY_CONST: u8 = 1;
const ARRAY_U32: u8 = 2;
const ARRAY_SAME: u8 = 3;
// Encoding tags of thread-index arrays.
const THREADS_LIST: u8 = 0;
const THREADS_RANGE: u8 = 1;

/// The byte an [`EventKind`] is stored as.
fn kind_tag(k: EventKind) -> u8 {
    match k {
        EventKind::Timer => 0,
        EventKind::Sample => 1,
        EventKind::SampleContext => 2,
        EventKind::Intermediate => 3,
        EventKind::Summary => 4,
        EventKind::Unwind => 5,
    }
}

/// The [`EventKind`] a stored byte stands for; `None` for an unknown byte.
fn kind_of(tag: u8) -> Option<EventKind> {
    Some(match tag {
        0 => EventKind::Timer,
        1 => EventKind::Sample,
        2 => EventKind::SampleContext,
        3 => EventKind::Intermediate,
        4 => EventKind::Summary,
        5 => EventKind::Unwind,
        _ => return None,
    })
}
