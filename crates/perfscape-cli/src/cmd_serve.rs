//! `perfscape serve`: the browser views of a run.

use crate::args::Input;
use crate::loading;
use clap::Args;
use perfscape_server::series::SeriesSource;
use perfscape_server::{AppState, ServerConfig, StateOptions, bind, follow_live, random_token, router};
use std::io::IsTerminal;
use std::net::IpAddr;
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `perfscape serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    input: Input,
    /// Port to listen on (default: a free port chosen by the system).
    #[arg(long)]
    port: Option<u16>,
    /// Address to listen on. Anything but a loopback address requires --token.
    #[arg(long, default_value = "127.0.0.1")]
    bind: IpAddr,
    /// Access token every request must carry (`auto` = a random one, printed in the URL).
    #[arg(long)]
    token: Option<String>,
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
    /// Live mode on a finished run: its samples are written again progressively, at the run's
    /// own pace times --speed, into a temporary directory that is watched like --watch.
    #[arg(long)]
    replay: bool,
    /// With --replay: 1 = the run's own pace, 10 = ten times faster, 0 = as fast as possible.
    #[arg(long, default_value_t = 1.0, requires = "replay")]
    speed: f64,
    /// Live mode: seconds a sample waits for threads that have not written it yet.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    max_wait: f64,
    /// Live mode: the number of threads the run will have, if known (samples wait for them).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

/// Starts the live run of `--watch` / `--replay`.
fn start_live(args: &ServeArgs) -> anyhow::Result<perfscape_live::LiveRun> {
    if !(args.max_wait >= 0.0 && args.max_wait.is_finite()) {
        anyhow::bail!("--max-wait {} is not a number of seconds >= 0", args.max_wait);
    }
    let live = perfscape_live::LiveOptions {
        max_wait: Some(std::time::Duration::from_secs_f64(args.max_wait)),
        expected_threads: args.threads,
        ..Default::default()
    };
    Ok(if args.replay {
        perfscape_live::replay(
            &args.input.run,
            &perfscape_live::ReplayOptions {
                speed: args.speed,
                into: None,
                live,
            },
        )?
    } else {
        perfscape_live::watch(&args.input.run, &live)?
    })
}

fn open_browser(url: &str) {
    let desktop = std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some()
        || cfg!(target_os = "macos");
    if !desktop || !std::io::stdout().is_terminal() {
        return;
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// Runs `perfscape serve` until Ctrl-C.
pub fn run(args: &ServeArgs) -> anyhow::Result<ExitCode> {
    let live_run = if args.watch || args.replay {
        Some(Arc::new(start_live(args)?))
    } else {
        None
    };
    type Extra = (Option<Arc<dyn SeriesSource>>, Option<Arc<perfscape_model::Trace>>);
    let (loaded, (series, trace)): (Result<_, String>, Extra) = match &live_run {
        Some(run) => (
            Err("waiting for the first sample of the live run".into()),
            (Some(Arc::new(run.series().clone())), None),
        ),
        None => match loading::open_run(&args.input, true) {
            Ok(o) => (
                Ok(o.loaded),
                (
                    o.series.map(|s| Arc::new(s) as Arc<dyn SeriesSource>),
                    o.trace.map(Arc::new),
                ),
            ),
            Err(e) => {
                // The page shows the error too (never a blank page).
                eprintln!("perfscape: {e:#}");
                (Err(format!("{e:#}")), (None, None))
            }
        },
    };
    let partial = loaded.as_ref().map(|l| l.report.is_partial()).unwrap_or(false);
    let token = match args.token.as_deref() {
        Some("auto") => Some(random_token()),
        None if args.share => Some(random_token()),
        other => other.map(str::to_string),
    };
    let cfg = ServerConfig {
        bind: args.bind,
        port: args.port.unwrap_or(0),
        token: token.clone(),
    };
    let path = args.input.run.display().to_string();
    let samples = series.as_ref().map_or(0, |s| s.read().len());
    let state = AppState::with_options(
        path,
        loaded,
        token.clone(),
        StateOptions {
            shared: args.share,
            series,
            live: live_run.is_some(),
            trace,
        },
    );
    let follower = live_run
        .as_ref()
        .map(|run| follow_live(state.clone(), run.clone()));
    let live_dir = live_run.as_ref().map(|r| r.dir().to_path_buf());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async move {
        let listener = bind(&cfg).await?;
        let addr = listener.local_addr()?;
        let host = if addr.ip().is_unspecified() {
            "127.0.0.1".to_string()
        } else {
            addr.ip().to_string()
        };
        let host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host
        };
        let url = match &token {
            Some(t) => format!("http://{host}:{}/?token={t}", addr.port()),
            None => format!("http://{host}:{}/", addr.port()),
        };
        println!("perfscape: serving {} at {url}", args.input.run.display());
        if let Some(dir) = &live_dir {
            println!(
                "perfscape: live: {} {}; the views follow each sample as it arrives",
                if args.replay { "replaying into" } else { "watching" },
                dir.display()
            );
        } else if samples > 0 {
            println!(
                "perfscape: {samples} samples over time (Samples, Kiviat and sample slider in the page)"
            );
        }
        if args.share {
            println!("perfscape: shared session: everyone who opens this URL sees the same views");
        }
        println!("perfscape: press Ctrl-C to stop");
        open_browser(&url);
        axum::serve(listener, router(state))
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await?;
        anyhow::Ok(())
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
