//! Runs side by side: matching the events, metrics and threads of two runs, their difference
//! per event and per thread (`perfscape diff`), repeated runs in groups with Welch's t-test
//! (`perfscape compare`), and scaling studies over runs at several process counts with
//! Extra-P's performance models (`perfscape scaling`).
//!
//! Module order (each uses only those before it): [`canonical`] (the identity of an event
//! across runs), [`matching`], [`diff`], [`groups`]; [`pmnf`] (Extra-P's single-parameter
//! modeler, on its own) and [`scaling`] (over `canonical`, `diff` and `pmnf`).

pub mod canonical;
pub mod diff;
pub mod groups;
pub mod matching;
pub mod pmnf;
pub mod scaling;
