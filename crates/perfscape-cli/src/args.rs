//! The arguments every command shares (what to read, how to print) and the exit statuses.

use clap::{Args, ValueEnum};
use perfscape_analysis::compare::diff::Normalize;
use perfscape_model::ValueKind;
use std::path::PathBuf;

/// Exit status when the output was produced but some input files could not be loaded.
pub const EXIT_PARTIAL: u8 = 3;

/// Output format of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Human-readable tables (default).
    Table,
    /// Comma-separated values with a header row; values in the metric's own unit.
    Csv,
    /// One JSON document; values in the metric's own unit.
    Json,
}

/// What to read and how.
#[derive(Args, Debug, Clone)]
pub struct Input {
    /// Run directory or profile file to read.
    pub run: PathBuf,
    /// How to read it.
    #[command(flatten)]
    pub load: LoadOptions,
}

/// How to read a run (every option of [`Input`] but the run): commands that read several runs
/// (`diff`, `compare`, `scaling`) apply them to each.
#[derive(Args, Debug, Clone)]
pub struct LoadOptions {
    /// Read the input as this format instead of detecting it from the content.
    #[arg(long, value_name = "NAME")]
    pub input_format: Option<FormatArg>,
    /// Analyze one sample of a run observed over time (TAU snapshots or incremental dumps)
    /// instead of its final state: the sample's name (`iteration 40`, `final`), its sequence
    /// number (0 = first), or `last`.
    #[arg(long, value_name = "SAMPLE")]
    pub sample: Option<String>,
    /// With --sample: the change since each thread's previous sample instead of the values
    /// accumulated since the program started.
    #[arg(long, requires = "sample")]
    pub delta: bool,
    /// Worker threads for parsing (default: one per core).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Show every load warning (by default the first 5 are shown).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Show metrics counted in processor cycles as time (nanoseconds) at this clock
    /// frequency: a number in Hz (e.g. 2.1e9), or `metadata` for the `CPU MHz` the profile
    /// records.
    #[arg(long, value_name = "HZ|metadata")]
    pub clock_hz: Option<String>,
    /// Add a derived metric, `NAME = EXPRESSION` over the measured metrics, e.g.
    /// `IPC = PAPI_TOT_INS / PAPI_TOT_CYC` or `'Off CPU = TIME - CPU_TIME'`: computed per
    /// (event, thread) from the exclusive values and from the inclusive ones, then shown like
    /// any metric. Metric names with other characters than letters, digits and `_` go in
    /// double quotes; + - * / and parentheses. A division by zero gives no value (counted on
    /// stderr). May be given several times; each may use the ones before it.
    #[arg(long, value_name = "NAME = EXPRESSION")]
    pub derive: Vec<String>,
    /// Show only some events: `name=GLOB` / `group=GLOB` show what matches (and its callers),
    /// `!name=GLOB` / `!group=GLOB` hide what matches (and the call-tree nodes below it),
    /// `exclusive<P%` / `inclusive<P%` hide events under P percent of the run's total of the
    /// first time metric, `threads>Kx` shows only the threads whose total exceeds K times the
    /// mean thread total (the outliers). May be given several times; the number of events and
    /// threads hidden is printed.
    #[arg(long, value_name = "RULE")]
    pub filter: Vec<String>,
    /// Neither read nor write the cache of loaded profiles (by default a valid cache entry of
    /// an earlier load is read, else the files are read and an entry written in the cache
    /// directory; nothing is written beside the input; see CACHE.md).
    #[arg(long, conflicts_with = "refresh_cache")]
    pub no_cache: bool,
    /// Read the files even when a valid cache exists, and rewrite the cache.
    #[arg(long)]
    pub refresh_cache: bool,
    /// The cache directory (default: $PERFSCAPE_CACHE_DIR, else perfscape/ in the user's
    /// cache directory, e.g. ~/.cache/perfscape). Its entries are kept under
    /// $PERFSCAPE_CACHE_MAX_BYTES (default 2G), least recently used removed first.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

/// Arguments every reporting command takes.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// What to read.
    #[command(flatten)]
    pub input: Input,
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Do not shorten long event names in tables.
    #[arg(long)]
    pub wide: bool,
}

/// A format of the registry, as `--input-format` takes it: the values, their help and the
/// parsing come from `perfscape_formats::registry::FORMATS`.
#[derive(Clone, Copy, Debug)]
pub struct FormatArg(pub &'static perfscape_formats::Format);

impl ValueEnum for FormatArg {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: std::sync::LazyLock<Vec<FormatArg>> = std::sync::LazyLock::new(|| {
            perfscape_formats::registry::FORMATS
                .iter()
                .map(|f| FormatArg(f))
                .collect()
        });
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(self.0.name).help(self.0.description))
    }
}

/// Value kind on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    /// Exclusive value (time in the event itself).
    Exclusive,
    /// Inclusive value (time in the event and what it calls).
    Inclusive,
    /// Number of calls.
    Calls,
    /// Number of child calls.
    Subcalls,
}

impl From<Kind> for ValueKind {
    fn from(k: Kind) -> Self {
        match k {
            Kind::Exclusive => ValueKind::Exclusive,
            Kind::Inclusive => ValueKind::Inclusive,
            Kind::Calls => ValueKind::Calls,
            Kind::Subcalls => ValueKind::Subcalls,
        }
    }
}

/// `--normalize` on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum NormalizeArg {
    /// The total over each run's threads.
    Total,
    /// The total divided by each run's number of threads.
    PerThread,
}

impl From<NormalizeArg> for Normalize {
    fn from(n: NormalizeArg) -> Self {
        match n {
            NormalizeArg::Total => Normalize::Total,
            NormalizeArg::PerThread => Normalize::PerThread,
        }
    }
}

/// What the commands over several runs (`diff`, `compare`, `scaling`) study.
#[derive(Args, Debug, Clone)]
pub struct Study {
    /// Metric (default: the first time metric of the first run); every run must have it, in
    /// the same unit.
    #[arg(long, short = 'm')]
    pub metric: Option<String>,
    /// The value studied.
    #[arg(long, value_enum, default_value_t = Kind::Exclusive)]
    pub by: Kind,
    /// Number of events to list (0 = all).
    #[arg(short = 'n', long = "number", default_value_t = 20)]
    pub n: usize,
    /// Also study callpath events (`a => b`).
    #[arg(long)]
    pub callpaths: bool,
}

impl Study {
    /// How many of `total` rows to list.
    pub fn take(&self, total: usize) -> usize {
        if self.n == 0 { total } else { self.n.min(total) }
    }
}

/// How a command prints (for commands without one run's [`Common`]).
#[derive(Args, Debug, Clone)]
pub struct Output {
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = OutputFormat::Table)]
    pub format: OutputFormat,
    /// Do not shorten long event names in tables.
    #[arg(long)]
    pub wide: bool,
}
