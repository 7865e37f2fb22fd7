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
    let mut out = Decoded::default();
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
        match out.profile.merge(bytes) {
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
