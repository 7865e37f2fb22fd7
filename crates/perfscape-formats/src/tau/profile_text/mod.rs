//! Parser for one TAU text profile file, `profile.<node>.<context>.<thread>`.
//!
//! Format (TAU's `TauProfile.cpp` writer; `../shared/FORMATS.md` lists what real files do):
//!
//! ```text
//! <n> templated_functions_MULTI_<METRIC>
//! # Name Calls Subrs Excl Incl ProfileCalls # <metadata>...</metadata>
//! "<name>" <calls> <subrs> <excl> <incl> <profilecalls> GROUP="<g1>|<g2>"      (n lines)
//! <k> aggregates                                                              (k lines follow)
//! <m> userevents                                                              (optional)
//! # eventname numevents max min mean sumsqr
//! "<name>" <numevents> <max> <min> <mean> <sumsqr>                             (m lines)
//! ```
//!
//! Numbers are written with `%.16G` (integers, decimals, E-notation); all are read as `f64`.
//! Names may contain quotes, so fields are split from the right of the line. Old files have
//! `templated_functions` without a metric, no metadata, and may lack `GROUP=`; files written
//! with TAU's profile statistics add a `SumExclSqr` column.

use super::metadata::{BlockTemplate, parse_metadata, parse_metadata_by};
use crate::error::FileError;
use crate::problem::Problem;
use std::borrow::Cow;
use std::path::Path;

mod fields;
mod template;

pub(crate) use template::TimerTemplate;

use fields::{field_number, integers_after_name, split_last_numbers};
#[cfg(test)]
use fields::{parse_f64, split_integers_after_name, split_last};

/// One timer line of a TAU profile. Strings borrow from the file's text.
#[derive(Debug, Clone, PartialEq)]
pub struct TimerLine<'a> {
    /// 1-based line number in the file.
    pub line: usize,
    /// Name exactly as written between the quotes (not trimmed).
    pub name: Cow<'a, str>,
    /// The `GROUP="..."` value, `|`-separated (empty when absent).
    pub groups: Cow<'a, str>,
    /// Number of calls.
    pub calls: f64,
    /// Number of child calls.
    pub subcalls: f64,
    /// Exclusive value, in the metric's unit.
    pub exclusive: f64,
    /// Inclusive value, in the metric's unit.
    pub inclusive: f64,
}

/// One user (atomic) event line of a TAU profile. Strings borrow from the file's text.
#[derive(Debug, Clone, PartialEq)]
pub struct UserEventLine<'a> {
    /// 1-based line number in the file.
    pub line: usize,
    /// Name exactly as written between the quotes.
    pub name: Cow<'a, str>,
    /// Number of samples.
    pub count: f64,
    /// Largest sample.
    pub max: f64,
    /// Smallest sample.
    pub min: f64,
    /// Mean of the samples.
    pub mean: f64,
    /// Sum of squares of the samples.
    pub sum_squares: f64,
}

/// The parsed content of one `profile.N.C.T` file; strings borrow from its text (`'a`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProfileFile<'a> {
    /// Metric from line 1 (`templated_functions_MULTI_<METRIC>`), if given.
    pub header_metric: Option<Cow<'a, str>>,
    /// Metadata key/values of line 2, in order (includes `Metric Name` when present).
    pub metadata: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    /// Timer lines, in file order.
    pub timers: Vec<TimerLine<'a>>,
    /// User event lines, in file order (empty when the file has no user-event section).
    pub user_events: Vec<UserEventLine<'a>>,
    /// Non-fatal problems: (line, message).
    pub warnings: Vec<(usize, String)>,
    /// What was left out after the timer section, which is complete (a truncated or damaged
    /// aggregates or user-event section): (line, message saying what was not read). Empty
    /// when the whole file was read.
    pub partial: Vec<(usize, String)>,
}

