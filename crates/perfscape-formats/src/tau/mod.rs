//! TAU's formats. Text profiles (`profile.N.C.T`, `MULTI__<metric>/`) are read here; the
//! snapshot, merged-XML, dump and trace formats are recognized by [`mod@crate::detect`].

pub mod metadata;
pub mod profile_text;
pub mod run;

pub use profile_text::{ProfileFile, TimerLine, UserEventLine, parse_profile_file};
pub use run::{profile_file_thread, read_run, read_single_file};
