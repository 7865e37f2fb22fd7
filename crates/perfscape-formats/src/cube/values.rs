//! CUBE4 `<metric>.index` and `<metric>.data` members.
//!
//! Index (CubeLib's `CUBEX.INDEX`, see pycubexr `docs/cube_file_format.md`):
//! `"CUBEX.INDEX"`, int32 `1` in the writer's byte order (tells the endianness of this file
//! and of the data file), uint16 version, uint8 index type, int32 `N`, then `N` int32 tree
//! indices: the positions, in the metric's call-tree enumeration, of the cnodes that have
//! values.
//!
//! Data: `"CUBEX.DATA"` followed by `N x L` values (L = number of locations), cnode-major; or
//! `"ZCUBEX.DATA"`, int64 `S`, `S` headers of three int64 (uncompressed position, compressed
//! position, compressed size) and `S` zlib streams whose concatenation is the same `N x L`
//! values.

use std::io::Read;

/// Byte order of a metric's index and data members.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endian {
    /// Little endian (x86, ARM).
    Little,
    /// Big endian (POWER, old Blue Gene / SPARC).
    Big,
}

/// A parsed index member.
#[derive(Debug, Clone, PartialEq)]
pub struct Index {
    /// Byte order of this member and of the data member.
    pub endian: Endian,
    /// Format version field.
    pub version: u16,
    /// Index type field (1 = sparse list of tree indices).
    pub index_type: u8,
    /// Tree indices of the cnodes with values, in data order.
    pub tree_indices: Vec<u32>,
}

/// An error inside a member: byte offset in the member and message.
pub type MemberError = (u64, String);

fn take<'a>(b: &'a [u8], at: usize, n: usize, what: &str) -> Result<&'a [u8], MemberError> {
    b.get(at..at.saturating_add(n)).ok_or_else(|| {
        (
            at as u64,
            format!(
                "the member ends after {} bytes where {what} ({n} bytes) was expected (truncated?)",
                b.len()
            ),
        )
    })
}

fn i32_at(b: &[u8], at: usize, e: Endian, what: &str) -> Result<i32, MemberError> {
    let s = take(b, at, 4, what)?;
    let a = [s[0], s[1], s[2], s[3]];
    Ok(match e {
        Endian::Little => i32::from_le_bytes(a),
        Endian::Big => i32::from_be_bytes(a),
    })
}

fn i64_at(b: &[u8], at: usize, e: Endian, what: &str) -> Result<i64, MemberError> {
    let s = take(b, at, 8, what)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Ok(match e {
        Endian::Little => i64::from_le_bytes(a),
        Endian::Big => i64::from_be_bytes(a),
    })
}

const INDEX_MAGIC: &[u8] = b"CUBEX.INDEX";
const DATA_MAGIC: &[u8] = b"CUBEX.DATA";
const ZDATA_MAGIC: &[u8] = b"ZCUBEX.DATA";

/// Parses an index member.
pub fn parse_index(b: &[u8]) -> Result<Index, MemberError> {
    if !b.starts_with(INDEX_MAGIC) {
        return Err((0, "expected the magic `CUBEX.INDEX`".into()));
    }
    let mut at = INDEX_MAGIC.len();
    let one = take(b, at, 4, "the endianness marker")?;
    let endian = match one {
        [1, 0, 0, 0] => Endian::Little,
        [0, 0, 0, 1] => Endian::Big,
        _ => {
            return Err((
                at as u64,
                format!("endianness marker is {one:02x?}, expected the number 1"),
            ));
        }
    };
    at += 4;
    let v = take(b, at, 2, "the version")?;
    let version = match endian {
        Endian::Little => u16::from_le_bytes([v[0], v[1]]),
        Endian::Big => u16::from_be_bytes([v[0], v[1]]),
    };
    at += 2;
    let index_type = take(b, at, 1, "the index type")?[0];
    at += 1;
    let n = i32_at(b, at, endian, "the number of indices")?;
    at += 4;
    let n = usize::try_from(n).map_err(|_| ((at - 4) as u64, format!("negative number of indices {n}")))?;
    let rest = b.len() - at;
    if rest != n.saturating_mul(4) {
        return Err((
            at as u64,
            format!(
                "the index announces {n} cnodes ({} bytes) but {rest} bytes follow",
                n.saturating_mul(4)
            ),
        ));
    }
    let mut tree_indices = Vec::with_capacity(n);
    for k in 0..n {
        let v = i32_at(b, at + 4 * k, endian, "a tree index")?;
        let v = u32::try_from(v).map_err(|_| ((at + 4 * k) as u64, format!("negative tree index {v}")))?;
        tree_indices.push(v);
    }
    Ok(Index {
        endian,
        version,
        index_type,
        tree_indices,
    })
}

