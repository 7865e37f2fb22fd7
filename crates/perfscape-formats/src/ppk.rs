//! ParaProf packed profiles (`.ppk`): a gzip-compressed stream (undone by [`crate::open`]) written with Java's
//! `DataOutputStream` (big endian; strings in Java's "modified UTF-8" with a 16-bit length).
//!
//! Layout, from ParaProf's reader (`edu.uoregon.tau.perfdmf.PackedProfileDataSource`, TAU):
//!
//! ```text
//! char 'P', char 'P', char 'K'                  (Java chars: 2 bytes each)
//! int version, int lowest compatible version     (this reader: compatible <= 2)
//! version >= 2:
//!   int metadata size (bytes of the rest of this section), int n, n bytes skipped
//!   int trial metadata count, (UTF name, UTF value)...
//!   int thread count, per thread: int node, int context, int thread,
//!                                 int count, (UTF name, UTF value)...
//! version < 2: int n, n bytes skipped
//! int metric count, UTF metric name...
//! int group count, UTF group name...
//! int function count, per function: UTF name, int group count, int group index...
//! int user event count, UTF user event name...
//! int thread count, per thread: int node, int context, int thread,
//!   int function profile count, per profile: int function index, double calls,
//!     double subroutines, per metric: double exclusive, double inclusive
//!   int user event profile count, per profile: int user event index, int samples,
//!     double min, double max, double mean, double sum of squares
//! ```
//!
//! Mapping: every function profile of a thread is an event that thread has (as ParaProf
//! loads it, whatever its calls); names are normalized like TAU text profiles (callpaths
//! `a => b`); groups are the function's group names joined with `|`; metric units follow TAU's
//! names (`TIME` = microseconds) and, as TAU's values accumulate over calls, every metric
//! combines by sum ([`perfscape_model::Metric::tau`]). Trial metadata applies to every thread; thread metadata to
//! its thread. Threads are sorted by (node, context, thread). A stream cut short (truncated
//! file) loads the threads that are complete, with a warning.

use crate::format::{self, FileScope, Format, Parts};
use crate::problem::{Parsed, Problem};
use perfscape_model::{Metric, Profile, ProfileBuilder, ThreadData, ThreadId};

/// A `.ppk` file turned into the model, with what the reader had to say about it.
#[derive(Debug)]
pub struct PpkProfile {
    /// The profile.
    pub profile: Profile,
    /// File format version written in the file.
    pub version: i32,
    /// Problems that did not stop the load (truncated stream, duplicate threads, ...).
    pub warnings: Vec<Problem>,
}

/// The ParaProf packed format: a gzip-compressed `.ppk` stream (decompressed in front by
/// [`crate::open`]), recognized by its `PPK` magic.
pub const FORMAT: Format = Format {
    name: "ppk",
    description: "ParaProf packed profiles (.ppk)",
    example: "tau-ppk/tau224-mpas-papi-multimetric/mpas.ppk",
    sniff: |p| p.head().is_some_and(|h| h.starts_with(MAGIC)),
    read: format::Read::Bytes(parse),
    gives: Parts::PROFILE,
    file_scope: FileScope::File,
};

/// The first six bytes of a decompressed `.ppk` stream: `PPK` as three Java chars.
const MAGIC: &[u8] = &[0, b'P', 0, b'P', 0, b'K'];

/// [`parse_ppk`] as the registry's reader.
fn parse(bytes: &[u8]) -> Result<Parsed, Problem> {
    parse_ppk(bytes).map(|p| Parsed {
        profile: p.profile,
        trace: None,
        warnings: p.warnings,
        partial: Vec::new(),
        notes: vec![format!("ParaProf packed profile, format version {}", p.version)],
    })
}

/// Reading position in the decompressed stream; errors name the byte offset and the field.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

type R<T> = Result<T, Problem>;

