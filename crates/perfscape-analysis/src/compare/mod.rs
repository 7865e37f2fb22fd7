//! Comparisons of several runs: [`pmnf`] fits scaling models in Extra-P's normal form.

pub mod pmnf;