impl ProfileFile<'_> {
    /// A copy that owns its strings.
    pub fn into_owned(self) -> ProfileFile<'static> {
        let own = |c: Cow<'_, str>| Cow::Owned(c.into_owned());
        ProfileFile {
            header_metric: self.header_metric.map(own),
            metadata: self.metadata.into_iter().map(|(k, v)| (own(k), own(v))).collect(),
            timers: self
                .timers
                .into_iter()
                .map(|t| TimerLine {
                    name: own(t.name),
                    groups: own(t.groups),
                    ..t
                })
                .collect(),
            user_events: self
                .user_events
                .into_iter()
                .map(|u| UserEventLine {
                    name: own(u.name),
                    ..u
                })
                .collect(),
            warnings: self.warnings,
            partial: self.partial,
        }
    }

    /// The metric name as ParaProf determines it: the `Metric Name` metadata value, else the
    /// metric of line 1, else `None`.
    pub fn metric_name(&self) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == "Metric Name")
            .map(|(_, v)| v.as_ref())
            .or(self.header_metric.as_deref())
    }
}

struct Lines<'a> {
    rest: &'a str,
    line_no: usize,
    /// Whether the last line returned ended with `\n` (a line without one is the end of a
    /// file that may have been cut inside it).
    ended: bool,
}

impl<'a> Lines<'a> {
    /// Next line without its terminator (`\n` or `\r\n`); `None` at end of input.
    fn next_line(&mut self) -> Option<&'a str> {
        if self.rest.is_empty() {
            return None;
        }
        let (line, rest, ended) = match memchr::memchr(b'\n', self.rest.as_bytes()) {
            Some(i) => (&self.rest[..i], &self.rest[i + 1..], true),
            None => (self.rest, "", false),
        };
        self.ended = ended;
        self.rest = rest;
        self.line_no += 1;
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
}

/// Decodes a file's bytes as UTF-8. Invalid bytes become U+FFFD, with a warning naming each
/// line that had some (`(line, message)`); valid files are borrowed, not copied.
pub fn decode_text(bytes: &[u8]) -> (Cow<'_, str>, Vec<(usize, String)>) {
    // SIMD validation (simdutf8) of the common all-valid case; the standard library's
    // decoder finds the bad lines otherwise.
    match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => (Cow::Borrowed(s), Vec::new()),
        Err(_) => {
            let warnings = bytes
                .split(|&b| b == b'\n')
                .enumerate()
                .filter(|(_, l)| std::str::from_utf8(l).is_err())
                .map(|(i, _)| {
                    (
                        i + 1,
                        "line is not valid UTF-8; invalid bytes shown as U+FFFD".to_string(),
                    )
                })
                .collect();
            (Cow::Owned(String::from_utf8_lossy(bytes).into_owned()), warnings)
        }
    }
}

/// A timer line (trimmed at the end) cut before its ` GROUP="..."`: the part before and the
/// groups' text; `None` when the line does not end so. The groups hold no quote, so their
/// opening quote is the last one before the closing quote (a byte search, cheaper than a
/// substring searcher per line).
fn split_groups(t: &str) -> Option<(&str, &str)> {
    const GROUP: &str = " GROUP=";
    let inner = t.strip_suffix('"')?;
    let open = memchr::memrchr(b'"', inner.as_bytes())?;
    let before = inner[..open].strip_suffix(GROUP)?;
    Some((before, &inner[open + 1..]))
}

