//! [`AppState`]: the run the server shows (or why it could not be opened), its samples over
//! time and trace, the cache, the session hub and the access rules.

use crate::access::Access;
use crate::cache::{CacheStats, ViewCache, default_budget, profile_bytes};
use crate::dashboard::Dashboards;
use crate::series::{SeriesSource, SeriesState};
use crate::share;
use perfscape_analysis::answers::TraceIndex;
use perfscape_analysis::compare::matching::{RunMatch, match_runs};
use perfscape_formats::{LoadReport, OpenOptions, Opened, Parts};
use perfscape_model::Profile;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// A run's profile and what loading it reported.
#[derive(Debug)]
pub struct Run {
    /// The profile (for a run over time: the final state, with the series' event ids).
    pub profile: Profile,
    /// Files read, rejected, loaded in part; warnings; notes.
    pub report: LoadReport,
}

/// A run served beside the main run for comparison (`serve A B...`): run B of the compare
/// panel.
pub struct ComparedRun {
    /// The path given on the command line.
    pub path: String,
    /// Its profile, or why it could not be opened.
    pub run: Result<Run, String>,
    /// Its match against the main run, computed on first use (or why the runs cannot be
    /// compared).
    matched: OnceLock<Result<RunMatch, String>>,
}

impl ComparedRun {
    /// A run to compare, as [`perfscape_formats::open`] gave it (only its profile is kept).
    pub fn new(path: impl Into<String>, opened: Result<Opened, String>) -> Self {
        Self {
            path: path.into(),
            run: opened.map(|o| Run {
                profile: o.profile,
                report: o.report,
            }),
            matched: OnceLock::new(),
        }
    }

    /// Its match against `main` (computed once).
    pub fn matched(&self, main: &Profile) -> Result<(&Profile, &RunMatch), String> {
        let run = self.run.as_ref().map_err(|e| format!("{}: {e}", self.path))?;
        let m = self
            .matched
            .get_or_init(|| match_runs(main, &run.profile).map_err(|e| e.to_string()));
        m.as_ref().map(|m| (&run.profile, m)).map_err(Clone::clone)
    }
}

/// Options of the [`AppState`] constructors.
#[derive(Debug, Default, Clone)]
pub struct StateOptions {
    /// A shared session (`serve --share`): the page joins the session hub and shows who is
    /// present.
    pub shared: bool,
    /// The access rules; default [`Access::local`] (no token, loopback names). A server that
    /// listens passes [`Access::new`] with its address.
    pub access: Access,
    /// The server's memory budget in bytes (the loaded runs and the cache); default 4 times
    /// the profile's approximate size or 1 GiB, whichever is larger.
    pub cache_memory: Option<u64>,
    /// What the process holds before it serves (its resident memory once the runs are loaded:
    /// [`crate::resident_bytes`]), counted in the budget instead of the profiles' estimated
    /// size when larger: the estimate counts the value columns and names, not the indexes,
    /// the program's own pages or the allocator's (217 MiB resident against an estimate of
    /// 111 MiB for a 16,384-rank run). `None`: the estimate alone.
    pub resident_bytes: Option<u64>,
    /// A store of runs (`perfscape store`, `serve --store DIR`): `GET /api/store` lists its
    /// runs and `POST /api/sql` with `"over": "store"` queries them (the `sql` feature).
    pub store: Option<PathBuf>,
    /// Dashboard files (`serve --dashboard FILE`): `GET /api/dashboard/{i}` reads file i, and a
    /// change of a file (or a file it includes) is pushed to every page.
    pub dashboards: Vec<PathBuf>,
    /// The page's layout from this dashboard file (`serve --layout FILE`, watched as the
    /// dashboards are) instead of the built-in one: `GET /api/layout`.
    pub layout: Option<PathBuf>,
    /// The derived metrics the run was loaded with (`NAME = EXPRESSION`): a dashboard that
    /// declares another says it is not computed.
    pub derived: Vec<String>,
    /// Derived metrics dashboards declare that could not be computed for this run, and why.
    pub underived: Vec<(String, String)>,
    /// What `--filter` hid from the run (every view says so in its head).
    pub filter: Option<crate::api::FilterInfo>,
    /// The category rules of `GET /api/categories` (`serve --rules FILE`: the file's rules
    /// before the defaults); `None`: the defaults.
    pub category_rules: Option<perfscape_analysis::categories::RuleSet>,
    /// The format `/api/run` names for a live run: `None` is `tau-snapshot (live)` (a watched
    /// or replayed directory); a streamed run (`serve --listen`) says `perfscape-stream (live)`.
    pub live_format: Option<&'static str>,
    /// Where `GET /api/source` reads the program's source files (`serve --source-dir`,
    /// `--source-map`); none by default, and then no file is read.
    pub sources: crate::sources::SourceRoots,
    /// The executable the run measured (`serve --binary PATH`): `GET /api/disasm` reads it.
    pub binary: Option<PathBuf>,
}

