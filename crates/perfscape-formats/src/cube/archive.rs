//! The `.cubex` container: a POSIX tar archive (read with the `tar` crate).
//!
//! CubeLib 4.8 (CubeWriter) wrote tar headers whose checksum field is 32 less than the
//! checksum POSIX defines: it summed the header with the checksum field counted as seven
//! spaces and a NUL instead of eight spaces. Standard tar readers reject such files
//! ("archive header checksum mismatch"); pycubexr accepts them with a warning. So do we:
//! headers are walked once, wrong checksums are rewritten in a copy of the bytes (with one
//! warning naming how many headers and whether they match the CubeWriter 4.8 pattern), and
//! the `tar` crate reads the result.

use std::io::Read;

/// A member of the archive: its name and content.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// Path inside the archive with any leading `./` removed.
    pub name: String,
    /// Byte offset of the member's content within the `.cubex` file.
    pub offset: u64,
    /// Content.
    pub data: Vec<u8>,
}

/// The members read, and what went wrong along the way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Archive {
    /// Members in archive order.
    pub members: Vec<Member>,
    /// Problems that did not stop the reading: (byte offset, message).
    pub warnings: Vec<(u64, String)>,
}

impl Archive {
    /// The member named `name`, if present.
    pub fn get(&self, name: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.name == name)
    }
}

const BLOCK: usize = 512;

/// Walks the headers and rewrites wrong checksums. Returns the repaired bytes (if anything
/// was repaired), the number of headers repaired and how many of those had the CubeWriter
/// 4.8 difference of exactly 32.
fn repair_checksums(bytes: &[u8]) -> (Option<Vec<u8>>, usize, usize) {
    let mut fixed: Option<Vec<u8>> = None;
    let (mut wrong, mut cube48) = (0, 0);
    let mut at = 0usize;
    while at + BLOCK <= bytes.len() {
        let block = &bytes[at..at + BLOCK];
        if block.iter().all(|&b| b == 0) {
            break;
        }
        let mut h = tar::Header::new_old();
        h.as_mut_bytes().copy_from_slice(block);
        let stored = h.cksum().ok();
        let mut good = h.clone();
        good.set_cksum();
        let correct = good.cksum().ok();
        if stored != correct {
            wrong += 1;
            if let (Some(s), Some(c)) = (stored, correct)
                && c.wrapping_sub(s) == 32
            {
                cube48 += 1;
            }
            let buf = fixed.get_or_insert_with(|| bytes.to_vec());
            buf[at..at + BLOCK].copy_from_slice(good.as_bytes());
        }
        let Ok(size) = h.entry_size() else { break };
        let Some(next) = usize::try_from(size)
            .ok()
            .and_then(|s| s.checked_add(BLOCK - 1))
            .map(|s| s / BLOCK * BLOCK)
            .and_then(|s| s.checked_add(at + BLOCK))
        else {
            break;
        };
        at = next;
    }
    (fixed, wrong, cube48)
}

/// Reads every regular-file member of a tar archive held in memory. A damaged or truncated
/// archive yields the members before the damage and a warning; only an archive with no
/// readable member at all is an error (byte offset, message).
pub fn read_archive(bytes: &[u8]) -> Result<Archive, (u64, String)> {
    let mut out = Archive::default();
    let (repaired, wrong, cube48) = repair_checksums(bytes);
    if wrong > 0 {
        out.warnings.push((
            0,
            if cube48 == wrong {
                format!(
                    "{wrong} tar header(s) carry a checksum 32 too small (the CubeWriter 4.8 checksum bug: the checksum field was summed as seven spaces and a NUL instead of eight spaces); the headers were accepted"
                )
            } else {
                format!("{wrong} tar header(s) carry a wrong checksum; the headers were accepted as they are")
            },
        ));
    }
    let data: &[u8] = repaired.as_deref().unwrap_or(bytes);
    let mut archive = tar::Archive::new(data);
    let entries = archive
        .entries()
        .map_err(|e| (0, format!("not a tar archive: {e}")))?;
    let mut last_end = 0u64;
    for entry in entries {
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                if out.members.is_empty() {
                    return Err((last_end, format!("not a readable tar archive: {e}")));
                }
                out.warnings.push((
                    last_end,
                    format!(
                        "the tar archive is damaged after this point ({e}); members after it are missing"
                    ),
                ));
                break;
            }
        };
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = String::from_utf8_lossy(&entry.path_bytes())
            .trim_start_matches("./")
            .to_string();
        let offset = entry.raw_file_position();
        let size = entry.header().entry_size().unwrap_or(0);
        let mut content = Vec::with_capacity(usize::try_from(size).unwrap_or(0).min(data.len()));
        if let Err(e) = entry.read_to_end(&mut content) {
            out.warnings
                .push((offset, format!("member `{name}` cannot be read: {e}")));
            break;
        }
        if (content.len() as u64) < size {
            out.warnings.push((
                offset,
                format!(
                    "member `{name}` is cut short: {} of {size} bytes (truncated file?)",
                    content.len()
                ),
            ));
            break;
        }
        last_end = offset + size;
        out.members.push(Member {
            name,
            offset,
            data: content,
        });
    }
    if out.members.is_empty() {
        return Err((0, "the tar archive holds no file".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tar_of(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut b = tar::Builder::new(Vec::new());
        for (name, data) in files {
            let mut h = tar::Header::new_ustar();
            h.set_size(data.len() as u64);
            h.set_mode(0o644);
            h.set_cksum();
            b.append_data(&mut h, name, *data).unwrap();
        }
        b.into_inner().unwrap()
    }

    #[test]
    fn reads_members_and_repairs_the_cubewriter_checksum_bug() {
        let t = tar_of(&[("anchor.xml", b"<cube/>"), ("0.index", b"x")]);
        let a = read_archive(&t).unwrap();
        assert_eq!(a.members.len(), 2);
        assert!(a.warnings.is_empty());
        assert_eq!(a.get("anchor.xml").unwrap().data, b"<cube/>");
        assert_eq!(a.get("anchor.xml").unwrap().offset, 512);
        // Make every checksum 32 too small, as CubeWriter 4.8 did.
        let mut bad = t.clone();
        for at in [0usize, 1024] {
            let mut h = tar::Header::new_old();
            h.as_mut_bytes().copy_from_slice(&bad[at..at + 512]);
            let c = h.cksum().unwrap() - 32;
            bad[at + 148..at + 156].copy_from_slice(format!("{c:06o}\0 ").as_bytes());
        }
        assert!(
            tar::Archive::new(&bad[..])
                .entries()
                .unwrap()
                .next()
                .unwrap()
                .is_err()
        );
        let a = read_archive(&bad).unwrap();
        assert_eq!(a.members.len(), 2);
        assert!(a.warnings[0].1.contains("CubeWriter 4.8"), "{:?}", a.warnings);
    }

    #[test]
    fn truncated_archives_keep_what_is_complete() {
        let t = tar_of(&[("a", &[1u8; 600]), ("b", &[2u8; 10])]);
        for cut in 0..t.len() {
            match read_archive(&t[..cut]) {
                Ok(a) => {
                    for m in &a.members {
                        assert!(m.name == "a" || m.name == "b");
                    }
                }
                Err((_, msg)) => assert!(!msg.is_empty()),
            }
        }
        assert!(read_archive(b"hello").is_err());
        assert!(read_archive(&[]).is_err());
    }
}
