//! Transparent gzip decompression for single-file inputs (`.pb.gz`, `.json.gz`).

use std::borrow::Cow;
use std::io::Read;

/// Largest decompressed size accepted (guards against decompression bombs): 4 GiB.
pub(crate) const MAX_DECOMPRESSED: u64 = 4 << 30;

/// True when `bytes` start with the gzip magic number.
pub(crate) fn is_gzip(bytes: &[u8]) -> bool {
    bytes.starts_with(&[0x1f, 0x8b])
}

/// The content of `bytes`, decompressed when it is gzip (all members of a multi-member
/// stream). A corrupt or truncated stream yields what was decompressed before the damage and
/// a message saying so; a stream larger than [`MAX_DECOMPRESSED`] is cut there, also with a
/// message.
pub(crate) fn maybe_gunzip(bytes: &[u8]) -> (Cow<'_, [u8]>, Option<String>) {
    if !is_gzip(bytes) {
        return (Cow::Borrowed(bytes), None);
    }
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(4).min(1 << 30));
    let decoder = flate2::read::MultiGzDecoder::new(bytes);
    let mut limited = decoder.take(MAX_DECOMPRESSED + 1);
    let result = limited.read_to_end(&mut out);
    let message = match result {
        Ok(_) if out.len() as u64 > MAX_DECOMPRESSED => {
            out.truncate(MAX_DECOMPRESSED as usize);
            Some(format!(
                "the gzip data decompresses to more than {} bytes; only the first {} bytes were read",
                MAX_DECOMPRESSED, MAX_DECOMPRESSED
            ))
        }
        Ok(_) => None,
        Err(e) => Some(format!(
            "the gzip data is corrupt or truncated ({e}); read the {} bytes decompressed before the damage",
            out.len()
        )),
    };
    (Cow::Owned(out), message)
}

/// The first up to `n` decompressed bytes of a gzip stream (for format detection), or the
/// bytes themselves when they are not gzip.
pub(crate) fn head(bytes: &[u8], n: usize) -> Cow<'_, [u8]> {
    if !is_gzip(bytes) {
        return Cow::Borrowed(&bytes[..bytes.len().min(n)]);
    }
    let mut out = Vec::with_capacity(n);
    let _ = flate2::read::MultiGzDecoder::new(bytes)
        .take(n as u64)
        .read_to_end(&mut out);
    Cow::Owned(out)
}
