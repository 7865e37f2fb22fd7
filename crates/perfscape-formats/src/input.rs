//! Reading one input file whole, decompressed: the one place where perfscape opens a
//! single-file input and undoes gzip, zstd or xz compression, whatever format is inside.
//!
//! Compression is recognized by its magic number, never by the file name:
//! gzip `1f 8b` (RFC 1952; several members are read one after another, as `gzip -d` does),
//! zstd `28 b5 2f fd` (RFC 8878; read with the pure-Rust `ruzstd` decoder), xz
//! `fd 37 7a 58 5a 00` (the .xz file format 1.0.4; read with `liblzma`).

use crate::error::{FileError, LoadError};
use crate::problem::Problem;
use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

/// Largest decompressed size accepted (guards against decompression bombs): 4 GiB.
pub const MAX_DECOMPRESSED: u64 = 4 << 30;

/// Bytes of a file that format detection looks at (after decompression).
pub const HEAD_BYTES: usize = 1 << 16;

/// A compression perfscape undoes in front of every reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// gzip (RFC 1952), one or more members.
    Gzip,
    /// Zstandard (RFC 8878), one or more frames.
    Zstd,
    /// xz (the .xz file format), one or more streams.
    Xz,
}

impl Codec {
    /// The codec whose magic number `bytes` start with, if any.
    pub fn of(bytes: &[u8]) -> Option<Codec> {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            Some(Codec::Gzip)
        } else if bytes.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Codec::Zstd)
        } else if bytes.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Some(Codec::Xz)
        } else {
            None
        }
    }

    /// The codec's usual name (`gzip`, `zstd`, `xz`).
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
            Codec::Xz => "xz",
        }
    }

    fn reader<'a>(self, bytes: &'a [u8]) -> Box<dyn Read + 'a> {
        match self {
            Codec::Gzip => Box::new(flate2::read::MultiGzDecoder::new(bytes)),
            Codec::Zstd => Box::new(ZstdFrames {
                source: bytes,
                decoder: ruzstd::decoding::FrameDecoder::new(),
                in_frame: false,
            }),
            Codec::Xz => Box::new(liblzma::read::XzDecoder::new_multi_decoder(bytes)),
        }
    }
}

/// Reads one zstd frame after another, skipping skippable frames (RFC 8878 section 3.1.2);
/// `ruzstd`'s own streaming decoder reads a single frame.
struct ZstdFrames<'a> {
    source: &'a [u8],
    decoder: ruzstd::decoding::FrameDecoder,
    in_frame: bool,
}

impl Read for ZstdFrames<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
        let invalid =
            |e: FrameDecoderError| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string());
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            if !self.in_frame {
                if self.source.is_empty() {
                    return Ok(0);
                }
                match self.decoder.init(&mut self.source) {
                    Ok(()) => self.in_frame = true,
                    Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                        length,
                        ..
                    })) => {
                        self.source = self.source.get(length as usize..).unwrap_or(&[]);
                        continue;
                    }
                    Err(e) => return Err(invalid(e)),
                }
            }
            if !self.decoder.is_finished() {
                let want = ruzstd::decoding::BlockDecodingStrategy::UptoBytes(buf.len().max(1 << 16));
                self.decoder
                    .decode_blocks(&mut self.source, want)
                    .map_err(invalid)?;
            }
            let n = self.decoder.read(buf)?;
            if n > 0 {
                return Ok(n);
            }
            if self.decoder.is_finished() && self.decoder.can_collect() == 0 {
                self.in_frame = false;
            } else if self.source.is_empty() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "the zstd frame breaks off",
                ));
            }
        }
    }
}

/// The content of an input: its bytes, decompressed when they were compressed.
#[derive(Debug)]
pub struct Content<'a> {
    /// The (decompressed) bytes.
    pub data: Cow<'a, [u8]>,
    /// The compression undone, if any.
    pub codec: Option<Codec>,
    /// Why the decompressed data is incomplete (corrupt or truncated stream, size limit): the
    /// data holds what was decompressed before the problem.
    pub problem: Option<Problem>,
}

