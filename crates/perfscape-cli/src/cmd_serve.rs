//! `perfscape serve`: the browser views of a run.

use crate::args::{Input, LoadOptions};
use crate::{dashboards, loading};
use clap::Args;
use perfscape_formats::Opened;
use perfscape_server::series::SeriesSource;
use perfscape_server::{
    AppState, ComparedRun, ServerConfig, StateOptions, bind, follow_live, random_token, router,
};
use std::io::IsTerminal;
use std::net::IpAddr;
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `perfscape serve` (and of `perfscape record`).
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Run directory or profile file to read (with --listen: the name the streamed run is
    /// shown under; default the address).
    #[arg(value_name = "RUN")]
    run: Option<std::path::PathBuf>,
    /// How to read it.
    #[command(flatten)]
    load: LoadOptions,
    /// Other runs to compare the run with (`serve A B C`): the page's compare panel shows A
    /// against the one picked (read with the same options as A; profiles only).
    #[arg(value_name = "RUN_B", conflicts_with_all = ["watch", "replay", "listen"])]
    compare: Vec<std::path::PathBuf>,
    /// A store of runs (`perfscape store add --store DIR`) to serve beside the run: the run
    /// information lists its runs, and SQL (`POST /api/sql` with `"over": "store"`) queries
    /// them.
    #[cfg(feature = "sql")]
    #[arg(long, value_name = "DIR")]
    store: Option<std::path::PathBuf>,
    /// A dashboard file (TOML: panels of SQL queries or built-in views, each drawn by a
    /// component; `examples/dashboards/`, README "Dashboards"): the page's dashboard menu
    /// shows it, and an edit of the file reaches every open page within a second. Repeatable.
    #[arg(long, value_name = "FILE")]
    dashboard: Vec<std::path::PathBuf>,
    /// The page's layout from this dashboard file instead of the built-in one (which is itself
    /// a dashboard file: `GET /api/layout`, README "Dashboards"); watched as `--dashboard`.
    #[arg(long, value_name = "FILE")]
    layout: Option<std::path::PathBuf>,
    /// A category rule file for the categories panel (`perfscape categories --rules`): its
    /// rules before the defaults.
    #[arg(long, value_name = "FILE")]
    rules: Option<std::path::PathBuf>,
    #[command(flatten)]
    sources: crate::cmd_source::SourceDirs,
    #[command(flatten)]
    binary: crate::cmd_source::BinaryArg,
    /// Port to listen on (default: a free port chosen by the system).
    #[arg(long)]
    port: Option<u16>,
    /// Address to listen on. Anything but a loopback address needs the access token (the
    /// default).
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Access token every request must carry (default: a random one, printed in the URL and
    /// kept in a cookie; `auto` = the same).
    #[arg(long, value_name = "TOKEN|auto")]
    token: Option<String>,
    /// No access token: any program on this machine may read the views. Loopback addresses
    /// only.
    #[arg(long, conflicts_with_all = ["token", "share"])]
    no_token: bool,
    /// Also answer requests that name the server NAME (a host name or address of this
    /// machine); by default only the bound address, localhost, 127.0.0.1 and `[::1]` are
    /// accepted (any IP address when bound to 0.0.0.0 or ::). Repeatable.
    #[arg(long, value_name = "NAME")]
    allow_host: Vec<String>,
    /// The server's memory budget: the loaded runs, the views kept between requests
    /// (pyramids, row sets, thread axes, sample profiles; least recently used dropped) and
    /// those being computed: bytes, or with a suffix K, M, G, T (powers of 1024), e.g. 512M or
    /// 2G. Default: 4 times the profile's size or 1G, whichever is larger.
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    cache_memory: Option<u64>,
    /// Do not try to open the URL in a browser (it is opened on a desktop session otherwise).
    #[arg(long)]
    no_open: bool,
    /// Shared session: every browser that opens the printed URL (it carries an unguessable
    /// token) sees the others' selection, cursor and views, and who is present. With --bind
    /// ADDR colleagues on other machines can join.
    #[arg(long)]
    share: bool,
    /// Live mode: RUN is a directory a running program writes TAU snapshots (or incremental
    /// dumps) into; the views follow each sample as it arrives (pushed to every browser).
    #[arg(long, conflicts_with = "replay")]
    watch: bool,
    /// On-line ingest: listen at ADDR (`tcp://HOST:PORT`, or a Unix socket path such as
    /// `unix:/tmp/perfscape.sock`) for running programs that stream their records (one
    /// connection per thread; `STREAM.md`, `producers/`); the views follow each
    /// sample as with --watch. Beyond loopback, producers give the access token in their hello.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["watch", "replay"])]
    listen: Option<perfscape_live::ListenAddr>,
    /// With --listen: a program to run (after `--`, e.g. `-- mpirun -np 8 ./app`) with
    /// `PERFSCAPE_STREAM` set to the address (and `PERFSCAPE_TOKEN` beyond loopback), so its
    /// producers connect; the run stays served after it ends.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<std::ffi::OsString>,
    /// Live mode on a finished run: its samples are written again progressively, at the run's
    /// own pace times --speed, into a temporary directory that is watched like --watch.
    #[arg(long)]
    replay: bool,
    /// With --replay: 1 = the run's own pace, 10 = ten times faster, 0 = as fast as possible.
    #[arg(long, default_value_t = 1.0, requires = "replay")]
    speed: f64,
    /// With --replay: write the run's first sample, then wait until a page connects before
    /// replaying the rest (a fast replay would otherwise finish before the page opens). Any
    /// page can start the replay again from its first sample ("replay from start").
    #[arg(long, requires = "replay")]
    wait_for_page: bool,
    /// Live mode: seconds a sample waits for threads that have not written it yet (and threads
    /// without a `final` snapshot are given up this long after the final sample).
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    max_wait: f64,
    /// Live mode: the number of threads the run will have, if known (samples wait for them).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Live mode: keep the values of at most N samples, so memory stays flat however long the
    /// run is followed; beyond, older samples are thinned to an even spacing that doubles as
    /// the run grows (their intervals folded into the next kept sample's deltas) while the
    /// newest N/2 stay whole. 0 keeps every sample.
    #[arg(long, value_name = "N", default_value_t = perfscape_live::DEFAULT_SAMPLE_WINDOW)]
    sample_window: usize,
}

impl ServeArgs {
    /// The run to read (or, with --listen, its name) and how.
    fn input(&self) -> Input {
        let run = match (&self.run, &self.listen) {
            (Some(r), _) => r.clone(),
            (None, Some(perfscape_live::ListenAddr::Tcp(a))) => format!("tcp://{a}").into(),
            (None, Some(perfscape_live::ListenAddr::Unix(p))) => p.clone(),
            (None, None) => std::path::PathBuf::new(),
        };
        Input {
            run,
            load: self.load.clone(),
        }
    }
}

/// Runs `perfscape record [--listen ADDR] ... -- COMMAND`: `serve --listen` on a Unix socket
/// in a new temporary directory (removed at the end) unless --listen is given, with COMMAND
/// started once the server is up.
pub fn run_record(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    if args.command.is_empty() {
        anyhow::bail!(
            "nothing to record: give the program after `--` (perfscape record -- mpirun -np 8 ./app)"
        );
    }
    let mut args = args.clone();
    let _dir;
    if args.listen.is_none() {
        let dir = tempfile::Builder::new().prefix("perfscape-record-").tempdir()?;
        args.listen = Some(perfscape_live::ListenAddr::Unix(dir.path().join("stream.sock")));
        _dir = dir;
    }
    if args.run.is_none() {
        args.run = Some(args.command[0].clone().into());
    }
    run(&args)
}

/// Resolves on the first Ctrl-C (SIGINT), or SIGTERM on Unix, so that the server stops
/// gracefully and what it made is removed (`record`'s temporary directory and socket); a second
/// signal while it stops exits at once (status 130).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut int), Ok(mut term)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
        else {
            // No handler: Ctrl-C ends the process as it would without one.
            return std::future::pending().await;
        };
        tokio::select! { _ = int.recv() => {}, _ = term.recv() => {} }
        tokio::spawn(async move {
            tokio::select! { _ = int.recv() => {}, _ = term.recv() => {} }
            std::process::exit(130);
        });
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        tokio::spawn(async {
            let _ = tokio::signal::ctrl_c().await;
            std::process::exit(130);
        });
    }
}

