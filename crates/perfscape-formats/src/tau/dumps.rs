//! TAU incremental dumps `dump__<ctime>__.<node>.<context>.<thread>` (`TAU_DB_DUMP_INCR()`).
//!
//! Each call writes every thread's profile so far, in the text format of `profile.N.C.T`
//! (read with [`super::profile_text::parse_profile_text`]), to a file named after the local
//! time in `ctime` form with dashes, e.g. `dump__Sat-Nov-21-19:41:49-2026__.0.0.0`: one-second
//! resolution, colons in the name, and each rank's own clock, so the same dump has different
//! names on different ranks (in the corpus run ranks 2 and 3 wrote their second dump at
//! `:50`, ranks 0 and 1 at `:51`). Dumps are therefore integrated **by position in each
//! thread's own order** ([`Alignment::ByPosition`]): the k-th dump of every thread is sample
//! k, named `dump k`. A thread's dumps are ordered by the time in their names (then by name).
//!
//! Timestamps: the name's time is local time; it is converted to µs since the epoch with
//! the UTC offset of the dump's `Local Time` metadata (`...+00:00`) when present, else read
//! as UTC (the report says so).

use super::profile_text::{ProfileFile, decode_text, file_warnings, parse_profile_text};
use crate::error::{FileError, LoadError, LoadReport};
use crate::format::{self, FileScope, Format, OpenOptions, Opened, Parts};
use perfscape_model::{
    Alignment, Integrator, IntegratorOptions, Metric, SampleSeries, ThreadId, ThreadSample, TimerDef,
    TimerSample, UserEventDef, UserEventSample,
};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// The time text and thread of a dump file name `dump__<ctime>__.N.C.T`.
pub fn dump_file_parts(name: &str) -> Option<(&str, ThreadId)> {
    let rest = name.strip_prefix("dump__")?;
    let (time, thread) = rest.rsplit_once("__.")?;
    Some((time, thread.parse().ok()?))
}

/// Seconds since the epoch of a dump name's time `Sat-Nov-21-19:41:49-2026`, read as UTC.
pub fn parse_dump_time(s: &str) -> Option<i64> {
    let parts: Vec<&str> = s.split('-').collect();
    let [_dow, mon, day, hms, year] = parts.as_slice() else {
        return None;
    };
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == mon)? as i64
        + 1;
    let day: i64 = day.parse().ok()?;
    let year: i64 = year.parse().ok()?;
    let hms: Vec<i64> = hms
        .split(':')
        .map(|x| x.parse().ok())
        .collect::<Option<Vec<_>>>()?;
    let [h, m, sec] = hms.as_slice() else {
        return None;
    };
    if !(1..=31).contains(&day) || !(0..24).contains(h) || !(0..60).contains(m) || !(0..61).contains(sec) {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + h * 3600 + m * 60 + sec)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The UTC offset in seconds of an ISO time ending in `+HH:MM` / `-HH:MM` / `Z`.