/// Decompresses `bytes` when they start with the magic number of a [`Codec`]; other bytes are
/// returned as they are. A corrupt or truncated stream yields what was decompressed before the
/// damage and a [`Content::problem`]; so does a stream larger than [`MAX_DECOMPRESSED`], cut
/// there. Never fails.
pub fn decompress(bytes: &[u8]) -> Content<'_> {
    let Some(codec) = Codec::of(bytes) else {
        return Content {
            data: Cow::Borrowed(bytes),
            codec: None,
            problem: None,
        };
    };
    let mut out = Vec::with_capacity(capacity_hint(codec, bytes));
    let result = codec
        .reader(bytes)
        .take(MAX_DECOMPRESSED + 1)
        .read_to_end(&mut out);
    let name = codec.name();
    let problem = match result {
        Ok(_) if out.len() as u64 > MAX_DECOMPRESSED => {
            out.truncate(MAX_DECOMPRESSED as usize);
            Some(Problem::whole(format!(
                "the {name} data decompresses to more than {MAX_DECOMPRESSED} bytes; only the first {MAX_DECOMPRESSED} bytes were read"
            )))
        }
        Ok(_) => None,
        Err(e) => Some(Problem::whole(format!(
            "the {name} data is corrupt or truncated ({e}); the {} bytes decompressed before the damage were read",
            out.len()
        ))),
    };
    Content {
        data: Cow::Owned(out),
        codec: Some(codec),
        problem,
    }
}

/// Room to reserve for decompressing `bytes`: for gzip, the size its last member's trailer
/// states (ISIZE, the size modulo 2^32, RFC 1952 section 2.3.1), so a 32 MB profile is read
/// into 32 MB and not into an array grown by doubling to 43 MB; else, or when that size is
/// implausible (below the compressed size or above deflate's best ratio, about 1032:1), four
/// times the compressed size. At most 1 GiB; a larger stream grows the array as it reads.
fn capacity_hint(codec: Codec, bytes: &[u8]) -> usize {
    let fallback = bytes.len().saturating_mul(4);
    let stated = match (codec, bytes.len().checked_sub(4)) {
        (Codec::Gzip, Some(at)) if bytes.len() >= 18 => {
            let mut isize = [0u8; 4];
            isize.copy_from_slice(&bytes[at..]);
            Some(u32::from_le_bytes(isize) as usize)
        }
        _ => None,
    };
    stated
        .filter(|&n| n >= bytes.len() && n <= bytes.len().saturating_mul(1032))
        .unwrap_or(fallback)
        .min(1 << 30)
}

/// The first up to `n` decompressed bytes of `bytes` (for format detection), or the bytes
/// themselves when they are not compressed. A damaged stream gives what decompressed.
pub fn head(bytes: &[u8], n: usize) -> Cow<'_, [u8]> {
    let Some(codec) = Codec::of(bytes) else {
        return Cow::Borrowed(&bytes[..bytes.len().min(n)]);
    };
    let mut out = Vec::with_capacity(n);
    let _ = codec.reader(bytes).take(n as u64).read_to_end(&mut out);
    Cow::Owned(out)
}

