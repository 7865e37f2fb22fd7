//! TAU's formats: text profiles (`profile.N.C.T`, `MULTI__<metric>/`), snapshot XML
//! (`snapshot.N.C.T`), the merged `tauprofile.xml` and incremental dumps
//! (`dump__<time>__.N.C.T`). Traces are recognized by [`mod@crate::detect`].

pub mod dumps;
pub mod merged;
pub mod metadata;
pub mod profile_text;
pub mod run;
pub mod snapshot;
pub mod xml_doc;
pub mod xml_split;

pub use profile_text::{ProfileFile, TimerLine, UserEventLine, parse_profile_file, parse_profile_text};
pub use run::{profile_file_thread, read_run, read_single_file};
pub use snapshot::{SnapshotStream, parse_snapshot, read_snapshot_run, read_snapshot_series};