fn utc_offset_seconds(local_time: &str) -> Option<i64> {
    let s = local_time.trim();
    if s.ends_with('Z') {
        return Some(0);
    }
    let (sign, rest) = match s.len().checked_sub(6).and_then(|i| s.get(i..)) {
        Some(tail) if tail.starts_with('+') => (1, &tail[1..]),
        Some(tail) if tail.starts_with('-') => (-1, &tail[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':')?;
    Some(sign * (h.parse::<i64>().ok()? * 3600 + m.parse::<i64>().ok()? * 60))
}

/// Dump files by thread: `(seconds since the epoch read from the name, path)`, in order.
pub type DumpFiles = BTreeMap<ThreadId, Vec<(Option<i64>, PathBuf)>>;

/// The dump files of a directory: per thread, ordered by the time in their names.
pub fn list_dump_files(dir: &Path) -> Result<DumpFiles, LoadError> {
    let io = |source| LoadError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = DumpFiles::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let entry = entry.map_err(io)?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some((time, t)) = dump_file_parts(name)
            && entry.file_type().map(|t| !t.is_dir()).unwrap_or(false)
        {
            files
                .entry(t)
                .or_default()
                .push((parse_dump_time(time), entry.path()));
        }
    }
    for v in files.values_mut() {
        v.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    }
    Ok(files)
}

/// Converts one parsed dump into a thread sample.
fn to_sample(
    f: &ProfileFile<'_>,
    thread: ThreadId,
    k: usize,
    ctime_s: Option<i64>,
    warnings: &mut Vec<String>,
) -> ThreadSample {
    let metric = f.metric_name().unwrap_or("Time").to_string();
    let metadata: Vec<(String, String)> = f
        .metadata
        .iter()
        .filter(|(k, _)| k != "Metric Name")
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let offset = metadata
        .iter()
        .find(|(k, _)| k == "Local Time")
        .and_then(|(_, v)| utc_offset_seconds(v));
    if offset.is_none() {
        warnings.push(
            "no UTC offset in the `Local Time` metadata: the time in the file name is read as UTC".into(),
        );
    }
    let timestamp_us = ctime_s.map_or(0, |s| (s - offset.unwrap_or(0)) * 1_000_000);
    let mut timers = Vec::with_capacity(f.timers.len());
    let mut values = Vec::with_capacity(2 * f.timers.len());
    for (i, t) in f.timers.iter().enumerate() {
        timers.push(TimerSample {
            def: Arc::new(TimerDef {
                id: u32::try_from(i).unwrap_or(u32::MAX),
                name: t.name.to_string(),
                groups: t.groups.to_string(),
            }),
            calls: t.calls,
            subcalls: t.subcalls,
        });
        values.extend([t.exclusive, t.inclusive]);
    }
    let user_events = f
        .user_events
        .iter()
        .enumerate()
        .filter(|(_, u)| u.count != 0.0)
        .map(|(i, u)| UserEventSample {
            def: Arc::new(UserEventDef {
                id: u32::try_from(i).unwrap_or(u32::MAX),
                name: u.name.to_string(),
            }),
            count: u.count,
            max: u.max,
            min: u.min,
            mean: u.mean,
            sum_squares: u.sum_squares,
        })
        .collect();
    ThreadSample {
        thread,
        name: format!("dump {k}"),
        timestamp_us,
        metrics: Arc::new(vec![Metric::tau(metric)]),
        metadata: Some(Arc::new(metadata)),
        timers,
        timer_values: values,
        user_events,
    }
}

type ParsedDump = Result<(DumpFile, u64), FileError>;

/// One dump file read by [`parse_dump`].
#[derive(Debug)]
pub struct DumpFile {
    /// The thread's sample.
    pub sample: ThreadSample,
    /// Problems with data that loaded.
    pub warnings: Vec<FileError>,
    /// What was left out: the timers are complete, but the user events after this point were
    /// not read (a truncated or damaged tail; a file still being written looks like this).
    pub partial: Vec<FileError>,
}

/// Parses one dump file (its bytes; `path` names it in messages) into the sample `dump k` of
/// `thread`, timestamped with `ctime_s` (the seconds read from the file name by
/// [`parse_dump_time`]; timestamp 0 and a warning when `None`). Errors when the file is not a
/// valid TAU text profile up to the end of its timer section (e.g. still being written).
pub fn parse_dump(
    bytes: &[u8],
    path: &Path,
    thread: ThreadId,
    k: usize,
    ctime_s: Option<i64>,
) -> Result<DumpFile, FileError> {
    let (text, utf8) = decode_text(bytes);
    let mut f = parse_profile_text(&text).map_err(|e| e.in_file(path))?;
    f.warnings.splice(0..0, utf8);
    let (mut warnings, mut partial) = (Vec::new(), Vec::new());
    file_warnings(path, &f, &mut warnings, &mut partial);
    if ctime_s.is_none() {
        warnings.push(FileError::whole(
            path,
            "the time in the file name is not of the form Dow-Mon-DD-HH:MM:SS-YYYY; timestamp 0",
        ));
    }
    let mut notes = Vec::new();
    let sample = to_sample(&f, thread, k, ctime_s, &mut notes);
    warnings.extend(notes.into_iter().map(|n| FileError::whole(path, n)));
    Ok(DumpFile {
        sample,
        warnings,
        partial,
    })
}

/// Integrates the incremental dumps of a directory into a series (by per-thread position,
/// see the module documentation).
fn read_dumps_series(dir: &Path, opts: &OpenOptions<'_>) -> Result<(SampleSeries, LoadReport), LoadError> {
    let files = list_dump_files(dir)?;
    if files.is_empty() {
        return Err(LoadError::UnknownFormat {
            path: dir.to_path_buf(),
            detail: "no TAU incremental dumps here: expected dump__<time>__.<node>.<context>.<thread> files"
                .into(),
        });
    }
    let jobs: Vec<(ThreadId, usize, Option<i64>, PathBuf)> = files
        .iter()
        .flat_map(|(t, v)| {
            v.iter()
                .enumerate()
                .map(move |(k, (time, p))| (*t, k + 1, *time, p.clone()))
        })
        .collect();
    opts.progress_start(jobs.len() as u64);
    let pool = opts.thread_pool(dir)?;
    let parsed: Vec<ParsedDump> = pool.install(|| {
        jobs.par_iter()
            .map(|(t, k, time, p)| {
                let r = crate::input::read_member(p).and_then(|bytes| {
                    let d = parse_dump(&bytes, p, *t, *k, *time)?;
                    Ok((d, bytes.len() as u64))
                });
                if let Some(sink) = opts.progress {
                    sink.advance(1);
                }
                r
            })
            .collect()
    });
    opts.progress_finish();
    let mut report = LoadReport {
        format: "tau-dumps",
        ..LoadReport::default()
    };
    let mut integ = Integrator::new(IntegratorOptions {
        alignment: Alignment::ByPosition,
        max_wait: None,
        window: None,
    });
    for t in files.keys() {
        integ.expect_thread(*t);
    }
    let now = Instant::now();
    let mut utc_note = false;
    for ((t, k, _, p), r) in jobs.iter().zip(parsed) {
        match r {
            Ok((
                DumpFile {
                    sample,
                    warnings,
                    partial,
                },
                bytes,
            )) => {
                report.files_read += 1;
                report.bytes_read += bytes;
                report.partial_files.extend(partial);
                for w in warnings {
                    if w.message.contains("read as UTC") {
                        if utc_note {
                            continue;
                        }
                        utc_note = true;
                    }
                    report.warnings.push(w);
                }
                if let Err(e) = integ.push(sample, now) {
                    report.bad_files.push(FileError::whole(p, e.to_string()));
                }
            }
            Err(e) => {
                integ.skip_sample(*t);
                report.bad_files.push(FileError {
                    message: format!(
                        "{} (dump {k} of thread {t}; that sample will miss this thread)",
                        e.message
                    ),
                    ..e
                });
            }
        }
    }
    let (series, ireport) = integ.finish();
    if series.is_empty() {
        return Err(LoadError::NothingLoaded {
            path: dir.to_path_buf(),
            errors: report.bad_files,
        });
    }
    super::snapshot::integration_notes(&series, &ireport, dir, &mut report);
    report.notes.push(
        "dumps are integrated by each thread's own order (dump k of every thread = sample k): their names carry each rank's own 1-second clock".into(),
    );
    Ok((series, report))
}

/// TAU incremental dumps: a directory of `dump__<time>__.N.C.T` text profiles, each a
/// thread's cumulative state at a time.
pub const FORMAT: Format = Format {
    name: "tau-dumps",
    description: "TAU incremental dumps (dump__<time>__.N.C.T files)",
    example: "tau-real/mpi-stencil-np4-dumpincr",
    sniff: |p| {
        p.names()
            .is_some_and(|n| n.iter().any(|n| dump_file_parts(n).is_some()))
    },
    read: format::Read::Path(read_dumps),
    gives: Parts {
        series: true,
        trace: false,
    },
    file_scope: FileScope::File,
};

/// Reads the dumps of a run: the series of samples and, as the profile, its final state
/// (each thread's last dump).
fn read_dumps(dir: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let (series, report) = read_dumps_series(dir, opts)?;
    crate::tau::series_opened(dir, series, report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_dump_names_and_times() {
        let (time, t) = dump_file_parts("dump__Sat-Nov-21-19:41:49-2026__.3.0.12").unwrap();
        assert_eq!((time, t), ("Sat-Nov-21-19:41:49-2026", ThreadId::new(3, 0, 12)));
        // 2026-11-21T19:41:49Z, computed independently with `date -u -d ... +%s`.
        assert_eq!(parse_dump_time(time), Some(1_795_290_109));
        assert_eq!(parse_dump_time("Thu-Jan-01-00:00:00-1970"), Some(0));
        assert_eq!(parse_dump_time("Tue-Feb-29-12:00:00-2028"), Some(1_835_438_400));
        for bad in [
            "",
            "Sat-Nov-21-19:41-2026",
            "Sat-Foo-21-19:41:49-2026",
            "Sat-Nov-41-19:41:49-2026",
        ] {
            assert_eq!(parse_dump_time(bad), None, "{bad}");
        }
        assert!(dump_file_parts("dump__x__.a.0.0").is_none());
        assert!(dump_file_parts("profile.0.0.0").is_none());
        assert_eq!(utc_offset_seconds("2026-11-21T19:41:44+00:00"), Some(0));
        assert_eq!(utc_offset_seconds("2026-11-21T20:41:44+01:00"), Some(3600));
        assert_eq!(utc_offset_seconds("2026-11-21T14:11:44-05:30"), Some(-19_800));
        assert_eq!(utc_offset_seconds("2026-11-21T19:41:44Z"), Some(0));
        assert_eq!(utc_offset_seconds("19:41"), None);
    }
}