impl<'a> Cursor<'a> {
    fn bytes(&mut self, n: usize, what: &str) -> R<&'a [u8]> {
        let s = self.b.get(self.at..self.at.saturating_add(n)).ok_or_else(|| {
            Problem::whole(format!(
                "decompressed byte {}: the stream ends where {what} was expected (truncated file?)",
                self.at
            ))
        })?;
        self.at += n;
        Ok(s)
    }

    fn i32(&mut self, what: &str) -> R<i32> {
        let s = self.bytes(4, what)?;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }

    fn count(&mut self, what: &str, min_record: usize) -> R<usize> {
        let at = self.at;
        let n = self.i32(what)?;
        let n = usize::try_from(n)
            .map_err(|_| Problem::whole(format!("decompressed byte {at}: {what} is negative ({n})")))?;
        let left = self.b.len() - self.at;
        if n.saturating_mul(min_record) > left {
            return Err(Problem::whole(format!(
                "decompressed byte {at}: {what} is {n}, but only {left} bytes follow (corrupt or truncated file)"
            )));
        }
        Ok(n)
    }

    fn f64(&mut self, what: &str) -> R<f64> {
        let s = self.bytes(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(f64::from_be_bytes(a))
    }

    fn index(&mut self, what: &str, len: usize) -> R<usize> {
        let at = self.at;
        let i = self.i32(what)?;
        usize::try_from(i).ok().filter(|&i| i < len).ok_or_else(|| {
            Problem::whole(format!(
                "decompressed byte {at}: {what} {i} is out of range (0..{len})"
            ))
        })
    }

    /// Java `DataInput.readUTF`: u16 length, then modified UTF-8.
    fn utf(&mut self, what: &str) -> R<String> {
        let at = self.at;
        let len = self.bytes(2, what)?;
        let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
        let raw = self.bytes(len, what)?;
        decode_modified_utf8(raw).map_err(|e| Problem::whole(format!("decompressed byte {at}: {what}: {e}")))
    }
}

/// Decodes Java's modified UTF-8: NUL is `C0 80`, characters outside the BMP are two
/// 3-byte-encoded UTF-16 surrogates. Unpaired surrogates become U+FFFD.
pub fn decode_modified_utf8(raw: &[u8]) -> Result<String, String> {
    if raw.is_ascii() && !raw.contains(&0) {
        return Ok(raw.iter().map(|&b| b as char).collect());
    }
    let mut units: Vec<u16> = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        let cont = |k: usize| -> Result<u16, String> {
            match raw.get(i + k) {
                Some(&c) if c & 0xC0 == 0x80 => Ok(u16::from(c & 0x3F)),
                _ => Err(format!("malformed modified UTF-8 at string byte {i}")),
            }
        };
        if b & 0x80 == 0 {
            if b == 0 {
                return Err(format!(
                    "raw NUL byte at string byte {i} (Java writes NUL as C0 80)"
                ));
            }
            units.push(u16::from(b));
            i += 1;
        } else if b & 0xE0 == 0xC0 {
            units.push((u16::from(b & 0x1F) << 6) | cont(1)?);
            i += 2;
        } else if b & 0xF0 == 0xE0 {
            units.push((u16::from(b & 0x0F) << 12) | (cont(1)? << 6) | cont(2)?);
            i += 3;
        } else {
            return Err(format!(
                "malformed modified UTF-8 at string byte {i} (byte {b:#04x})"
            ));
        }
    }
    Ok(char::decode_utf16(units.iter().copied())
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect())
}

struct ThreadRead {
    id: ThreadId,
    data: ThreadData,
}