/// [`parse_timer`] of a line as TAU writes it, in one pass over its bytes: `"name"`, the
/// numbers as plain integers of 1 to 15 digits ([`integers_after_name`]), `GROUP="..."`,
/// then only spaces or tabs. `None` for any other line, which [`parse_timer`] then reads the
/// general way; where it gives a result it is [`parse_timer`]'s (the tests compare the two).
fn timer_as_tau_writes_it(s: &str, line: usize, stats_column: bool) -> Option<TimerLine<'_>> {
    let b = s.as_bytes();
    // `str::trim_end`, for a line that ends with a quote after spaces or tabs.
    let mut end = b.len();
    while end > 0 && matches!(b[end - 1], b' ' | b'\t') {
        end -= 1;
    }
    if b.first() != Some(&b'"') {
        return None;
    }
    let (body, groups) = split_groups(s.get(..end)?)?;
    // Every field a plain integer, so profilecalls (and sumexclsqr) are numbers as
    // `parse_timer` requires.
    let (quote, [calls, subcalls, exclusive, inclusive]) = if stats_column {
        let (q, v) = integers_after_name::<6>(body.as_bytes())?;
        (q, [v[0], v[1], v[2], v[3]])
    } else {
        let (q, v) = integers_after_name::<5>(body.as_bytes())?;
        (q, [v[0], v[1], v[2], v[3]])
    };
    // `quoted_name`: the head (up to the name's closing quote) starts with the line's
    // opening quote, a different one.
    if quote == 0 {
        return None;
    }
    Some(TimerLine {
        line,
        name: Cow::Borrowed(s.get(1..quote)?),
        groups: Cow::Borrowed(groups),
        calls,
        subcalls,
        exclusive,
        inclusive,
    })
}

fn quoted_name<'a>(head: &'a str, line: usize, what: &str) -> Result<&'a str, Problem> {
    // Quotes at both ends: nothing to trim (a quote is not whitespace).
    if head.len() >= 2 && head.starts_with('"') && head.ends_with('"') {
        return Ok(&head[1..head.len() - 1]);
    }
    let h = head.trim();
    if h.len() >= 2 && h.starts_with('"') && h.ends_with('"') {
        Ok(&h[1..h.len() - 1])
    } else {
        Err(Problem::at_line(
            line,
            format!(
                "expected a {what} line starting with a quoted name, found `{}`",
                clip(head)
            ),
        ))
    }
}

/// Shortens `s` for an error message.
pub(crate) fn clip(s: &str) -> String {
    const MAX: usize = 120;
    if s.len() <= MAX {
        s.to_string()
    } else {
        let mut end = MAX;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    }
}

fn leading_count(s: &str, keyword: &str, line: usize) -> Result<usize, Problem> {
    let mut it = s.split_whitespace();
    let n = it.next().and_then(|t| t.parse::<usize>().ok());
    let kw = it.next();
    match (n, kw) {
        (Some(n), Some(k)) if k.starts_with(keyword) => Ok(n),
        _ => Err(Problem::at_line(
            line,
            format!("expected `<count> {keyword}`, found `{}`", clip(s)),
        )),
    }
}

fn parse_timer(s: &str, line: usize, stats_column: bool) -> Result<TimerLine<'_>, Problem> {
    match timer_as_tau_writes_it(s, line, stats_column) {
        Some(timer) => Ok(timer),
        None => parse_timer_general(s, line, stats_column),
    }
}

/// [`parse_timer`] of any line: names with quotes, numbers in any form `str::parse::<f64>`
/// reads, Unicode spaces, lines without `GROUP=`.
fn parse_timer_general(s: &str, line: usize, stats_column: bool) -> Result<TimerLine<'_>, Problem> {
    let t = s.trim_end();
    if !t.starts_with('"') {
        return Err(Problem::at_line(
            line,
            format!(
                "expected a timer line `\"name\" calls subrs excl incl profilecalls GROUP=\"...\"`, found `{}`",
                clip(s)
            ),
        ));
    }
    let (body, groups) = split_groups(t).unwrap_or((t, ""));
    let parsed = if stats_column {
        split_last_numbers::<6>(body)
            .map(|(h, f, v)| (h, [f[0], f[1], f[2], f[3], f[5]], [v[0], v[1], v[2], v[3], v[5]]))
    } else {
        split_last_numbers::<5>(body)
    };
    let Some((head, [calls, subrs, excl, incl, pcalls], [v_calls, v_subrs, v_excl, v_incl, v_pcalls])) =
        parsed
    else {
        return Err(Problem::at_line(
            line,
            format!(
                "expected a quoted name followed by {} numbers (calls subrs excl incl{} profilecalls), found `{}`",
                if stats_column { 6 } else { 5 },
                if stats_column { " sumexclsqr" } else { "" },
                clip(s)
            ),
        ));
    };
    let name = quoted_name(head, line, "timer")?;
    let calls = field_number(calls, v_calls, "calls", line)?;
    let subcalls = field_number(subrs, v_subrs, "subrs", line)?;
    let exclusive = field_number(excl, v_excl, "exclusive value", line)?;
    let inclusive = field_number(incl, v_incl, "inclusive value", line)?;
    field_number(pcalls, v_pcalls, "profilecalls", line)?;
    Ok(TimerLine {
        line,
        name: Cow::Borrowed(name),
        groups: Cow::Borrowed(groups),
        calls,
        subcalls,
        exclusive,
        inclusive,
    })
}

