//! The source view: a file's text with the heat of every line and the line statistics of
//! PerfVisS (seed 000, sections 2.1.2–2.2.1): per line the sum, mean, minimum and maximum
//! across threads with the threads that hold them and the standard deviation; the routine
//! ranges; and the seed's line overview (empty runs of lines skipped, lines binned by MAX or
//! SUM).
//!
//! Pure: the caller reads the file (only under its source roots) and passes the text, or the
//! reason it has none, which the answer carries as a note.

use super::SummaryJson;
use crate::error::ViewError;
use crate::lines::{LineTable, TableFile, line_summary, line_values};
use crate::params::Values;
use crate::views::Reduce;
use perfscape_model::{EventId, Profile, ThreadIndex};
use serde::{Deserialize, Serialize};

/// What a line's heat is: a statistic of its values across threads, or one thread's value.
///
/// The `heat` parameter of `GET /api/source`; default `sum`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum LineHeat {
    /// The values combined across threads by the metric's rule (the sum for time).
    #[default]
    Sum,
    /// The mean over all threads of the run (a thread without the line counts as 0).
    Mean,
    /// The largest value of a thread.
    Max,
    /// The value of the thread given by `thread`.
    Thread,
}

/// The text of the file, as the caller found it under its source roots, or why there is none.
#[derive(Clone, Copy, Debug)]
pub enum SourceText<'a> {
    /// The text and where it was read.
    Found {
        /// Path of the file read (shown to the user).
        path: &'a str,
        /// Its text (UTF-8).
        text: &'a str,
    },
    /// No text; the note says why (not found under the roots, refused, no roots given).
    Missing(&'a str),
}

/// Options of the source view.
#[derive(Clone, Copy, Debug, Default)]
pub struct SourceOptions {
    /// What each line's heat is.
    pub heat: LineHeat,
    /// The thread of [`LineHeat::Thread`].
    pub thread: Option<ThreadIndex>,
    /// The overview skips runs of more than this many lines without values (default 10,
    /// the seed skipped runs of more than 50 in a 94,824-line program).
    pub skip: Option<u32>,
    /// Lines per overview bin (default 1).
    pub bin: Option<u32>,
    /// How an overview bin combines its lines' heat: MAX keeps peaks, SUM shows the extent of
    /// a hot loop (the seed's two schemes); default MAX.
    pub reduce: Reduce,
}

/// One sampled line.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LineJson {
    /// Line number (1-based).
    pub line: u32,
    /// The line's heat (see [`LineHeat`]); `null` when the chosen thread has no value there.
    pub heat: Option<f64>,
    /// The line's `[SAMPLE]` events, largest total first: the first is the one a click selects.
    pub events: Vec<u32>,
    /// The line's statistics across threads.
    pub stats: SummaryJson,
}

/// A routine's source range (a timer whose name carries a location).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RoutineJson {
    /// The timer's event id.
    pub event: u32,
    /// Its name without the location.
    pub name: String,
    /// First line.
    pub start: u32,
    /// Last line.
    pub end: u32,
}

/// One bin of the line overview: lines `first..=last`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct LineBinJson {
    /// First line.
    pub first: u32,
    /// Last line.
    pub last: u32,
    /// The heat of its lines combined (MAX or SUM); `null` when none has a value.
    pub value: Option<f64>,
    /// Lines without values skipped just before this bin (a run longer than `skip`).
    pub skipped_before: u32,
}

/// A file the run names, with its totals.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SourceFileJson {
    /// The name as the run writes it.
    pub name: String,
    /// Sampled lines.
    pub lines: u32,
    /// Routines with a range.
    pub routines: u32,
    /// Sum of its lines' values over every thread (the metric's rule across threads).
    pub total: Option<f64>,
}

