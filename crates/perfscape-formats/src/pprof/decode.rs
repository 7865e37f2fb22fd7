//! Decoding the protocol buffer (decompressed by [`crate::open`]): frame the top-level fields with their offsets, decode
//! each with prost (a damaged field is skipped, a truncation ends the data), and recognize a
//! profile by its field numbers and wire types.

use super::{proto, wire};
use crate::problem::Problem;
use prost::Message;

/// A pprof profile decoded from bytes, with the byte offsets of its top-level fields for error
/// messages.
#[derive(Debug, Default)]
pub struct Decoded {
    /// The message.
    pub profile: proto::Profile,
    /// Offset of every `sample` field, in order.
    pub sample_offsets: Vec<u64>,
    /// Offset of every `location` field, in order.
    pub location_offsets: Vec<u64>,
    /// Offset of every `function` field, in order.
    pub function_offsets: Vec<u64>,
    /// Problems that left data out but did not stop decoding (truncation, skipped malformed
    /// fields).
    pub partial: Vec<Problem>,
}

/// True when `data` (already decompressed) looks like a `perftools.profiles.Profile`: it
/// frames as protocol buffer fields with the numbers and wire types of profile.proto (a
/// truncated last field is accepted, since detection only sees the head of a file), and holds
/// at least one sample type, sample, location or string.
pub fn looks_like_pprof(data: &[u8]) -> bool {
    let (fields, _) = wire::split_fields(data);
    if fields.is_empty() {
        return false;
    }
    fields.iter().all(is_profile_field) && fields.iter().any(|f| matches!(f.number, 1 | 2 | 4 | 6))
}

/// True when the field has a number of profile.proto's `Profile` with its wire type.
fn is_profile_field(f: &wire::Field) -> bool {
    match f.number {
        1..=6 | 11 => f.wire_type == 2,
        7..=10 | 12 | 14 => f.wire_type == 0,
        13 => f.wire_type == 0 || f.wire_type == 2,
        _ => false,
    }
}

/// Decodes a pprof profile from its bytes (gzip or raw). The top-level fields are framed
/// first; a field that cannot be framed (truncation) ends decoding with a warning and the
/// fields before it are kept; a field whose content does not decode is skipped with a
/// warning. Errors when nothing decodes.
pub fn decode(data: &[u8]) -> Result<Decoded, Problem> {
    decode_with(data, true)
}

/// Decodes the sample field whose key is at byte `start` of `data` into `out` (cleared first,
/// its arrays reused). False when there is no well-formed `sample` field there.
pub(super) fn decode_sample_at(data: &[u8], start: usize, out: &mut proto::Sample) -> bool {
    let mut pos = start;
    // Field 2 (`sample`), wire type 2 (length-delimited).
    if wire::read_varint(data, &mut pos) != Ok((2 << 3) | 2) {
        return false;
    }
    let Ok(len) = wire::read_varint(data, &mut pos) else {
        return false;
    };
    let Some(payload) = usize::try_from(len)
        .ok()
        .and_then(|l| pos.checked_add(l))
        .and_then(|end| data.get(pos..end))
    else {
        return false;
    };
    out.clear();
    out.merge(payload).is_ok()
}