fn parse_user_event(s: &str, line: usize) -> Result<UserEventLine<'_>, Problem> {
    let Some((head, [n, max, min, mean, ss], [v_n, v_max, v_min, v_mean, v_ss])) = split_last_numbers::<5>(s)
    else {
        return Err(Problem::at_line(
            line,
            format!(
                "expected a user event line `\"name\" numevents max min mean sumsqr`, found `{}`",
                clip(s)
            ),
        ));
    };
    let name = quoted_name(head, line, "user event")?;
    Ok(UserEventLine {
        line,
        name: Cow::Borrowed(name),
        count: field_number(n, v_n, "numevents", line)?,
        max: field_number(max, v_max, "max", line)?,
        min: field_number(min, v_min, "min", line)?,
        mean: field_number(mean, v_mean, "mean", line)?,
        sum_squares: field_number(ss, v_ss, "sumsqr", line)?,
    })
}

/// Parses the bytes of one TAU profile file into a value that owns its strings (see
/// [`parse_profile_text`] for the borrowing parser and the errors).
pub fn parse_profile_file(bytes: &[u8]) -> Result<ProfileFile<'static>, Problem> {
    let (text, warnings) = decode_text(bytes);
    let mut f = parse_profile_text(&text)?.into_owned();
    f.warnings.splice(0..0, warnings);
    Ok(f)
}

/// Parses the text of one TAU profile file; the result borrows from `text`.
///
/// Errors (with the 1-based line) for: a missing or malformed header, a timer line that is
/// not `"name"` followed by the expected numbers (a non-numeric or non-finite number), fewer
/// timer lines than the header counts (a truncated file, or one still being written). Once
/// the timer section is complete, a problem in what follows (a truncated or malformed
/// aggregates or user-event section) keeps what was read and is listed in
/// [`ProfileFile::partial`]; text after the last user event is a warning.
pub fn parse_profile_text(text: &str) -> Result<ProfileFile<'_>, Problem> {
    parse_profile_text_by(text, None, None).map(|(f, _)| f)
}

/// What [`parse_profile_text_by`] found equal to the run's first file.
#[derive(Debug, Default)]
pub(crate) struct Marks {
    /// Per metadata pair, the template pair it equals when the scan found it so (empty
    /// without a metadata template).
    pub(crate) metadata: Vec<Option<u32>>,
    /// Per timer line, the template line it is ([`TimerTemplate::find`]; empty without a
    /// timer template).
    pub(crate) timers: Vec<Option<u32>>,
}

/// Lines 1 and 2 of a profile file, as [`read_header`] finds them.
struct Header<'a> {
    /// The timer count of line 1 (`<n> templated_functions...`).
    n_timers: usize,
    /// The metric of line 1 (`templated_functions_MULTI_<METRIC>`), if given.
    metric: Option<&'a str>,
    /// Whether line 2 names a `SumExclSqr` column (timer lines then have 6 numbers).
    stats_column: bool,
    /// The `<metadata>...</metadata>` block of line 2, unparsed, if there is one.
    metadata_block: Option<&'a str>,
}