/// `GET /api/source`: a source file with the heat and statistics of its lines.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SourceResponse {
    /// The file shown, as the run names it (`null` when the run names no source file).
    pub file: Option<String>,
    /// Every file the run names, largest total first.
    pub files: Vec<SourceFileJson>,
    /// Where its text was read.
    pub path: Option<String>,
    /// The text, when found under the source roots.
    pub text: Option<String>,
    /// Why there is no text, when there is none.
    pub note: Option<String>,
    /// Lines of the text (without text: the last line the run names).
    pub line_count: u32,
    /// The sampled lines, in line order.
    pub lines: Vec<LineJson>,
    /// The routine ranges, by start line.
    pub routines: Vec<RoutineJson>,
    /// The line overview over `1..=line_count`.
    pub overview: Vec<LineBinJson>,
    /// Lines without values skipped after the overview's last bin.
    pub skipped_at_end: u32,
    /// What the heat is.
    pub heat: LineHeat,
    /// The thread of `heat = thread`.
    pub thread: Option<String>,
    /// Largest heat of a line (the colour scale's top).
    pub max: Option<f64>,
    /// The metric's name.
    pub metric: String,
    /// Unit of the values.
    pub unit: String,
    /// True when the server has the executable (`serve --binary`): `GET /api/disasm` gives the
    /// instructions of a line. [`source_view`] leaves it false; the server sets it.
    pub disasm: bool,
}

/// The file a request names: `file` when given, else the file holding `event`'s line, else the
/// file with the largest total.
///
/// # Errors
/// [`ViewError::NotFound`] for a `file` the run does not name (which also keeps a request from
/// naming any other path).
pub fn source_file<'t>(
    table: &'t LineTable,
    profile: &Profile,
    file: Option<&str>,
    event: Option<u32>,
    values: Values,
) -> Result<Option<&'t TableFile>, ViewError> {
    if let Some(name) = file {
        return table.file(name).map(Some).ok_or_else(|| {
            ViewError::not_found(format!(
                "the run names no source file `{name}` (it names {})",
                names(table)
            ))
        });
    }
    if let Some(src) = event
        .filter(|&e| (e as usize) < profile.events().len())
        .and_then(|e| profile.event(EventId(e)).source())
        && let Some(f) = table.file(src.file)
    {
        return Ok(Some(f));
    }
    Ok(files_json(table, profile, values)
        .first()
        .and_then(|f| table.file(&f.name)))
}

fn names(table: &LineTable) -> String {
    if table.files.is_empty() {
        return "none".into();
    }
    let mut s: Vec<String> = table
        .files
        .iter()
        .take(8)
        .map(|f| format!("`{}`", f.name))
        .collect();
    if table.files.len() > 8 {
        s.push(format!("and {} more", table.files.len() - 8));
    }
    s.join(", ")
}

