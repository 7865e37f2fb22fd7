//! Synthetic live runs for benchmarks and tests: many ranks made from the real snapshot files
//! of a small run, so that latency can be measured at 1,024 ranks without a 1,024-rank program.
//!
//! Rank `r` is a copy of the real file of rank `r % k` (for a run of `k` ranks) with its thread
//! id renamed to `r.0.0` (every `"N.0.0.<pid>"` and `node="N"`; values, names and timestamps
//! unchanged). The file is cut into its `<profile_xml>` blocks, so a writer can append block
//! `s` of every rank to produce sample `s`.

use std::io::Write;
use std::path::Path;

/// One rank's snapshot file: its name, bytes, and the byte ranges of its blocks.
#[derive(Clone, Debug)]
pub struct RankFile {
    /// File name (`snapshot.R.0.0`).
    pub name: String,
    /// The whole file.
    pub bytes: Vec<u8>,
    /// Byte range of each `<profile_xml>` block (one per sample), in order.
    pub blocks: Vec<std::ops::Range<usize>>,
}

/// `ranks` renamed copies of the `snapshot.K.0.0` files (`K` = 0, 1, ...) of `real_dir`.
/// Errors: an unreadable file, no `snapshot.0.0.0`, or a file without a `<thread id=...>`.
pub fn snapshot_run(real_dir: &Path, ranks: usize) -> std::io::Result<Vec<RankFile>> {
    let mut real = Vec::new();
    while let Ok(t) = std::fs::read_to_string(real_dir.join(format!("snapshot.{}.0.0", real.len()))) {
        real.push(t);
    }
    if real.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no snapshot.0.0.0 in {}", real_dir.display()),
        ));
    }
    (0..ranks)
        .map(|r| {
            let k = r % real.len();
            let text = &real[k];
            let pid = text
                .split(&format!("<thread id=\"{k}.0.0."))
                .nth(1)
                .and_then(|rest| rest.split('"').next())
                .ok_or_else(|| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("snapshot.{k}.0.0: no <thread id=\"{k}.0.0.PID\">"),
                    )
                })?;
            let bytes = text
                .replace(&format!("\"{k}.0.0.{pid}\""), &format!("\"{r}.0.0.{pid}\""))
                .replace(&format!("node=\"{k}\""), &format!("node=\"{r}\""))
                .into_bytes();
            let mut blocks = Vec::new();
            let mut start = 0;
            for (i, m) in String::from_utf8_lossy(&bytes).match_indices("</profile_xml>\n") {
                blocks.push(start..i + m.len());
                start = i + m.len();
            }
            Ok(RankFile {
                name: format!("snapshot.{r}.0.0"),
                bytes,
                blocks,
            })
        })
        .collect()
}

/// Appends `bytes` to the file at `path` (created if missing), as TAU does when it writes a
/// snapshot.
pub fn append(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?
        .write_all(bytes)
}