/// Reads lines 1 and 2 of a profile file (`<n> templated_functions[_MULTI_<METRIC>]` and
/// `# Name Calls Subrs Excl Incl ProfileCalls [# <metadata>...</metadata>]`, TAU's profile
/// format), leaving `lines` at the first timer line. Errors name the line: an empty file, a
/// line 1 without its count, a line 2 that is not the column header, a metadata block not
/// closed on line 2.
fn read_header<'a>(lines: &mut Lines<'a>) -> Result<Header<'a>, Problem> {
    let first = lines.next_line().ok_or_else(|| {
        Problem::at_line(
            1,
            "file is empty; expected `<n> templated_functions` (a TAU profile still being written?)",
        )
    })?;
    let n_timers = leading_count(first, "templated_functions", 1)?;
    let metric = first
        .find("_MULTI_")
        .map(|i| first[i + 7..].trim())
        .filter(|m| !m.is_empty());
    let second = lines.next_line().ok_or_else(|| {
        Problem::at_line(
            2,
            "file ends after line 1; expected `# Name Calls Subrs Excl Incl ProfileCalls`",
        )
    })?;
    if !second.starts_with("# Name") {
        return Err(Problem::at_line(
            2,
            format!(
                "expected `# Name Calls Subrs Excl Incl ProfileCalls ...`, found `{}`",
                clip(second)
            ),
        ));
    }
    let metadata_at = memchr::memmem::find(second.as_bytes(), b"<metadata>");
    let header_end = metadata_at.unwrap_or(second.len());
    let stats_column = memchr::memmem::find(&second.as_bytes()[..header_end], b"SumExclSqr").is_some();
    let metadata_block = match metadata_at {
        None => None,
        Some(start) => {
            let Some(end) =
                memchr::memmem::find(&second.as_bytes()[start..], b"</metadata>").map(|i| start + i)
            else {
                return Err(Problem::at_line(
                    2,
                    "the <metadata> block is not closed by </metadata> on line 2 (truncated file?)",
                ));
            };
            Some(&second[start..end + "</metadata>".len()])
        }
    };
    Ok(Header {
        n_timers,
        metric,
        stats_column,
        metadata_block,
    })
}

/// The metric name of a profile file's text as [`ProfileFile::metric_name`] gives it (the
/// `Metric Name` metadata value, else the metric of line 1), read from lines 1 and 2 only:
/// the timer lines are not parsed. Errors as [`parse_profile_text`] for those two lines.
pub fn profile_text_metric_name(text: &str) -> Result<Option<String>, Problem> {
    let mut lines = Lines {
        rest: text,
        line_no: 0,
        ended: true,
    };
    let header = read_header(&mut lines)?;
    let file = ProfileFile {
        header_metric: header.metric.map(Cow::Borrowed),
        metadata: match header.metadata_block {
            Some(block) => parse_metadata(block).map_err(|e| Problem::at_line(2, e))?,
            None => Vec::new(),
        },
        ..ProfileFile::default()
    };
    Ok(file.metric_name().map(str::to_string))
}