/// Checks that `path` is a regular file (or a link to one) before it is read: character
/// devices (`/dev/zero`), FIFOs and sockets would be read without end or block.
pub fn check_regular(path: &Path) -> Result<std::fs::Metadata, LoadError> {
    let meta = std::fs::metadata(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    if meta.is_file() || meta.is_dir() {
        return Ok(meta);
    }
    Err(LoadError::NotAFile {
        path: path.to_path_buf(),
    })
}

/// Reads the whole file at `path` (a regular file: see [`check_regular`]).
pub fn read_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    check_regular(path)?;
    std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The metadata of one file of a multi-file run (links followed), or the error that says it
/// cannot be read or is not a regular file.
fn regular_member(path: &Path) -> Result<std::fs::Metadata, FileError> {
    let meta = std::fs::metadata(path).map_err(|e| FileError::whole(path, format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(FileError::whole(
            path,
            "not a regular file (a device, FIFO, socket or directory); not read",
        ));
    }
    Ok(meta)
}

/// Reads one file of a multi-file run into `buf` (cleared first, reused between files to
/// avoid allocations). Errors, as the file's entry in [`crate::LoadReport::bad_files`], when
/// it is not a regular file (a `profile.N.C.T` linked to `/dev/zero` would be read without
/// end) or cannot be read.
pub fn read_member_into(path: &Path, buf: &mut Vec<u8>) -> Result<(), FileError> {
    buf.clear();
    let cannot = |e: std::io::Error| FileError::whole(path, format!("cannot read: {e}"));
    let meta = regular_member(path)?;
    buf.reserve(usize::try_from(meta.len()).unwrap_or(0).min(1 << 30));
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(buf))
        .map(|_| ())
        .map_err(cannot)
}

/// Reads into `buf` (replacing its content) one file of a multi-file run that its
/// directory's listing showed as a regular file (not a link): what [`read_member_into`]
/// does, in fewer system calls. The file is opened without following a link and without
/// blocking (`O_NOFOLLOW | O_NONBLOCK`: a file replaced since the listing by a link or a
/// FIFO is refused, never followed or waited on), checked and sized on the open descriptor,
/// and read into `buf`, whose allocation is kept between calls so that a buffer reused for
/// files of similar size is not grown again (only the bytes past the previous file's length
/// are zeroed before the read). Errors as [`read_member_into`].
pub fn read_listed_file_into(path: &Path, buf: &mut Vec<u8>) -> Result<(), FileError> {
    #[cfg(unix)]
    {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let cannot = |e: std::io::Error| FileError::whole(path, format!("cannot read: {e}"));
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(cannot)?;
        let meta = f.metadata().map_err(cannot)?;
        if !meta.is_file() {
            return Err(FileError::whole(
                path,
                "not a regular file (a device, FIFO, socket or directory); not read",
            ));
        }
        // One byte more than the stated size, so that the read ending the file is the one
        // that returns 0 bytes, not a second full one.
        let want = usize::try_from(meta.len()).unwrap_or(0).min(1 << 30) + 1;
        if buf.len() < want {
            buf.resize(want, 0);
        }
        let mut n = 0;
        loop {
            if n == buf.len() {
                // The file grew since it was sized.
                buf.resize(2 * n, 0);
            }
            match f.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    buf.clear();
                    return Err(cannot(e));
                }
            }
        }
        buf.truncate(n);
        Ok(())
    }
    #[cfg(not(unix))]
    read_member_into(path, buf)
}

/// Reads the first `lines` lines of one file of a multi-file run (with their line ends; less
/// when the file has fewer): what a reader needs of a header, without reading the rest.
/// Errors as [`read_member_into`].
pub fn read_member_lines(path: &Path, lines: usize) -> Result<Vec<u8>, FileError> {
    use std::io::BufRead;
    let cannot = |e: std::io::Error| FileError::whole(path, format!("cannot read: {e}"));
    regular_member(path)?;
    let mut reader = std::io::BufReader::new(std::fs::File::open(path).map_err(cannot)?);
    let mut buf = Vec::new();
    for _ in 0..lines {
        if reader.read_until(b'\n', &mut buf).map_err(cannot)? == 0 {
            break;
        }
    }
    Ok(buf)
}

/// Reads one file of a multi-file run whole (see [`read_member_into`]).
pub fn read_member(path: &Path) -> Result<Vec<u8>, FileError> {
    let mut buf = Vec::new();
    read_member_into(path, &mut buf)?;
    Ok(buf)
}