/// The state every request reads (see the module documentation).
pub struct AppState {
    pub(crate) path: String,
    pub(crate) run: Result<Run, String>,
    pub(crate) cache: ViewCache,
    /// The server's memory budget (bytes): the loaded runs and the cache together.
    pub(crate) budget: u64,
    /// Approximate bytes of the loaded runs' profiles (the run's and those compared with it),
    /// held outside the cache.
    pub(crate) loaded_bytes: u64,
    pub(crate) hub: share::Hub,
    pub(crate) shared: bool,
    pub(crate) series: SeriesState,
    pub(crate) trace: Option<TraceIndex>,
    pub(crate) compared: Vec<ComparedRun>,
    #[cfg_attr(not(feature = "sql"), allow(dead_code))]
    pub(crate) store: Option<PathBuf>,
    pub(crate) dashboards: Dashboards,
    pub(crate) filter: Option<crate::api::FilterInfo>,
    /// Where view computations run (at most one per core at a time).
    pub(crate) compute: crate::compute::Slots,
    /// The replay feeding the series (`serve --replay`).
    pub(crate) replay: Option<Arc<crate::replay::Replay>>,
    /// The rules of `GET /api/categories`.
    pub(crate) category_rules: Arc<perfscape_analysis::categories::RuleSet>,
    /// The format a live run is described as (see [`StateOptions::live_format`]).
    pub(crate) live_format: &'static str,
    /// The source roots of `GET /api/source`.
    pub(crate) sources: Arc<crate::sources::SourceRoots>,
    /// The executable of `GET /api/disasm`.
    pub(crate) binary: Option<Arc<PathBuf>>,
    access: Access,
}

impl AppState {
    /// State for the run at `path` as [`perfscape_formats::open`] gave it (or why it could not
    /// be opened: the page shows the message): the profile, and the samples over time and the
    /// trace when the run has them.
    pub fn new(path: impl Into<String>, opened: Result<Opened, String>, options: StateOptions) -> Arc<Self> {
        Self::with_compared(path, opened, Vec::new(), options)
    }

    /// [`AppState::new`] with other runs to compare the run with (`serve A B...`): the compare
    /// panel shows the run against each (`/api/diff?run=i`).
    pub fn with_compared(
        path: impl Into<String>,
        opened: Result<Opened, String>,
        compared: Vec<ComparedRun>,
        options: StateOptions,
    ) -> Arc<Self> {
        let (run, series, trace) = match opened {
            Ok(Opened {
                profile,
                series,
                trace,
                report,
            }) => (
                Ok(Run { profile, report }),
                series.map(|s| Arc::new(s) as Arc<dyn SeriesSource>),
                trace,
            ),
            Err(e) => (Err(e), None, None),
        };
        Self::build(path.into(), run, (series, false), trace, compared, options, None)
    }

    /// Opens the run at `path` with [`perfscape_formats::open`] (with its samples over time and
    /// its trace) and makes its state; a run that cannot be opened gives a state whose page
    /// says why.
    pub fn open(path: &Path, open: &OpenOptions<'_>, options: StateOptions) -> Arc<Self> {
        let open = OpenOptions {
            parts: Parts::ALL,
            ..*open
        };
        let opened = perfscape_formats::open(path, &open).map_err(|e| format!("cannot load {e}"));
        Self::new(path.display().to_string(), opened, options)
    }

    /// State for a live run whose samples arrive in `series` (a `perfscape_live` run's
    /// [`perfscape_live::SeriesHandle`]); the views read its newest sample, and `/api/run`
    /// says `waiting` until the first.
    pub fn live(path: impl Into<String>, series: Arc<dyn SeriesSource>, options: StateOptions) -> Arc<Self> {
        Self::build(
            path.into(),
            Err("waiting for the first sample of the live run".into()),
            (Some(series), true),
            None,
            Vec::new(),
            options,
            None,
        )
    }