/// The files of `table` with their totals, largest first (then by name).
pub fn files_json(table: &LineTable, profile: &Profile, values: Values) -> Vec<SourceFileJson> {
    let mut out: Vec<SourceFileJson> = table
        .files
        .iter()
        .map(|f| {
            let mut total: Option<f64> = None;
            for l in &f.lines {
                let s = line_summary(profile, &line_values(profile, &l.events, values), values);
                if s.threads > 0 && s.total.is_finite() {
                    total = Some(total.unwrap_or(0.0) + s.total);
                }
            }
            SourceFileJson {
                name: f.name.clone(),
                lines: f.lines.len() as u32,
                routines: f.routines.len() as u32,
                total,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        crate::stats::larger_first(a.total.unwrap_or(f64::NAN), b.total.unwrap_or(f64::NAN))
            .then_with(|| a.name.cmp(&b.name))
    });
    out
}

/// The source view of `file` (see the module documentation).
///
/// # Errors
/// [`ViewError::Invalid`] for `heat = thread` without a thread.
pub fn source_view(
    profile: &Profile,
    table: &LineTable,
    file: Option<&TableFile>,
    text: SourceText<'_>,
    values: Values,
    options: SourceOptions,
) -> Result<SourceResponse, ViewError> {
    let thread = match (options.heat, options.thread) {
        (LineHeat::Thread, None) => {
            return Err(ViewError::invalid("heat=thread needs a thread: thread=N.C.T"));
        }
        (LineHeat::Thread, t) => t,
        _ => None,
    };
    let files = files_json(table, profile, values);
    let unit = values.unit(profile.metrics());
    let metric = profile.metric(values.metric).name.clone();
    let Some(f) = file else {
        return Ok(SourceResponse {
            file: None,
            files,
            path: None,
            text: None,
            note: Some(
                "the run names no source lines: no [SAMPLE] events or timers with a source location".into(),
            ),
            line_count: 0,
            lines: Vec::new(),
            routines: Vec::new(),
            overview: Vec::new(),
            skipped_at_end: 0,
            heat: options.heat,
            thread: None,
            max: None,
            metric,
            unit,
            disasm: false,
        });
    };
    let lines: Vec<LineJson> = f
        .lines
        .iter()
        .map(|l| {
            let lv = line_values(profile, &l.events, values);
            let s = line_summary(profile, &lv, values);
            let heat = match options.heat {
                LineHeat::Sum => (s.threads > 0 && s.total.is_finite()).then_some(s.total),
                LineHeat::Mean => (s.threads > 0).then_some(s.mean_all),
                LineHeat::Max => (s.threads > 0).then_some(s.max),
                LineHeat::Thread => thread.and_then(|t| lv.of(t)).filter(|v| !v.is_nan()),
            };
            let mut events: Vec<(u32, f64)> = l
                .events
                .iter()
                .map(|&e| {
                    let s = line_summary(profile, &line_values(profile, &[e], values), values);
                    (e.0, s.total)
                })
                .collect();
            events.sort_by(|a, b| crate::stats::larger_first(a.1, b.1).then(a.0.cmp(&b.0)));
            LineJson {
                line: l.line,
                heat,
                events: events.into_iter().map(|e| e.0).collect(),
                stats: SummaryJson::of(profile, &s),
            }
        })
        .collect();
    let (path, text_out, note, line_count) = match text {
        SourceText::Found { path, text } => (
            Some(path.to_string()),
            Some(text.to_string()),
            None,
            text.lines().count() as u32,
        ),
        SourceText::Missing(why) => (None, None, Some(why.to_string()), f.last_line()),
    };
    let max = lines.iter().filter_map(|l| l.heat).reduce(f64::max);
    let (overview, skipped_at_end) = line_overview(&lines, line_count.max(f.last_line()), options);
    Ok(SourceResponse {
        file: Some(f.name.clone()),
        files,
        path,
        text: text_out,
        note,
        line_count,
        lines,
        routines: f
            .routines
            .iter()
            .map(|r| RoutineJson {
                event: r.event.0,
                name: r.name.clone(),
                start: r.start,
                end: r.end,
            })
            .collect(),
        overview,
        skipped_at_end,
        heat: options.heat,
        thread: thread.map(|t| profile.thread(t).to_string()),
        max,
        metric,
        unit,
        disasm: false,
    })
}

/// The seed's overview of lines `1..=count` (section 2.2.1): runs of more than `skip` lines
/// without heat are skipped (counted in the next bin's `skipped_before`), the remaining lines
/// are cut into bins of `bin` consecutive lines, each the MAX or SUM of its lines' heat. Gives
/// the bins and the lines skipped after the last one.
fn line_overview(lines: &[LineJson], count: u32, o: SourceOptions) -> (Vec<LineBinJson>, u32) {
    let skip = o.skip.unwrap_or(10);
    let per = o.bin.unwrap_or(1).max(1);
    let heat = |i: usize| lines.get(i).and_then(|l| l.heat);
    let mut out = Vec::new();
    let mut next = 0usize; // index into `lines` of the first line >= the current line
    let mut line = 1u32;
    let mut skipped = 0u32;
    while line <= count {
        while next < lines.len() && lines[next].line < line {
            next += 1;
        }
        let next_hot = lines[next..]
            .iter()
            .find(|l| l.heat.is_some())
            .map_or(count + 1, |l| l.line);
        let gap = next_hot.min(count + 1) - line;
        if gap > skip {
            skipped += gap;
            line += gap;
            continue;
        }
        let last = (line + per - 1).min(count);
        let mut value: Option<f64> = None;
        let mut i = next;
        while i < lines.len() && lines[i].line <= last {
            if let Some(h) = heat(i) {
                value = o.reduce.combine(value, h);
            }
            i += 1;
        }
        out.push(LineBinJson {
            first: line,
            last,
            value,
            skipped_before: std::mem::take(&mut skipped),
        });
        line = last + 1;
    }
    (out, skipped)
}