/// Parses a byte count: digits with an optional suffix K, M, G or T (powers of 1024; `KiB`,
/// `MB`, ... accepted alike).
fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let shift = match suffix
        .trim()
        .to_ascii_uppercase()
        .trim_end_matches('B')
        .trim_end_matches('I')
    {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => {
            return Err(format!(
                "`{s}`: expected bytes, or a number with K, M, G or T (e.g. 512M, 2G)"
            ));
        }
    };
    let n: f64 = num
        .parse()
        .map_err(|_| format!("`{s}`: expected bytes, or a number with K, M, G or T (e.g. 512M, 2G)"))?;
    let bytes = n * (1u64 << shift) as f64;
    if !(bytes.is_finite() && bytes >= 0.0 && bytes < u64::MAX as f64) {
        return Err(format!("`{s}` is not a size in bytes"));
    }
    Ok(bytes as u64)
}

/// Prints a line to stdout, ignoring a closed stdout (`perfscape serve | head -1` must not
/// stop the server).
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

/// A live run: watched (`--watch`) or replayed (`--replay`).
enum Live {
    Watched(Arc<perfscape_live::LiveRun>),
    Replayed(Arc<perfscape_server::replay::Replay>),
}

impl Live {
    fn stop(&self) {
        match self {
            Live::Watched(run) => run.stop(),
            Live::Replayed(r) => r.stop(),
        }
    }
}

