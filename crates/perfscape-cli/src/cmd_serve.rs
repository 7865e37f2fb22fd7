//! `perfscape serve`: the browser views of a run.

use crate::{Input, loading};
use clap::Args;
use perfscape_server::{AppState, ServerConfig, StateOptions, bind, random_token, router};
use std::io::IsTerminal;
use std::net::IpAddr;
use std::process::ExitCode;
use std::sync::{Arc, RwLock};

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
    let (loaded, series) = match loading::open_run(&args.input, true) {
        Ok((l, s)) => (Ok(l), s),
        Err(e) => {
            // The page shows the error too (never a blank page).
            eprintln!("perfscape: {e:#}");
            (Err(format!("{e:#}")), None)
        }
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
    let samples = series.as_ref().map_or(0, |s| s.len());
    let state = AppState::with_options(
        path,
        loaded,
        token.clone(),
        StateOptions {
            shared: args.share,
            series: series.map(|s| Arc::new(RwLock::new(s))),
            live: false,
        },
    );
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
        if samples > 0 {
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
    Ok(if partial {
        ExitCode::from(crate::EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}
