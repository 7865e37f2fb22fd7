//! The numbers of a TAU profile line: its last whitespace-separated fields split off from
//! the end (any line), or read forward after the name (a line as TAU writes it), and parsed
//! as `str::parse::<f64>` does.

use crate::problem::Problem;

/// [`split_last_numbers`] without the values (the tests compare it with the splitter it
/// replaced).
#[cfg(test)]
pub(super) fn split_last<const N: usize>(s: &str) -> Option<(&str, [&str; N])> {
    split_last_numbers::<N>(s).map(|(head, fields, _)| (head, fields))
}

/// The head of a line, its last `N` fields, and each field's value when it is a plain
/// integer (see [`split_last_numbers`]).
pub(super) type SplitFields<'a, const N: usize> = (&'a str, [&'a str; N], [Option<f64>; N]);

/// Splits the last `N` whitespace-separated fields off `s`; returns the head (untrimmed
/// on the left) and the fields in order. `None` when `s` has fewer than `N` fields after a
/// non-empty head. Fields are separated by ASCII whitespace, found by scanning bytes (it
/// never sits inside a UTF-8 sequence, so every cut is a character boundary); the space
/// between them is trimmed as `str::trim_end` trims (any Unicode whitespace), by bytes while
/// it is ASCII.
///
/// With each field comes the value it has when it is a plain integer of 1 to 15 digits
/// (exact in an `f64`, as [`parse_f64`] reads it), found in the same scan: TAU writes most
/// numbers so, and such a field then needs no second pass.
pub(super) fn split_last_numbers<const N: usize>(s: &str) -> Option<SplitFields<'_, N>> {
    /// The most digits of a field read as an integer (exact in an `f64`: 10^15 < 2^53).
    const MAX_DIGITS: usize = 15;
    let b = s.as_bytes();
    let skip_space = |mut end: usize| {
        while end > 0 && b[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        if end > 0 && !b[end - 1].is_ascii() {
            // A multi-byte character ends here: maybe Unicode whitespace.
            end = s.get(..end).map_or(end, |h| h.trim_end().len());
        }
        end
    };
    let mut fields = [""; N];
    let mut ints = [None; N];
    let mut end = skip_space(b.len());
    for (slot, int) in fields.iter_mut().zip(ints.iter_mut()).rev() {
        let mut start = end;
        // The digits at the end of the field (wrapping past 19 of them: the value is only
        // used for 15 or fewer), then the rest of the field up to the space before it.
        let (mut v, mut p) = (0u64, 1u64);
        while start > 0 {
            let d = b[start - 1].wrapping_sub(b'0');
            if d >= 10 {
                break;
            }
            v = v.wrapping_add(u64::from(d).wrapping_mul(p));
            p = p.wrapping_mul(10);
            start -= 1;
        }
        let mut digits = end - start <= MAX_DIGITS;
        while start > 0 && !b[start - 1].is_ascii_whitespace() {
            digits = false;
            start -= 1;
        }
        if start == end {
            return None;
        }
        *slot = s.get(start..end)?;
        if digits {
            // Exact: v < 10^15 < 2^53.
            *int = Some(v as f64);
        }
        end = skip_space(start);
        if end == 0 && start == 0 {
            return None;
        }
    }
    Some((s.get(..end)?, fields, ints))
}

/// The values of a line whose last `N` fields are plain integers of 1 to 15 digits right
/// after the name's closing quote (what TAU writes: `"name" 1 0 2033215 2033215 0`), read
/// forward from that quote in one pass, with the quote's byte offset; `None` for any other
/// line. Where it gives a result, [`split_last_numbers`] gives the same fields (the tests
/// compare the two): the name's closing quote is the last quote of the line (numbers hold
/// none), the fields are separated by spaces and tabs (ASCII whitespace, which both trim),
/// and nothing follows the last one.
pub(super) fn integers_after_name<const N: usize>(b: &[u8]) -> Option<(usize, [f64; N])> {
    let quote = memchr::memrchr(b'"', b)?;
    let rest = &b[quote + 1..];
    let (values, end) = integer_fields::<N>(rest, 0)?;
    (end == rest.len()).then_some((quote, values))
}

/// `N` fields of `b` from byte `i`, each a plain integer of 1 to 15 digits after one or more
/// spaces or tabs (what TAU writes after a timer's name): their values and where the last
/// one ends; `None` when the text there is not so.
///
/// Always inlined: called as a function, the one-pass read of a template line took a fifth
/// more time (`perf` samples).
#[inline(always)]
pub(super) fn integer_fields<const N: usize>(b: &[u8], mut i: usize) -> Option<([f64; N], usize)> {
    /// The most digits of a field read as an integer (exact in an `f64`: 10^15 < 2^53).
    const MAX_DIGITS: usize = 15;
    let mut values = [0.0; N];
    for value in &mut values {
        let space = i;
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        let start = i;
        let (v, end) = digits_from(b, i);
        i = end;
        if start == space || i == start || i - start > MAX_DIGITS {
            return None;
        }
        // Exact: 0 <= v < 10^15 < 2^53 (through `i64`: one instruction, `u64` takes several).
        *value = v as i64 as f64;
    }
    Some((values, i))
}

/// The run of ASCII digits in `b` from byte `i`: its value (exact up to 19 digits, wrapped
/// beyond: callers refuse more than 15) and where it ends.
///
/// Byte by byte: reading 8 bytes at a time (the SWAR digit test and conversion of Lemire's
/// fast_float) took 20–30% more time on TAU's lines, whose fields are mostly 1 to 7 digits.
#[inline]
pub(super) fn digits_from(b: &[u8], mut i: usize) -> (u64, usize) {
    let mut v = 0u64;
    while let Some(d) = b.get(i).map(|c| c.wrapping_sub(b'0')).filter(|d| *d <= 9) {
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    (v, i)
}

/// [`integers_after_name`] as [`split_last_numbers`] gives it: the head, the fields and
/// their values.
#[cfg(test)]
pub(super) fn split_integers_after_name<const N: usize>(s: &str) -> Option<SplitFields<'_, N>> {
    let (quote, values) = integers_after_name::<N>(s.as_bytes())?;
    let mut fields = s[quote + 1..].split_ascii_whitespace();
    Some((
        &s[..=quote],
        [(); N].map(|()| fields.next().unwrap_or_default()),
        values.map(Some),
    ))
}

/// Parses a number field as `str::parse::<f64>` does, with a fast path for what TAU writes
/// most: plain integers of up to 15 digits, which are exact in an `f64` (< 2^53).
pub(super) fn parse_f64(field: &str) -> Result<f64, std::num::ParseFloatError> {
    let b = field.as_bytes();
    if !b.is_empty() && b.len() <= 15 && b.iter().all(u8::is_ascii_digit) {
        let v = b.iter().fold(0u64, |v, &c| v * 10 + u64::from(c - b'0'));
        // Exact: v < 10^15 < 2^53.
        return Ok(v as f64);
    }
    field.parse::<f64>()
}

/// [`number`] of a field split by [`split_last_numbers`]: its integer value when the scan
/// found one.
pub(super) fn field_number(field: &str, int: Option<f64>, what: &str, line: usize) -> Result<f64, Problem> {
    match int {
        Some(v) => Ok(v),
        None => number(field, what, line),
    }
}

fn number(field: &str, what: &str, line: usize) -> Result<f64, Problem> {
    match parse_f64(field) {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(Problem::at_line(
            line,
            format!("{what} is `{field}`, not a finite number"),
        )),
        Err(_) => Err(Problem::at_line(
            line,
            format!("{what} is `{field}`, expected a number"),
        )),
    }
}