/// Starts the live run of `--watch` / `--replay` / `--listen`.
fn start_live(args: &ServeArgs, input: &Input, token: Option<&str>) -> anyhow::Result<Live> {
    if !(args.max_wait >= 0.0 && args.max_wait.is_finite()) {
        anyhow::bail!("--max-wait {} is not a number of seconds >= 0", args.max_wait);
    }
    let live = perfscape_live::LiveOptions {
        max_wait: Some(std::time::Duration::from_secs_f64(args.max_wait)),
        expected_threads: args.threads,
        sample_window: (args.sample_window > 0).then_some(args.sample_window),
        ..Default::default()
    };
    if let Some(addr) = &args.listen {
        let opts = perfscape_live::StreamOptions {
            live,
            token: token.map(str::to_string),
            ..Default::default()
        };
        return Ok(Live::Watched(Arc::new(perfscape_live::listen(addr, &opts)?)));
    }
    Ok(if args.replay {
        let opts = perfscape_live::ReplayOptions {
            speed: args.speed,
            into: None,
            live,
        };
        let plan = perfscape_live::ReplayPlan::from_dir(&input.run)?;
        Live::Replayed(perfscape_server::replay::Replay::start(
            plan,
            opts,
            args.wait_for_page,
        )?)
    } else {
        Live::Watched(Arc::new(perfscape_live::watch(&input.run, &live)?))
    })
}

/// Opens `url` in the desktop's browser when there is a desktop and a terminal (not from a
/// script or a test).
fn open_browser(url: &str) {
    let desktop = std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some()
        || cfg!(target_os = "macos")
        || cfg!(target_os = "windows");
    if desktop
        && std::io::stdout().is_terminal()
        && let Err(e) = opener::open_browser(url)
    {
        eprintln!("perfscape: could not open a browser ({e}); open the URL above");
    }
}