/// Parses the decompressed stream of a `.ppk` file (see the module documentation; [`crate::open`]
/// decompresses the file).
pub fn parse_ppk(raw: &[u8]) -> Result<PpkProfile, Problem> {
    let mut warnings = Vec::new();
    let mut c = Cursor { b: raw, at: 0 };
    let magic = c.bytes(6, "the PPK magic")?;
    if magic != [0, b'P', 0, b'P', 0, b'K'] {
        return Err(Problem::whole(
            "byte 0: expected the magic `PPK` (three Java chars); not a ParaProf packed profile",
        ));
    }
    let version = c.i32("the file version")?;
    let compatible = c.i32("the lowest compatible version")?;
    if compatible > 2 {
        return Err(Problem::whole(format!(
            "decompressed byte 10: this packed profile needs a reader of version {compatible}; perfscape reads versions up to 2"
        )));
    }
    let mut trial_meta: Vec<(String, String)> = Vec::new();
    let mut thread_meta: Vec<(ThreadId, Vec<(String, String)>)> = Vec::new();
    if version >= 2 {
        let size_at = c.at;
        let meta_size = c.count("the metadata section size", 1)?;
        let meta_start = c.at;
        let skip = c.count("the reserved section size", 1)?;
        c.bytes(skip, "the reserved section")?;
        let n = c.count("the trial metadata count", 4)?;
        for _ in 0..n {
            let k = c.utf("a trial metadata name")?;
            let v = c.utf("a trial metadata value")?;
            trial_meta.push((k, v));
        }
        let n = c.count("the thread metadata count", 16)?;
        for _ in 0..n {
            let id = thread_id(&mut c)?;
            let k = c.count("a thread's metadata count", 4)?;
            let mut pairs = Vec::with_capacity(k);
            for _ in 0..k {
                let name = c.utf("a thread metadata name")?;
                let value = c.utf("a thread metadata value")?;
                pairs.push((name, value));
            }
            thread_meta.push((id, pairs));
        }
        if c.at - meta_start != meta_size {
            warnings.push(Problem::whole(format!(
                "decompressed byte {size_at}: the metadata section says it has {meta_size} bytes but holds {}",
                c.at - meta_start
            )));
        }
    } else {
        let skip = c.count("the header size", 1)?;
        c.bytes(skip, "the header")?;
    }
    let n_metrics = c.count("the metric count", 2)?;
    let mut metrics = Vec::with_capacity(n_metrics);
    for _ in 0..n_metrics {
        metrics.push(Metric::tau(c.utf("a metric name")?));
    }
    if metrics.is_empty() {
        return Err(Problem::whole("the profile has no metric"));
    }
    let n_groups = c.count("the group count", 2)?;
    let mut groups = Vec::with_capacity(n_groups);
    for _ in 0..n_groups {
        groups.push(c.utf("a group name")?);
    }
    let n_functions = c.count("the function count", 6)?;
    let mut functions: Vec<(String, String)> = Vec::with_capacity(n_functions);
    for _ in 0..n_functions {
        let name = c.utf("a function name")?;
        let k = c.count("a function's group count", 4)?;
        let mut g = Vec::with_capacity(k);
        for _ in 0..k {
            g.push(groups[c.index("a group index", groups.len())?].as_str());
        }
        functions.push((name, g.join("|")));
    }
    let n_user = c.count("the user event count", 2)?;
    let mut user_events = Vec::with_capacity(n_user);
    for _ in 0..n_user {
        user_events.push(c.utf("a user event name")?);
    }
    let n_threads = c.count("the thread count", 20)?;
    let mut threads: Vec<ThreadRead> = Vec::with_capacity(n_threads);
    for k in 0..n_threads {
        match read_thread(&mut c, n_metrics, &functions, &user_events) {
            Ok(t) => threads.push(t),
            Err(e) if k > 0 => {
                warnings.push(Problem::whole(format!(
                    "{}; {} of {n_threads} threads were read, the others are missing",
                    e.message,
                    threads.len()
                )));
                break;
            }
            Err(e) => return Err(e),
        }
    }
    if c.at < raw.len() && threads.len() == n_threads {
        warnings.push(Problem::whole(format!(
            "decompressed byte {}: {} bytes follow the last thread and were ignored",
            c.at,
            raw.len() - c.at
        )));
    }
    if threads.is_empty() {
        return Err(Problem::whole("the profile holds no complete thread"));
    }
    threads.sort_by_key(|t| t.id);
    let mut builder = ProfileBuilder::new(metrics);
    let mut previous: Option<ThreadId> = None;
    for mut t in threads {
        if previous == Some(t.id) {
            warnings.push(Problem::whole(format!(
                "thread {} appears twice; the second copy was ignored",
                t.id
            )));
            continue;
        }
        previous = Some(t.id);
        for (k, v) in &trial_meta {
            t.data.push_metadata(k, v);
        }
        if let Some((_, pairs)) = thread_meta.iter().find(|(id, _)| *id == t.id) {
            for (k, v) in pairs {
                t.data.push_metadata(k, v);
            }
        }
        builder
            .add_thread(t.id, t.data)
            .map_err(|e| Problem::whole(format!("thread {}: {e}", t.id)))?;
    }
    let (profile, notes) = builder.finish();
    warnings.extend(
        notes
            .into_iter()
            .map(|n| Problem::whole(format!("thread {}: {}", n.thread, n.message))),
    );
    Ok(PpkProfile {
        profile,
        version,
        warnings,
    })
}

