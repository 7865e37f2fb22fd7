//! The runs a session's tables are built from.

use perfscape_formats::Opened;
use perfscape_model::trace::Trace;
use perfscape_model::{Profile, SampleSeries};
use std::ops::Deref;
use std::sync::Arc;

/// What the tables read of one run: its profile and, when the run has them, its samples over
/// time and its trace. Implemented for [`Opened`] (the CLI) and by the server over its state,
/// so the tables borrow the loaded columns instead of copying them.
pub trait RunData: Send + Sync {
    /// The profile (for a run over time: its final state, with the series' event ids).
    fn profile(&self) -> &Profile;
    /// The samples over time (TAU snapshots, incremental dumps), if any: a guard, so a
    /// series that grows while the program runs (the server's live mode) is read under its
    /// lock for as long as the guard lives (one table unit).
    fn series(&self) -> Option<Box<dyn Deref<Target = SampleSeries> + '_>> {
        None
    }
    /// The trace (nested intervals per thread), if any.
    fn trace(&self) -> Option<&Trace> {
        None
    }
}

impl RunData for Opened {
    fn profile(&self) -> &Profile {
        &self.profile
    }
    fn series(&self) -> Option<Box<dyn Deref<Target = SampleSeries> + '_>> {
        self.series
            .as_ref()
            .map(|s| Box::new(s) as Box<dyn Deref<Target = SampleSeries>>)
    }
    fn trace(&self) -> Option<&Trace> {
        self.trace.as_ref()
    }
}

impl RunData for Profile {
    fn profile(&self) -> &Profile {
        self
    }
}

/// One run of a [`RunSet`]: its number in the set (the `run` column of every table), a name,
/// where it was read from, the format name, and its data.
#[derive(Clone)]
pub struct RunEntry {
    /// The `run` column: position in the set, from 0.
    pub run: u32,
    /// A short name, unique in the set (by default the input's file name).
    pub name: String,
    /// The path the run was opened from, as given.
    pub source: String,
    /// The format read (a [`perfscape_formats::Format`] name).
    pub format: String,
    /// Tags (`key`, `value`) the user gave the run (`perfscape store add --tag`), in order.
    pub tags: Vec<(String, String)>,
    /// The data.
    pub data: Arc<dyn RunData>,
}

impl std::fmt::Debug for RunEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunEntry")
            .field("run", &self.run)
            .field("name", &self.name)
            .field("source", &self.source)
            .field("format", &self.format)
            .field("tags", &self.tags)
            .finish_non_exhaustive()
    }
}

/// The runs one session queries, numbered from 0 in the order added.
#[derive(Clone, Debug, Default)]
pub struct RunSet {
    runs: Vec<RunEntry>,
}

impl RunSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a run read from `source` in `format`; its name is the last component of `source`
    /// (made unique with `#2`, `#3`, ... when another run has it). Returns its `run` number.
    pub fn add(&mut self, source: &str, format: &str, data: Arc<dyn RunData>) -> u32 {
        let base = std::path::Path::new(source)
            .file_name()
            .map_or_else(|| source.to_string(), |n| n.to_string_lossy().into_owned());
        let mut name = base.clone();
        let mut k = 2;
        while self.runs.iter().any(|r| r.name == name) {
            name = format!("{base}#{k}");
            k += 1;
        }
        let run = u32::try_from(self.runs.len()).unwrap_or(u32::MAX);
        self.runs.push(RunEntry {
            run,
            name,
            source: source.to_string(),
            format: format.to_string(),
            tags: Vec::new(),
            data,
        });
        run
    }

    /// Adds a run as [`RunSet::add`] does, with `tags`.
    pub fn add_tagged(
        &mut self,
        source: &str,
        format: &str,
        tags: Vec<(String, String)>,
        data: Arc<dyn RunData>,
    ) -> u32 {
        let run = self.add(source, format, data);
        if let Some(e) = self.runs.last_mut() {
            e.tags = tags;
        }
        run
    }

    /// Gives every run of the set the tags `tags` (replacing those it had).
    pub fn set_tags(&mut self, tags: &[(String, String)]) {
        for r in &mut self.runs {
            r.tags = tags.to_vec();
        }
    }

    /// The runs in `run` order.
    pub fn runs(&self) -> &[RunEntry] {
        &self.runs
    }

    /// True when no run was added.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}