/// A plain-number CUBE value type: its size in bytes and how to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// Signed integer of 1, 2, 4 or 8 bytes.
    Signed(usize),
    /// Unsigned integer of 1, 2, 4 or 8 bytes.
    Unsigned(usize),
    /// IEEE double (also `MINDOUBLE`, `MAXDOUBLE`, `FLOAT`, which CubeLib stores as doubles).
    Double,
}

impl ValueType {
    /// The value type of a `dtype`, or `None` for types that are not one plain number per
    /// cell (`RATE`, `COMPLEX`, `TAU_ATOMIC`, `NDOUBLES(n)`, `HISTOGRAM(n)`, `SCALE_FUNC`, ...).
    pub fn of(dtype: &str) -> Option<Self> {
        Some(match dtype.trim().to_ascii_uppercase().as_str() {
            "INT8" => ValueType::Signed(1),
            "UINT8" | "CHAR" => ValueType::Unsigned(1),
            "INT16" | "SHORT INT" | "SIGNED SHORT INT" => ValueType::Signed(2),
            "UINT16" | "UNSIGNED SHORT INT" => ValueType::Unsigned(2),
            "INT32" | "INT" | "SIGNED INT" => ValueType::Signed(4),
            "UINT32" | "UNSIGNED INT" => ValueType::Unsigned(4),
            "INT64" | "INTEGER" | "SIGNED INTEGER" => ValueType::Signed(8),
            "UINT64" | "UNSIGNED INTEGER" => ValueType::Unsigned(8),
            "DOUBLE" | "FLOAT" | "MINDOUBLE" | "MAXDOUBLE" => ValueType::Double,
            _ => return None,
        })
    }

    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            ValueType::Signed(n) | ValueType::Unsigned(n) => n,
            ValueType::Double => 8,
        }
    }

    /// True for unsigned integers.
    pub fn is_unsigned(self) -> bool {
        matches!(self, ValueType::Unsigned(_))
    }
}

/// The largest UINT64 CubeLib keeps: larger values do not survive its cast to double and
/// back and read as 0 (pycubexr's `MAX_UINT64_DOUBLE`, which simulates that behaviour).
pub const MAX_UINT64_DOUBLE: u64 = 0xFFFF_FFFF_FFFF_FBFF;

/// Decoded values of a data member and how many UINT64 values above
/// [`MAX_UINT64_DOUBLE`] were read as 0.
#[derive(Debug, Clone, PartialEq)]
pub struct DataValues {
    /// `count` values, cnode-major.
    pub values: Vec<f64>,
    /// UINT64 values too large for CubeLib, replaced by 0.
    pub zeroed_huge: usize,
}