/// [`parse_profile_text`] reading the metadata block against `metadata` and the timer lines
/// against `timers` (the run's first file's, see [`BlockTemplate`] and [`TimerTemplate`])
/// when given: the same file, and what was found equal to the first file's ([`Marks`]).
pub(crate) fn parse_profile_text_by<'a>(
    text: &'a str,
    metadata: Option<&BlockTemplate>,
    timers: Option<&TimerTemplate>,
) -> Result<(ProfileFile<'a>, Marks), Problem> {
    let mut marks = Marks::default();
    let mut lines = Lines {
        rest: text,
        line_no: 0,
        ended: true,
    };
    let mut out = ProfileFile::default();
    let Header {
        n_timers,
        metric,
        stats_column,
        metadata_block,
    } = read_header(&mut lines)?;
    out.header_metric = metric.map(Cow::Borrowed);
    if let Some(block) = metadata_block {
        match metadata {
            Some(t) => {
                (out.metadata, marks.metadata) =
                    parse_metadata_by(block, t).map_err(|e| Problem::at_line(2, e))?;
            }
            None => out.metadata = parse_metadata(block).map_err(|e| Problem::at_line(2, e))?,
        }
    }
    let mut warnings = Vec::new();

    // Never trust a count for an allocation: a line takes at least 12 bytes.
    out.timers.reserve(n_timers.min(text.len() / 12));
    // The template line expected next: one past the last one found.
    let mut cursor = 0;
    for k in 0..n_timers {
        if let Some(tt) = timers {
            let next = lines.line_no + 1;
            let read = if stats_column {
                tt.read_line::<6>(lines.rest, cursor, next)
            } else {
                tt.read_line::<5>(lines.rest, cursor, next)
            };
            if let Some((t, len)) = read {
                lines.rest = &lines.rest[len..];
                lines.line_no = next;
                out.timers.push(t);
                marks.timers.push(u32::try_from(cursor).ok());
                cursor += 1;
                continue;
            }
        }
        let Some(l) = lines.next_line() else {
            return Err(Problem::at_line(
                lines.line_no + 1,
                format!(
                    "file ends after {k} of the {n_timers} timer lines the header announces (truncated, or still being written)"
                ),
            ));
        };
        if !lines.ended {
            // A number cut short still parses: never take a line the file may end inside.
            return Err(Problem::at_line(
                lines.line_no,
                format!(
                    "file ends inside timer line {} of {n_timers}, before its line end (truncated, or still being written)",
                    k + 1
                ),
            ));
        }
        let t = parse_timer(l, lines.line_no, stats_column)?;
        if let Some(tt) = timers {
            let at = tt.find(&mut cursor, &t.name, &t.groups);
            marks.timers.push(at.and_then(|a| u32::try_from(a).ok()));
        }
        out.timers.push(t);
    }

    // The timer section is complete: what follows is read as far as it is valid, and a
    // problem there leaves the rest out (`partial`) instead of the whole file.
    if let Err((line, msg)) = read_tail(&mut lines, &mut out, &mut warnings, n_timers, text.len()) {
        out.partial.push((line, msg));
    }
    out.warnings = warnings;
    Ok((out, marks))
}

