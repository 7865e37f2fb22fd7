//! Protocol buffer framing: splitting a message into its top-level fields with their byte
//! offsets, so that a bad or truncated field can be named by offset and the fields before it
//! still load. Wire format: <https://protobuf.dev/programming-guides/encoding/>.

/// One top-level field: its number and its byte range (key included) in the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Field {
    /// Field number.
    pub number: u32,
    /// Wire type (0 varint, 1 fixed64, 2 length-delimited, 5 fixed32).
    pub wire_type: u8,
    /// Offset of the field's key.
    pub start: usize,
    /// Offset just past the field's value.
    pub end: usize,
}

/// Where and why the framing broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FramingError {
    /// Byte offset of the field that could not be framed.
    pub offset: usize,
    /// What was wrong.
    pub message: String,
}

/// Reads a base-128 varint at `*pos`, advancing it.
pub(crate) fn read_varint(buf: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut value: u64 = 0;
    for i in 0..10 {
        let Some(&b) = buf.get(*pos) else {
            return Err("the data ends inside a varint (truncated?)".into());
        };
        *pos += 1;
        if i == 9 && b > 1 {
            return Err("varint longer than 64 bits".into());
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("varint longer than 10 bytes".into())
}

/// Splits `buf` into its top-level fields. Stops at the first field that cannot be framed
/// (returned with the fields before it).
pub(crate) fn split_fields(buf: &[u8]) -> (Vec<Field>, Option<FramingError>) {
    let mut fields = Vec::new();
    let mut pos = 0usize;
    while pos < buf.len() {
        let start = pos;
        let fail = |message: String| FramingError {
            offset: start,
            message,
        };
        let key = match read_varint(buf, &mut pos) {
            Ok(k) => k,
            Err(e) => return (fields, Some(fail(format!("field key: {e}")))),
        };
        let number = key >> 3;
        let wire_type = (key & 7) as u8;
        if number == 0 || number > u64::from(u32::MAX >> 3) {
            return (fields, Some(fail(format!("invalid field number {number}"))));
        }
        let end = match wire_type {
            0 => match read_varint(buf, &mut pos) {
                Ok(_) => pos,
                Err(e) => return (fields, Some(fail(format!("field {number}: {e}")))),
            },
            1 => pos.saturating_add(8),
            5 => pos.saturating_add(4),
            2 => match read_varint(buf, &mut pos) {
                Ok(len) => usize::try_from(len)
                    .ok()
                    .and_then(|l| pos.checked_add(l))
                    .unwrap_or(usize::MAX),
                Err(e) => return (fields, Some(fail(format!("field {number} length: {e}")))),
            },
            other => {
                return (
                    fields,
                    Some(fail(format!(
                        "field {number} has wire type {other}, which profile.proto never uses (expected 0, 1, 2 or 5)"
                    ))),
                );
            }
        };
        if end > buf.len() {
            return (
                fields,
                Some(fail(format!(
                    "field {number} needs {} bytes but the data ends after {} (truncated?)",
                    end - start,
                    buf.len() - start
                ))),
            );
        }
        fields.push(Field {
            number: u32::try_from(number).unwrap_or(0),
            wire_type,
            start,
            end,
        });
        pos = end;
    }
    (fields, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_and_stops_at_truncation() {
        // field 1 (len 2: 0x08 0x01), field 12 varint 300, then a truncated field 6.
        let buf = [0x0a, 0x02, 0x08, 0x01, 0x60, 0xac, 0x02, 0x32, 0x05, b'a'];
        let (fields, err) = split_fields(&buf);
        assert_eq!(fields.len(), 2);
        assert_eq!((fields[0].number, fields[0].start, fields[0].end), (1, 0, 4));
        assert_eq!((fields[1].number, fields[1].start, fields[1].end), (12, 4, 7));
        let err = err.unwrap();
        assert_eq!(err.offset, 7);
        assert!(err.message.contains("truncated"), "{}", err.message);
        let (_, err) = split_fields(&[0x0b]);
        assert!(err.unwrap().message.contains("wire type 3"));
        let (_, err) = split_fields(&[0x80, 0x80]);
        assert!(err.unwrap().message.contains("varint"));
    }
}