/// Decodes a data member holding `count` values of type `ty` in byte order `endian`.
pub fn parse_data(b: &[u8], endian: Endian, ty: ValueType, count: usize) -> Result<DataValues, MemberError> {
    let expected = count
        .checked_mul(ty.size())
        .ok_or((0, "too many values".to_string()))?;
    let raw: std::borrow::Cow<'_, [u8]> = if b.starts_with(ZDATA_MAGIC) {
        std::borrow::Cow::Owned(decompress(b, endian, expected)?)
    } else if b.starts_with(DATA_MAGIC) {
        std::borrow::Cow::Borrowed(&b[DATA_MAGIC.len()..])
    } else {
        return Err((0, "expected the magic `CUBEX.DATA` or `ZCUBEX.DATA`".into()));
    };
    if raw.len() != expected {
        return Err((
            DATA_MAGIC.len() as u64,
            format!(
                "expected {count} values of {} bytes ({expected} bytes) but the data holds {} bytes",
                ty.size(),
                raw.len()
            ),
        ));
    }
    let mut values = Vec::with_capacity(count);
    let mut zeroed_huge = 0;
    for chunk in raw.chunks_exact(ty.size()) {
        let mut a = [0u8; 8];
        let n = chunk.len();
        // Place the bytes so that from_le/from_be reads an n-byte integer.
        let v = match endian {
            Endian::Little => {
                a[..n].copy_from_slice(chunk);
                u64::from_le_bytes(a)
            }
            Endian::Big => {
                a[8 - n..].copy_from_slice(chunk);
                u64::from_be_bytes(a)
            }
        };
        let x = match ty {
            ValueType::Double => f64::from_bits(v),
            ValueType::Unsigned(8) if v > MAX_UINT64_DOUBLE => {
                zeroed_huge += 1;
                0.0
            }
            ValueType::Unsigned(_) => v as f64,
            ValueType::Signed(n) => {
                let shift = 64 - 8 * n as u32;
                (((v << shift) as i64) >> shift) as f64
            }
        };
        values.push(x);
    }
    Ok(DataValues { values, zeroed_huge })
}