/// Reads what follows the timer section: the aggregates and the optional user-event section.
/// Errors with (line, what was not read and why) at the first problem; the user events read
/// before it are kept in `out`. Text after a complete user-event section is a warning.
fn read_tail<'a>(
    lines: &mut Lines<'a>,
    out: &mut ProfileFile<'a>,
    warnings: &mut Vec<(usize, String)>,
    n_timers: usize,
    text_len: usize,
) -> Result<(), (usize, String)> {
    const REST: &str = "the aggregates and user events (if any) were not read";
    let Some(l) = lines.next_line() else {
        return Err((
            lines.line_no + 1,
            format!(
                "file ends after the timer lines, before the `<k> aggregates` line (truncated, or still being written); {REST}"
            ),
        ));
    };
    if l.trim_start().starts_with('"') {
        return Err((
            lines.line_no,
            format!(
                "the header announces {n_timers} timer lines but this line is another timer line; expected `<k> aggregates`; the rest of the file was not read"
            ),
        ));
    }
    let n_aggregates = leading_count(l, "aggregates", lines.line_no)
        .map_err(|e| (lines.line_no, format!("{}; {REST}", e.message)))?;
    for _ in 0..n_aggregates {
        if lines.next_line().is_none() {
            return Err((
                lines.line_no + 1,
                "file ends inside the aggregates section (truncated?); user events (if any) were not read"
                    .into(),
            ));
        }
    }
    if n_aggregates > 0 {
        warnings.push((
            lines.line_no,
            format!("{n_aggregates} aggregate lines skipped (TAU aggregates are not read)"),
        ));
    }

    // Optional user-event section.
    let mut next = lines.next_line();
    while next.is_some_and(|s| s.trim().is_empty()) {
        next = lines.next_line();
    }
    let Some(l) = next else { return Ok(()) };
    const UE: &str = "user events were not read";
    let n_user = leading_count(l, "userevents", lines.line_no)
        .map_err(|e| (lines.line_no, format!("{}; {UE}", e.message)))?;
    let Some(h) = lines.next_line() else {
        return Err((
            lines.line_no + 1,
            format!(
                "file ends before the `# eventname numevents max min mean sumsqr` line (truncated?); the {n_user} {UE}"
            ),
        ));
    };
    if !h.starts_with('#') {
        return Err((
            lines.line_no,
            format!(
                "expected `# eventname numevents max min mean sumsqr`, found `{}`; the {n_user} {UE}",
                clip(h)
            ),
        ));
    }
    out.user_events.reserve(n_user.min(text_len / 12));
    for k in 0..n_user {
        let Some(l) = lines.next_line() else {
            return Err((
                lines.line_no + 1,
                format!(
                    "file ends after {k} of the {n_user} user event lines the header announces (truncated, or still being written); the other {} were not read",
                    n_user - k
                ),
            ));
        };
        if !lines.ended {
            return Err((
                lines.line_no,
                format!(
                    "file ends inside user event line {} of the {n_user} the header announces, before its line end (truncated, or still being written); it and the {} after it were not read",
                    k + 1,
                    n_user - k - 1
                ),
            ));
        }
        match parse_user_event(l, lines.line_no) {
            Ok(u) => out.user_events.push(u),
            Err(e) => {
                return Err((
                    lines.line_no,
                    format!(
                        "{}; this and the {} user event lines after it were not read",
                        e.message,
                        n_user - k - 1
                    ),
                ));
            }
        }
    }
    while let Some(l) = lines.next_line() {
        if !l.trim().is_empty() {
            warnings.push((
                lines.line_no,
                format!(
                    "unexpected text after the last of the {n_user} user events the header announces: `{}`; expected the end of the file (ignored)",
                    clip(l)
                ),
            ));
            break;
        }
    }
    Ok(())
}

/// The warnings of a parsed profile file, and what was left out of it, attached to its path.
pub(crate) fn file_warnings(
    path: &Path,
    f: &ProfileFile,
    out: &mut Vec<FileError>,
    partial: &mut Vec<FileError>,
) {
    for (line, msg) in &f.warnings {
        out.push(FileError::at_line(path, *line, msg.clone()));
    }
    for (line, msg) in &f.partial {
        partial.push(FileError::at_line(path, *line, msg.clone()));
    }
    let negatives: Vec<&TimerLine> = f
        .timers
        .iter()
        .filter(|t| t.exclusive < 0.0 || t.inclusive < 0.0 || t.calls < 0.0)
        .collect();
    if let Some(first) = negatives.first() {
        out.push(FileError::at_line(
            path,
            first.line,
            format!(
                "{} timer line(s) carry negative values (first: `{}`); kept as written (ParaProf shows them as 0)",
                negatives.len(),
                first.name.trim()
            ),
        ));
    }
    let dropped: Vec<&TimerLine> = f
        .timers
        .iter()
        .filter(|t| t.calls == 0.0 && (t.exclusive != 0.0 || t.inclusive != 0.0))
        .collect();
    if let Some(first) = dropped.first() {
        out.push(FileError::at_line(
            path,
            first.line,
            format!(
                "{} timer line(s) have 0 calls but non-zero values (first: `{}`); like ParaProf, the thread does not count as having these events and their values are left out",
                dropped.len(),
                first.name.trim()
            ),
        ));
    }
}

#[cfg(test)]
mod tests;
