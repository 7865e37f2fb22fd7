//! TAU's formats: text profiles (`profile.N.C.T`, `MULTI__<metric>/`), snapshot XML
//! (`snapshot.N.C.T`), the merged `tauprofile.xml` and incremental dumps
//! (`dump__<time>__.N.C.T`) and traces (`tautrace.N.C.T.trc` + `events.N.edf`, [`trace`]).

pub mod dumps;
pub mod merged;
pub mod metadata;
pub mod profile_text;
pub mod run;
pub mod snapshot;
pub mod trace;
pub mod xml_doc;
pub mod xml_split;

pub use profile_text::{ProfileFile, TimerLine, UserEventLine, parse_profile_file, parse_profile_text};
pub use run::profile_file_thread;
pub use snapshot::{SnapshotStream, parse_snapshot};

use crate::error::{LoadError, LoadReport};
use crate::format::Opened;
use perfscape_model::SampleSeries;
use std::path::Path;

/// The [`Opened`] run of a series of samples: the series, and its final state (each thread's
/// last sample) as the profile, with the series' event ids.
fn series_opened(path: &Path, series: SampleSeries, mut report: LoadReport) -> Result<Opened, LoadError> {
    let profile = series.final_profile().map_err(|source| LoadError::Build {
        path: path.to_path_buf(),
        source,
    })?;
    report
        .notes
        .push("the profile is the final state: each thread's last sample (cumulative values)".into());
    Ok(Opened {
        profile,
        series: Some(series),
        trace: None,
        report,
    })
}