    /// State for a finished run replayed as a live run (`serve --replay`): as
    /// [`AppState::live`] over the replay's series; the replay's events are pushed to the
    /// pages, a page's WebSocket resumes a replay held for it, and `POST /api/replay`
    /// restarts it.
    pub fn replayed(
        path: impl Into<String>,
        replay: Arc<crate::replay::Replay>,
        options: StateOptions,
    ) -> Arc<Self> {
        let series: Arc<dyn SeriesSource> = Arc::new(replay.series().clone());
        let state = Self::build(
            path.into(),
            Err("waiting for the first sample of the live run".into()),
            (Some(series), true),
            None,
            Vec::new(),
            options,
            Some(replay.clone()),
        );
        replay.follow(state.clone());
        state
    }

    fn build(
        path: String,
        run: Result<Run, String>,
        (series, live): (Option<Arc<dyn SeriesSource>>, bool),
        trace: Option<perfscape_model::Trace>,
        compared: Vec<ComparedRun>,
        options: StateOptions,
        replay: Option<Arc<crate::replay::Replay>>,
    ) -> Arc<Self> {
        let bytes = run.as_ref().map_or(0, |r| profile_bytes(&r.profile));
        let budget = options.cache_memory.unwrap_or_else(|| default_budget(bytes));
        // The budget holds the loaded runs too: the cache has what they leave.
        let loaded_bytes = bytes
            + compared
                .iter()
                .filter_map(|c| c.run.as_ref().ok())
                .map(|r| profile_bytes(&r.profile))
                .sum::<u64>();
        let loaded_bytes = loaded_bytes.max(options.resident_bytes.unwrap_or(0));

        let state = Arc::new(Self {
            path,
            run,
            cache: ViewCache::new(budget.saturating_sub(loaded_bytes)),
            budget,
            loaded_bytes,
            compute: crate::compute::Slots::per_core(),
            hub: share::Hub::default(),
            shared: options.shared,
            series: SeriesState::new(series, live),
            trace: trace.map(|t| TraceIndex::new(Arc::new(t))),
            compared,
            store: options.store,
            dashboards: Dashboards::new(
                options.dashboards,
                options.layout,
                options.derived,
                options.underived,
            ),
            filter: options.filter,
            category_rules: Arc::new(
                options
                    .category_rules
                    .unwrap_or_else(perfscape_analysis::categories::RuleSet::defaults),
            ),
            replay,
            live_format: options.live_format.unwrap_or("tau-snapshot (live)"),
            access: options.access,
            sources: Arc::new(options.sources),
            binary: options.binary.map(Arc::new),
        });
        if state.dashboards.has_files() {
            // The watcher holds the state weakly: it ends with the state.
            let weak = Arc::downgrade(&state);
            let started = state.dashboards.watch(move |index, revision| {
                if let Some(s) = weak.upgrade() {
                    let event =
                        serde_json::json!({ "event": "dashboard", "index": index, "revision": revision });
                    s.hub.broadcast(&share::ServerMessage::Event { event });
                }
            });
            if let Err(e) = started {
                eprintln!(
                    "perfscape: dashboards are not watched for changes (reload the page after an edit): {e}"
                );
            }
        }
        state
    }

    /// The session hub (broadcast server events to every browser through it).
    pub fn hub(&self) -> &share::Hub {
        &self.hub
    }

    /// The run's profile and report, or why it could not be opened.
    pub fn run(&self) -> Result<&Run, &str> {
        self.run.as_ref().map_err(String::as_str)
    }

    /// The run's samples over time (empty for runs without any).
    pub fn series(&self) -> &SeriesState {
        &self.series
    }

    /// The access rules.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// The cache's budget, size and computations so far.
    pub fn cache_stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// The server's memory budget (bytes) and the approximate bytes of the loaded runs in it;
    /// the cache has the rest ([`AppState::cache_stats`]), at least
    /// [`crate::cache::MIN_BUDGET`].
    pub fn memory_budget(&self) -> (u64, u64) {
        (self.budget, self.loaded_bytes)
    }
}

impl crate::replay::ReplayTarget for AppState {
    fn series_state(&self) -> &SeriesState {
        &self.series
    }

    fn pages(&self) -> &share::Hub {
        &self.hub
    }
}