/// [`decode`], or with `keep_samples` false: the samples are checked but not kept (the
/// profile's `sample` stays empty); [`Decoded::sample_offsets`] then lists the samples that
/// decode, each read again with [`decode_sample_at`] when needed. A profile of 10^6 samples
/// so never holds them all decoded (a heap block or two per sample, several times the size of
/// their bytes).
pub(super) fn decode_with(data: &[u8], keep_samples: bool) -> Result<Decoded, Problem> {
    let mut out = Decoded::default();
    let mut scratch = proto::Sample::default();
    if data.is_empty() {
        return Err(Problem::whole(
            "no data: expected a perftools.profiles.Profile protocol buffer",
        ));
    }
    let (fields, framing) = wire::split_fields(data);
    if let Some(f) = &framing {
        let msg = format!(
            "protocol buffer framing broken at byte {}: {}; the {} fields before it were read",
            f.offset,
            f.message,
            fields.len()
        );
        if fields.is_empty() {
            return Err(Problem::at_offset(
                f.offset as u64,
                format!("not a pprof protocol buffer: {}", f.message),
            ));
        }
        out.partial.push(Problem::at_offset(f.offset as u64, msg));
    }
    if !fields.iter().any(is_profile_field) {
        return Err(Problem::at_offset(
            0,
            format!(
                "not a pprof protocol buffer: none of its {} top-level fields has a field number and type of perftools.profiles.Profile",
                fields.len(),
            ),
        ));
    }
    let mut skipped = 0usize;
    for f in &fields {
        let bytes = &data[f.start..f.end];
        let merged = if f.number == 2 && !keep_samples {
            if decode_sample_at(data, f.start, &mut scratch) {
                Ok(())
            } else {
                // The error as the eager path words it (only for a damaged sample).
                let mut alone = proto::Profile::default();
                match alone.merge(bytes) {
                    Err(e) => Err(e.to_string()),
                    Ok(()) => Err("a sample field of an unexpected form".to_string()),
                }
            }
        } else {
            out.profile.merge(bytes).map_err(|e| e.to_string())
        };
        match merged {
            Ok(()) => match f.number {
                2 => out.sample_offsets.push(f.start as u64),
                4 => out.location_offsets.push(f.start as u64),
                5 => out.function_offsets.push(f.start as u64),
                _ => {}
            },
            Err(e) => {
                skipped += 1;
                if skipped <= 5 {
                    out.partial.push(Problem::at_offset(
                        f.start as u64,
                        format!(
                            "field {} ({}) does not decode and was skipped: {e}",
                            f.number,
                            field_name(f.number)
                        ),
                    ));
                }
            }
        }
    }
    if skipped > 5 {
        out.partial.push(Problem::whole(format!(
            "{} more malformed fields were skipped",
            skipped - 5
        )));
    }
    if skipped == fields.len() {
        return Err(Problem::at_offset(
            fields.first().map_or(0, |f| f.start as u64),
            "not a pprof protocol buffer: no field decodes as a perftools.profiles.Profile field",
        ));
    }
    Ok(out)
}

fn field_name(n: u32) -> &'static str {
    match n {
        1 => "sample_type",
        2 => "sample",
        3 => "mapping",
        4 => "location",
        5 => "function",
        6 => "string_table",
        7 => "drop_frames",
        8 => "keep_frames",
        9 => "time_nanos",
        10 => "duration_nanos",
        11 => "period_type",
        12 => "period",
        13 => "comment",
        14 => "default_sample_type",
        _ => "unknown field",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two planted samples, a damaged sample field between them, then a string table: the
    /// lazy decode keeps no sample, lists the offsets of the two good ones (the damaged one
    /// reported as the eager decode reports it), and reads each back as planted.
    #[test]
    fn lazy_samples_are_read_back_as_planted_and_damage_is_reported_alike() {
        let sample = |locs: &[u64], value: i64| proto::Profile {
            sample: vec![proto::Sample {
                location_id: locs.to_vec(),
                value: vec![value, 2 * value],
                label: Vec::new(),
            }],
            ..proto::Profile::default()
        };
        let mut data = sample(&[3, 2, 1], 7).encode_to_vec();
        let damaged_at = data.len();
        // Field 2, 2 bytes: field 1 as a varint that ends inside the field.
        data.extend_from_slice(&[0x12, 0x02, 0x08, 0x80]);
        let second_at = data.len();
        data.extend(sample(&[9], 5).encode_to_vec());
        data.extend(
            proto::Profile {
                string_table: vec![String::new(), "cpu".into()],
                ..proto::Profile::default()
            }
            .encode_to_vec(),
        );
        let eager = decode(&data).unwrap();
        let lazy = decode_with(&data, false).unwrap();
        assert_eq!(eager.profile.sample.len(), 2);
        assert!(lazy.profile.sample.is_empty());
        assert_eq!(lazy.sample_offsets, vec![0, second_at as u64]);
        assert_eq!(lazy.sample_offsets, eager.sample_offsets);
        assert_eq!(lazy.profile.string_table, vec![String::new(), "cpu".to_string()]);
        let messages = |d: &Decoded| d.partial.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        assert_eq!(messages(&lazy), messages(&eager));
        assert_eq!(lazy.partial.len(), 1);
        assert!(
            lazy.partial[0].to_string().contains(&damaged_at.to_string()),
            "{:?}",
            lazy.partial
        );
        let mut s = proto::Sample::default();
        assert!(decode_sample_at(&data, 0, &mut s));
        assert_eq!(
            (s.location_id.as_slice(), s.value.as_slice()),
            (&[3, 2, 1][..], &[7, 14][..])
        );
        // The arrays are reused, not appended to.
        assert!(decode_sample_at(&data, second_at, &mut s));
        assert_eq!(
            (s.location_id.as_slice(), s.value.as_slice()),
            (&[9][..], &[5, 10][..])
        );
        assert!(!decode_sample_at(&data, damaged_at, &mut s));
        // Not the key of a sample field (the string table's).
        let strings_at = data.len() - 5;
        assert!(!decode_sample_at(&data, strings_at, &mut s));
    }
}
