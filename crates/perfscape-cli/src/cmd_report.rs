//! `perfscape report RUN [--dashboard FILE]... -o report.html`: one self-contained HTML file of
//! the run's dashboards (the page and its answers inlined, see `perfscape_server::report`)
//! that opens from `file://` with no server. Without `--dashboard`, the overview dashboard
//! shipped in the binary (`report.toml`: ranked events, run information, hot spots, time per
//! thread, imbalance, the selected event on every thread).

use crate::args::Input;
use crate::{dashboards, loading};
use clap::Args;
use perfscape_formats::Opened;
use perfscape_server::{AppState, StateOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// The dashboard of a report made without `--dashboard`.
const DEFAULT_DASHBOARD: &str = include_str!("report.toml");
/// Its file name in the temporary directory it is written to.
const DEFAULT_FILE: &str = "overview.toml";

/// The path of the default dashboard as the answers show it.
fn files_shown(tmp: &tempfile::TempDir) -> String {
    tmp.path().join(DEFAULT_FILE).display().to_string()
}

/// Every `path` (and `source` prefix) in `v` equal to `from` becomes `to`.
fn rename_path(v: &mut serde_json::Value, from: &str, to: &str) {
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                match x {
                    serde_json::Value::String(s)
                        if (k == "path" || k == "source" || k == "file") && s.starts_with(from) =>
                    {
                        *s = s.replacen(from, to, 1);
                    }
                    _ => rename_path(x, from, to),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| rename_path(x, from, to)),
        _ => {}
    }
}

/// `perfscape report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    #[command(flatten)]
    input: Input,
    /// A dashboard file to put in the report (repeatable; default: an overview of the run).
    #[arg(long, value_name = "FILE")]
    dashboard: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
}

/// Writes the report; exit 3 when some input files could not be loaded.
pub fn run(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    // The default dashboard is written to a temporary directory (dashboards are files).
    let tmp = tempfile::tempdir()?;
    let files = if args.dashboard.is_empty() {
        let f = tmp.path().join(DEFAULT_FILE);
        std::fs::write(&f, DEFAULT_DASHBOARD)?;
        vec![f]
    } else {
        args.dashboard.clone()
    };
    let declared = dashboards::declared(&files, &args.input.load.derive)?;
    let o = loading::open_run(&args.input, true)?;
    let filter = o.filter.as_ref().map(perfscape_server::api::FilterInfo::from);
    let opened = Opened {
        profile: o.loaded.profile,
        series: o.series,
        trace: o.trace,
        report: o.loaded.report,
    };
    let partial = opened.report.is_partial();
    let (opened, made) = dashboards::apply(opened, &declared);
    let mut derived = args.input.load.derive.clone();
    derived.extend(made.derived);
    let source = args.input.run.display().to_string();
    let state = AppState::new(
        source.clone(),
        Ok(opened),
        StateOptions {
            dashboards: files,
            derived,
            underived: made.underived,
            filter,
            ..Default::default()
        },
    );
    let generated = now_utc();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let mut data = rt.block_on(perfscape_server::report::record(
        &state,
        perfscape_server::router(state.clone()),
        &source,
        generated,
    ))?;
    if args.dashboard.is_empty() {
        // The default dashboard's temporary file is no place a reader can open.
        let temp = files_shown(&tmp);
        for a in data.answers.values_mut() {
            rename_path(&mut a.body, &temp, "overview (built into perfscape report)");
        }
    }
    let html = perfscape_server::report::html(&data)?;
    std::fs::write(&args.output, &html)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", args.output.display()))?;
    eprintln!(
        "perfscape: wrote {} ({:.1} MB, {} answers recorded); open it in a browser, no server needed",
        args.output.display(),
        html.len() as f64 / 1e6,
        data.answers.len()
    );
    for c in &data.cut {
        eprintln!("perfscape: not every selection is in the report: {c}");
    }
    Ok(if partial {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// The time now, UTC, to the minute (`2026-11-26 18:45 UTC`).
fn now_utc() -> String {
    let t = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    format!("{} UTC", t.get(..16).unwrap_or(&t).replace('T', " "))
}