/// Runs `perfscape serve` until Ctrl-C.
pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    if args.run.is_none() && args.listen.is_none() {
        anyhow::bail!(
            "give the run to serve (a run directory or profile file), or --listen ADDR for programs that stream"
        );
    }
    if !args.command.is_empty() && args.listen.is_none() {
        anyhow::bail!("a command after `--` needs --listen ADDR (or use `perfscape record -- COMMAND`)");
    }
    let input = args.input();
    #[cfg(feature = "sql")]
    if let Some(dir) = &args.store
        && !dir.join(perfscape_sql::store::CATALOG).is_file()
    {
        anyhow::bail!(
            "--store {}: no store of runs here (no {}); make one with `perfscape store add RUN... --store {0}`",
            dir.display(),
            perfscape_sql::store::CATALOG
        );
    }
    let live_mode = args.watch || args.replay || args.listen.is_some();
    if live_mode && !(input.load.derive.is_empty() && input.load.filter.is_empty()) {
        // Not silently ignored: a live run's samples are served as measured.
        anyhow::bail!(
            "--derive/--filter apply to a run read whole, not yet to the samples of a live run (--watch/--replay): serve the run without them, or serve the finished run with them"
        );
    }
    let with_layout: Vec<std::path::PathBuf> = args.dashboard.iter().chain(&args.layout).cloned().collect();
    let declared = dashboards::declared(&with_layout, &input.load.derive)?;
    let token = match args.token.as_deref() {
        _ if args.no_token => None,
        None | Some("auto") => Some(random_token()),
        Some(t) => Some(t.to_string()),
    };
    let live_run = if live_mode {
        Some(start_live(args, &input, token.as_deref())?)
    } else {
        None
    };
    let mut filter = None;
    let opened: Option<Result<Opened, String>> = match &live_run {
        Some(_) => None,
        None => Some(match loading::open_run(&input, true) {
            Ok(o) => {
                filter = o.filter.as_ref().map(perfscape_server::api::FilterInfo::from);
                Ok(Opened {
                    profile: o.loaded.profile,
                    series: o.series,
                    trace: o.trace,
                    report: o.loaded.report,
                })
            }
            Err(e) => {
                // The page shows the error too (never a blank page).
                eprintln!("perfscape: {e:#}");
                Err(format!("{e:#}"))
            }
        }),
    };
    let mut derived = input.load.derive.clone();
    let mut underived = Vec::new();
    let opened = opened.map(|o| {
        o.map(|o| {
            let (o, made) = dashboards::apply(o, &declared);
            derived.extend(made.derived);
            underived.extend(made.underived);
            o
        })
    });
    if live_run.is_some() {
        underived.extend(declared.iter().map(|d| {
            (
                d.clone(),
                "a live run's samples have no derived metrics".to_string(),
            )
        }));
    }
    let mut partial = matches!(&opened, Some(Ok(o)) if o.report.is_partial());
    let mut compared = Vec::new();
    for path in &args.compare {
        let opened = match loading::open_path(path, &input.load, false) {
            Ok(o) => {
                partial |= o.loaded.report.is_partial();
                Ok(o.loaded)
            }
            Err(e) => {
                eprintln!("perfscape: {e:#}");
                Err(format!("{e:#}"))
            }
        };
        compared.push(ComparedRun::new(path.display().to_string(), opened));
    }
    let samples = match (&opened, &live_run) {
        (Some(Ok(o)), _) => o.series.as_ref().map_or(0, |s| s.len()),
        _ => 0,
    };
    let cfg = ServerConfig {
        bind: args.bind,
        port: args.port.unwrap_or(0),
        token: token.clone(),
        allow_hosts: args.allow_host.clone(),
    };
    // A streamed run without a name is named by the address it listens on (the port chosen).
    let path = match (&args.run, &live_run) {
        (None, Some(Live::Watched(run))) => run.dir().display().to_string(),
        _ => input.run.display().to_string(),
    };
    let live_dir = live_run.as_ref().and_then(|r| match r {
        Live::Watched(run) => Some(run.dir().to_path_buf()),
        Live::Replayed(r) => r.dir(),
    });
    let category_rules = match &args.rules {
        Some(_) => Some(crate::cmd_categories::rules(args.rules.as_ref())?),
        None => None,
    };
    let sources = args.sources.roots()?;
    if let Some(b) = &args.binary.binary
        && !b.is_file()
    {
        anyhow::bail!("--binary {}: not a file", b.display());
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let follower = rt.block_on(async {
        let listener = bind(&cfg).await?;
        let addr = listener.local_addr()?;
        let options = StateOptions {
            shared: args.share,
            access: cfg.access(addr),
            cache_memory: args.cache_memory,
            resident_bytes: perfscape_server::resident_bytes(),
            #[cfg(feature = "sql")]
            store: args.store.clone(),
            #[cfg(not(feature = "sql"))]
            store: None,
            dashboards: args.dashboard.clone(),
            layout: args.layout.clone(),
            derived,
            underived,
            filter,
            category_rules: category_rules.clone(),
            live_format: args.listen.as_ref().map(|_| "perfscape-stream (live)"),
            sources: sources.clone(),
            binary: args.binary.binary.clone(),
        };
        let (state, follower) = match (&live_run, opened) {
            (Some(Live::Watched(run)), _) => {
                let series: Arc<dyn SeriesSource> = Arc::new(run.series().clone());
                let state = AppState::live(path.clone(), series, options);
                let follower = follow_live(state.clone(), run.clone());
                (state, Some(follower))
            }
            (Some(Live::Replayed(r)), _) => (AppState::replayed(path.clone(), r.clone(), options), None),
            (None, opened) => (
                AppState::with_compared(
                    path.clone(),
                    opened.unwrap_or_else(|| Err("nothing to serve".into())),
                    compared,
                    options,
                ),
                None,
            ),
        };
        let host = if addr.ip().is_unspecified() {
            "127.0.0.1".to_string()
        } else {
            perfscape_server::access::url_host(addr.ip())
        };
        let url = match &token {
            Some(t) => format!("http://{host}:{}/?token={t}", addr.port()),
            None => format!("http://{host}:{}/", addr.port()),
        };
        say!("perfscape: serving {path} at {url}");
        if let Some(dir) = &live_dir {
            say!(
                "perfscape: live: {} {}; the views follow each sample as it arrives",
                if args.replay {
                    "replaying into"
                } else if args.listen.is_some() {
                    "listening for producers at"
                } else {
                    "watching"
                },
                dir.display()
            );
            if args.wait_for_page {
                say!("perfscape: live: the replay waits at its first sample until a page connects");
            }
        } else if samples > 0 {
            say!("perfscape: {samples} samples over time (Samples, Kiviat and sample slider in the page)");
        }
        if args.share {
            say!("perfscape: shared session: everyone who opens this URL sees the same views");
        }
        say!("perfscape: press Ctrl-C to stop");
        if !args.command.is_empty()
            && let Some(Live::Watched(run)) = &live_run
        {
            let addr = match &args.listen {
                Some(perfscape_live::ListenAddr::Unix(p)) => format!("unix:{}", p.display()),
                _ => run.dir().display().to_string(),
            };
            let beyond_loopback =
                matches!(&args.listen, Some(perfscape_live::ListenAddr::Tcp(a)) if !a.ip().is_loopback());
            crate::cmd_record::spawn_producer(
                &args.command,
                &addr,
                token.as_deref().filter(|_| beyond_loopback),
            )?;
        }
        if !args.no_open {
            open_browser(&url);
        }
        axum::serve(listener, router(state))
            .with_graceful_shutdown(stop_signal())
            .await?;
        anyhow::Ok(follower)
    })?;
    if let Some(run) = &live_run {
        run.stop();
    }
    if let Some(f) = follower {
        let _ = f.join();
    }
    Ok(if partial {
        ExitCode::from(crate::args::EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_with_suffixes() {
        assert_eq!(parse_bytes("1048576"), Ok(1 << 20));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("2G"), Ok(2 << 30));
        assert_eq!(parse_bytes("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_bytes("64kb"), Ok(64 << 10));
        assert!(parse_bytes("lots").is_err());
        assert!(parse_bytes("5X").is_err());
    }
}