/// Reads the first [`HEAD_BYTES`] bytes of the file at `path`, decompressed (for detection).
pub fn read_head(path: &Path) -> Result<Vec<u8>, LoadError> {
    check_regular(path)?;
    let io = |source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    };
    // Compressed data expands: read enough of it to fill the head after decompression.
    let mut raw = Vec::with_capacity(HEAD_BYTES);
    std::fs::File::open(path)
        .and_then(|f| f.take(HEAD_BYTES as u64 * 4).read_to_end(&mut raw))
        .map_err(io)?;
    Ok(head(&raw, HEAD_BYTES).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TEXT: &[u8] = b"42 templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls\n";

    fn gzip(b: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    /// The gzip trailer's size is the hint; a damaged or implausible one falls back to 4x.
    #[test]
    fn gzip_capacity_hint_is_the_stated_size() {
        let planted: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let gz = gzip(&planted);
        assert_eq!(capacity_hint(Codec::Gzip, &gz), 100_000);
        let content = decompress(&gz);
        assert_eq!(content.data.len(), 100_000);
        // A trailer stating less than the compressed size: 4x the compressed size.
        let mut bad = gz.clone();
        let n = bad.len();
        bad[n - 4..].copy_from_slice(&1u32.to_le_bytes());
        assert_eq!(capacity_hint(Codec::Gzip, &bad), 4 * n);
        // More than 1032 times the compressed size: 4x too.
        bad[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(capacity_hint(Codec::Gzip, &bad), 4 * n);
        // Other codecs and too short streams: 4x.
        assert_eq!(capacity_hint(Codec::Zstd, &gz), 4 * n);
        assert_eq!(capacity_hint(Codec::Gzip, &gz[..10]), 40);
    }

    fn xz(b: &[u8]) -> Vec<u8> {
        let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
        e.write_all(b).unwrap();
        e.finish().unwrap()
    }

    /// A zstd frame holding `b` in one raw block (RFC 8878 section 3.1.1): magic, frame
    /// header descriptor with single-segment flag and a 1-byte content size, then a last raw
    /// block. Written by hand so that the test needs no zstd encoder.
    fn zstd_raw(b: &[u8]) -> Vec<u8> {
        assert!(b.len() < 256);
        let mut out = vec![0x28, 0xb5, 0x2f, 0xfd, 0x20, b.len() as u8];
        let header = ((b.len() as u32) << 3) | 1; // last block, type raw
        out.extend_from_slice(&header.to_le_bytes()[..3]);
        out.extend_from_slice(b);
        out
    }

    #[test]
    fn every_codec_round_trips_and_members_concatenate() {
        for (codec, packed) in [
            (Codec::Gzip, [gzip(&TEXT[..10]), gzip(&TEXT[10..])].concat()),
            (Codec::Xz, [xz(&TEXT[..10]), xz(&TEXT[10..])].concat()),
            (
                Codec::Zstd,
                [zstd_raw(&TEXT[..10]), zstd_raw(&TEXT[10..])].concat(),
            ),
        ] {
            let c = decompress(&packed);
            assert_eq!(c.codec, Some(codec));
            assert_eq!(c.problem, None, "{codec:?}");
            assert_eq!(&c.data[..], TEXT, "{codec:?}");
            assert_eq!(&head(&packed, 10)[..], &TEXT[..10], "{codec:?}");
        }
        let plain = decompress(TEXT);
        assert_eq!(plain.codec, None);
        assert!(matches!(plain.data, Cow::Borrowed(_)));
    }

    #[test]
    fn a_truncated_stream_keeps_what_decompressed_and_says_so() {
        let big: Vec<u8> = (0..200_000u32).flat_map(|i| i.to_le_bytes()).collect();
        for (name, packed) in [("gzip", gzip(&big)), ("xz", xz(&big))] {
            let cut = &packed[..packed.len() / 2];
            let c = decompress(cut);
            let p = c.problem.expect("a problem");
            assert!(p.message.contains(name) && p.message.contains("truncated"), "{p}");
            assert!(!c.data.is_empty() && c.data.len() < big.len());
            assert_eq!(
                &c.data[..],
                &big[..c.data.len()],
                "{name}: what was read is right"
            );
        }
    }

    #[test]
    fn non_regular_files_are_refused() {
        let e = read_file(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let e = read_member(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("/dev/zero: not a regular file"), "{e}");
    }

    /// A reused buffer holds exactly each file's bytes, whether the file before was longer,
    /// shorter or empty; a link and a FIFO are refused (the FIFO without waiting for a writer).
    #[cfg(unix)]
    #[test]
    fn listed_files_read_whole_into_a_reused_buffer() {
        let dir = tempfile::tempdir().unwrap();
        let long: Vec<u8> = (0..70_000u32).map(|i| (i % 251) as u8).collect();
        let files: [&[u8]; 4] = [&long, TEXT, b"", &long[..12_345]];
        let mut buf = Vec::new();
        for (i, content) in files.iter().enumerate() {
            let path = dir.path().join(format!("profile.{i}.0.0"));
            std::fs::write(&path, content).unwrap();
            read_listed_file_into(&path, &mut buf).unwrap();
            assert_eq!(buf.as_slice(), *content, "file {i}");
            let mut plain = vec![1, 2, 3];
            read_member_into(&path, &mut plain).unwrap();
            assert_eq!(plain, buf, "file {i}");
        }
        let link = dir.path().join("profile.9.0.0");
        std::os::unix::fs::symlink(dir.path().join("profile.0.0.0"), &link).unwrap();
        let e = read_listed_file_into(&link, &mut buf).unwrap_err().to_string();
        assert!(e.contains("profile.9.0.0") && e.contains("cannot read"), "{e}");
        let fifo = dir.path().join("profile.8.0.0");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = read_listed_file_into(&fifo, &mut buf).unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
        }
    }
}
