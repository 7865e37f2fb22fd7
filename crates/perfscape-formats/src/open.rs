//! [`open`]: the one way to open a run, whatever its format.

use crate::error::{LoadError, LoadReport};
use crate::{Detected, Loaded, LoadedSeries, OpenOptions};
use perfscape_model::{Profile, SampleSeries, Trace};
use std::path::Path;

/// An opened run: the profile, the samples over time and the trace when the input has them
/// (and [`OpenOptions::parts`] asked for them), and the report of what was read.
#[derive(Debug)]
pub struct Opened {
    /// The integrated profile. For a run observed over time it is the series' final state
    /// (each thread's last sample), with the series' event ids.
    pub profile: Profile,
    /// The samples over time (TAU snapshots, incremental dumps), when asked for and present.
    pub series: Option<SampleSeries>,
    /// The trace (Chrome Trace Event JSON), when asked for and present.
    pub trace: Option<Trace>,
    /// Files read, files rejected with reasons, files loaded in part, warnings, notes.
    pub report: LoadReport,
}

impl Opened {
    /// The profile and the report, without the series and the trace.
    pub fn into_loaded(self) -> Loaded {
        Loaded {
            profile: self.profile,
            report: self.report,
        }
    }
}

impl From<Loaded> for Opened {
    fn from(l: Loaded) -> Self {
        Opened {
            profile: l.profile,
            series: None,
            trace: None,
            report: l.report,
        }
    }
}

/// Opens a run (a file or a directory): detects its format from the content (or takes
/// [`OpenOptions::format`]), reads it once, and returns the profile with the samples over time
/// and the trace when the input has them and [`OpenOptions::parts`] asks for them.
///
/// A request for the profile only ([`crate::Parts::PROFILE`]) is answered from the cache when
/// [`OpenOptions::cache`] allows (see [`crate::cache`]).
///
/// # Errors
/// When the path cannot be read, its format is not recognized or not read by perfscape, the
/// named format is unknown, or no file of the run could be loaded. A run where only some files
/// are bad opens, with those files in [`LoadReport::bad_files`].
pub fn open(path: &Path, opts: &OpenOptions<'_>) -> Result<Opened, LoadError> {
    let detected = match opts.format {
        Some(name) => {
            if !crate::detect::FORMAT_NAMES.contains(&name) {
                return Err(LoadError::UnknownFormatName(name.to_string()));
            }
            None
        }
        None => Some(crate::detect(path)?),
    };
    let is = |name: &str, d: &[Detected]| match (opts.format, detected) {
        (Some(f), _) => f == name,
        (None, Some(x)) => d.contains(&x),
        _ => false,
    };
    if opts.parts.series
        && (is(
            "tau-snapshot",
            &[Detected::TauSnapshotRun, Detected::TauSnapshotFile],
        ) || is("tau-dumps", &[Detected::TauDumps]))
    {
        let LoadedSeries { series, mut report } = if is("tau-dumps", &[Detected::TauDumps]) {
            crate::tau::dumps::read_dumps_series(path, opts)?
        } else {
            crate::tau::read_snapshot_series(path, opts)?
        };
        let profile = series.final_profile().map_err(|source| LoadError::Build {
            path: path.to_path_buf(),
            source,
        })?;
        report
            .notes
            .push("the profile is the final state: each thread's last sample (cumulative values)".into());
        return Ok(Opened {
            profile,
            series: Some(series),
            trace: None,
            report,
        });
    }
    if opts.parts.trace && is("chrome", &[Detected::ChromeTrace]) {
        let (trace, loaded) = crate::chrome::read_trace(path, opts)?;
        return Ok(Opened {
            trace: Some(trace),
            ..Opened::from(loaded)
        });
    }
    let loaded = match opts.format {
        Some(f) => crate::load_as(path, f, opts),
        None => crate::load(path, opts),
    }?;
    Ok(loaded.into())
}