fn decompress(b: &[u8], endian: Endian, expected: usize) -> Result<Vec<u8>, MemberError> {
    let mut at = ZDATA_MAGIC.len();
    let s = i64_at(b, at, endian, "the number of compressed segments")?;
    at += 8;
    let headers_end = usize::try_from(s)
        .ok()
        .and_then(|s| s.checked_mul(24))
        .and_then(|h| h.checked_add(at))
        .filter(|&end| end <= b.len())
        .ok_or_else(|| {
            (
                (at - 8) as u64,
                format!(
                    "{s} compressed segments announced, but the member has only {} bytes",
                    b.len()
                ),
            )
        })?;
    // Grow as the segments inflate: `expected` comes from the anchor and may be huge.
    let mut out = Vec::with_capacity(expected.min(b.len().saturating_mul(8)));
    let mut seg = headers_end;
    let mut h = at;
    while h < headers_end {
        let uncompressed_pos = i64_at(b, h, endian, "a segment header")?;
        let size = i64_at(b, h + 16, endian, "a segment header")?;
        h += 24;
        let size = usize::try_from(size)
            .map_err(|_| ((h - 8) as u64, format!("negative compressed segment size {size}")))?;
        if size == 0 {
            continue;
        }
        if uncompressed_pos != out.len() as i64 {
            return Err((
                (h - 24) as u64,
                format!(
                    "segment starts at uncompressed position {uncompressed_pos}, expected {} (segments out of order)",
                    out.len()
                ),
            ));
        }
        let data = take(b, seg, size, "a compressed segment")?;
        let limit = (expected - out.len().min(expected)) as u64 + 1;
        flate2::read::ZlibDecoder::new(data)
            .take(limit)
            .read_to_end(&mut out)
            .map_err(|e| (seg as u64, format!("compressed segment cannot be inflated: {e}")))?;
        if out.len() > expected {
            return Err((
                seg as u64,
                format!("the segments inflate to more than the {expected} bytes expected"),
            ));
        }
        seg += size;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn index(endian: Endian, ids: &[i32]) -> Vec<u8> {
        let mut b = INDEX_MAGIC.to_vec();
        let w = |v: i32| match endian {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        };
        b.extend(w(1));
        b.extend([0, 0, 1]);
        b.extend(w(ids.len() as i32));
        for &i in ids {
            b.extend(w(i));
        }
        b
    }

    #[test]
    fn index_both_byte_orders() {
        for e in [Endian::Little, Endian::Big] {
            let i = parse_index(&index(e, &[0, 2, 1])).unwrap();
            assert_eq!((i.endian, i.tree_indices.clone()), (e, vec![0, 2, 1]));
        }
        let good = index(Endian::Little, &[0, 1]);
        for cut in 0..good.len() {
            assert!(parse_index(&good[..cut]).is_err(), "cut {cut}");
        }
        let mut neg = index(Endian::Little, &[0]);
        let n = neg.len();
        neg[n - 4..].copy_from_slice(&(-3i32).to_le_bytes());
        assert!(parse_index(&neg).unwrap_err().1.contains("negative"));
    }

    #[test]
    fn data_every_plain_type() {
        let mut b = DATA_MAGIC.to_vec();
        b.extend([0xff, 0x02]);
        assert_eq!(
            parse_data(&b, Endian::Little, ValueType::Signed(1), 2)
                .unwrap()
                .values,
            [-1.0, 2.0]
        );
        assert_eq!(
            parse_data(&b, Endian::Little, ValueType::Unsigned(1), 2)
                .unwrap()
                .values,
            [255.0, 2.0]
        );
        assert_eq!(
            parse_data(&b, Endian::Little, ValueType::Signed(2), 1)
                .unwrap()
                .values,
            [767.0]
        );
        assert_eq!(
            parse_data(&b, Endian::Big, ValueType::Signed(2), 1)
                .unwrap()
                .values,
            [-254.0]
        );
        let mut d = DATA_MAGIC.to_vec();
        d.extend(1.5f64.to_be_bytes());
        d.extend(u64::MAX.to_be_bytes());
        let v = parse_data(&d, Endian::Big, ValueType::Double, 1);
        assert!(v.is_err(), "two values, one expected");
        let v = parse_data(&d, Endian::Big, ValueType::Unsigned(8), 2).unwrap();
        assert_eq!(v.values[1], 0.0);
        assert_eq!(v.zeroed_huge, 1);
        let mut d = DATA_MAGIC.to_vec();
        d.extend((-5i64).to_le_bytes());
        assert_eq!(
            parse_data(&d, Endian::Little, ValueType::Signed(8), 1)
                .unwrap()
                .values,
            [-5.0]
        );
        assert!(parse_data(b"garbage", Endian::Little, ValueType::Double, 0).is_err());
    }

    fn zdata(values: &[f64], split: usize) -> Vec<u8> {
        let raw: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let parts: Vec<&[u8]> = raw.chunks(split * 8).collect();
        let mut comp = Vec::new();
        for p in &parts {
            let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            z.write_all(p).unwrap();
            comp.push(z.finish().unwrap());
        }
        let mut b = ZDATA_MAGIC.to_vec();
        b.extend((parts.len() as i64).to_le_bytes());
        let (mut u, mut c) = (0i64, 0i64);
        for (p, z) in parts.iter().zip(&comp) {
            b.extend(u.to_le_bytes());
            b.extend(c.to_le_bytes());
            b.extend((z.len() as i64).to_le_bytes());
            u += p.len() as i64;
            c += z.len() as i64;
        }
        for z in &comp {
            b.extend(z);
        }
        b
    }

    #[test]
    fn compressed_data() {
        let b = zdata(&[1.0, 2.0, 3.0], 2);
        assert_eq!(
            parse_data(&b, Endian::Little, ValueType::Double, 3)
                .unwrap()
                .values,
            [1.0, 2.0, 3.0]
        );
        assert!(parse_data(&b, Endian::Little, ValueType::Double, 2).is_err());
        for cut in 0..b.len() {
            assert!(
                parse_data(&b[..cut], Endian::Little, ValueType::Double, 3).is_err(),
                "cut {cut}"
            );
        }
    }

    #[test]
    fn value_types() {
        assert_eq!(ValueType::of("UINT64"), Some(ValueType::Unsigned(8)));
        assert_eq!(ValueType::of("MINDOUBLE"), Some(ValueType::Double));
        for t in [
            "TAU_ATOMIC",
            "RATE",
            "COMPLEX",
            "HISTOGRAM(5)",
            "NDOUBLES(10)",
            "SCALE_FUNC",
        ] {
            assert_eq!(ValueType::of(t), None, "{t}");
        }
    }
}