fn thread_id(c: &mut Cursor<'_>) -> R<ThreadId> {
    let at = c.at;
    let node = c.i32("a node id")?;
    let context = c.i32("a context id")?;
    let thread = c.i32("a thread id")?;
    match (u32::try_from(node), u32::try_from(context), u32::try_from(thread)) {
        (Ok(n), Ok(x), Ok(t)) => Ok(ThreadId::new(n, x, t)),
        _ => Err(Problem::whole(format!(
            "decompressed byte {at}: thread {node}.{context}.{thread} has a negative id"
        ))),
    }
}

fn read_thread(
    c: &mut Cursor<'_>,
    n_metrics: usize,
    functions: &[(String, String)],
    user_events: &[String],
) -> R<ThreadRead> {
    let id = thread_id(c)?;
    let n = c.count("a thread's function profile count", 20 + 16 * n_metrics)?;
    let mut data = ThreadData::with_capacity(n_metrics, n, 64 * n);
    let mut excl = vec![0.0; n_metrics];
    let mut incl = vec![0.0; n_metrics];
    for _ in 0..n {
        let f = c.index("a function index", functions.len())?;
        let calls = c.f64("calls")?;
        let subcalls = c.f64("subroutine calls")?;
        for m in 0..n_metrics {
            excl[m] = c.f64("an exclusive value")?;
            incl[m] = c.f64("an inclusive value")?;
        }
        let (name, groups) = &functions[f];
        data.push_timer(name, groups, calls, subcalls, &excl, &incl)
            .map_err(|e| Problem::whole(e.to_string()))?;
    }
    let n = c.count("a thread's user event profile count", 40)?;
    for _ in 0..n {
        let u = c.index("a user event index", user_events.len())?;
        let samples = c.i32("a sample count")?;
        let min = c.f64("a minimum")?;
        let max = c.f64("a maximum")?;
        let mean = c.f64("a mean")?;
        let sum_squares = c.f64("a sum of squares")?;
        data.push_atomic(&user_events[u], f64::from(samples), max, min, mean, sum_squares);
    }
    Ok(ThreadRead { id, data })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_utf8() {
        assert_eq!(decode_modified_utf8(b"abc").unwrap(), "abc");
        assert_eq!(decode_modified_utf8(&[0xC0, 0x80]).unwrap(), "\0");
        assert_eq!(decode_modified_utf8("é€".as_bytes()).unwrap(), "é€");
        // U+1F600 as a surrogate pair, each half in 3 bytes.
        assert_eq!(
            decode_modified_utf8(&[0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]).unwrap(),
            "\u{1F600}"
        );
        assert!(decode_modified_utf8(&[0xE2, 0x82]).is_err());
        assert!(decode_modified_utf8(&[0xFF]).is_err());
        assert!(decode_modified_utf8(&[b'a', 0]).is_err());
    }
}
