//! `perfscape watch` and `perfscape replay`: one line per integrated sample, as it arrives
//! (like `tail -f` for profiles). Built on `perfscape_live`.

use crate::fmt;
use clap::{Args, ValueEnum};
use perfscape_live::{
    FinishReason, LiveEvent, LiveOptions, LiveRun, ReplayOptions, SampleEvent, StopHandle, TopChange, replay,
    top_changes, watch,
};
use perfscape_model::{MetricId, ThreadId, Unit};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// How `watch` and `replay` print.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LineFormat {
    /// One aligned text line per sample, with a header (default).
    Table,
    /// One JSON object per line (`seq`, `name`, `timestamp_us`, `threads`, `expected`,
    /// `complete`, `missing`, `metric`, `top`); late parts as `{"event":"amended",...}`.
    Json,
}

/// Options shared by `watch` and `replay`.
#[derive(Args, Debug)]
pub struct LiveArgs {
    /// Output format.
    #[arg(long, short = 'f', value_enum, default_value_t = LineFormat::Table)]
    format: LineFormat,
    /// Seconds a sample waits for threads that have not written it yet; then it is printed
    /// with them missing (their parts are added later, printed as `amended`). Threads that
    /// wrote no `final` snapshot are given up this long after the final sample went out.
    #[arg(long, value_name = "SECS", default_value_t = 10.0)]
    max_wait: f64,
    /// Number of events per line (those whose exclusive value of the first metric grew most
    /// in the interval, summed over threads).
    #[arg(long, short = 'n', default_value_t = 3)]
    top: usize,
    /// The number of threads the run will have, if known: samples wait for that many to
    /// appear (at most --max-wait).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
    /// Poll the directory every MS milliseconds instead of using file-system notifications
    /// (for file systems where they do not work, such as NFS).
    #[arg(long, value_name = "MS")]
    poll_ms: Option<u64>,
    /// Also print threads appearing and ending and other notes on stderr.
    #[arg(long, short = 'v')]
    verbose: bool,
}

/// Arguments of `perfscape watch`.
#[derive(Args, Debug)]
pub struct WatchArgs {
    /// Run directory the program writes its snapshot.N.C.T files (or dump__* files) into.
    run: PathBuf,
    #[command(flatten)]
    live: LiveArgs,
}

/// Arguments of `perfscape replay`.
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// A finished run directory with snapshot.N.C.T files (or dump__* files).
    run: PathBuf,
    /// Speed: 1 = the run's own pace (its timestamps), 10 = ten times faster, 0 = as fast as
    /// possible.
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// Write the replayed run into this (new or empty) directory and keep it, instead of a
    /// temporary directory.
    #[arg(long, value_name = "DIR")]
    into: Option<PathBuf>,
    #[command(flatten)]
    live: LiveArgs,
}

fn live_options(a: &LiveArgs) -> anyhow::Result<LiveOptions> {
    if !(a.max_wait >= 0.0 && a.max_wait.is_finite()) {
        anyhow::bail!("--max-wait {} is not a number of seconds >= 0", a.max_wait);
    }
    let mut o = LiveOptions {
        max_wait: Some(Duration::from_secs_f64(a.max_wait)),
        expected_threads: a.threads,
        ..LiveOptions::default()
    };
    if let Some(ms) = a.poll_ms {
        o.use_notify = false;
        o.poll_interval = Duration::from_millis(ms.max(1));
    }
    Ok(o)
}

/// Runs `perfscape watch` until the program's final sample arrived or Ctrl-C.
pub fn run_watch(args: &WatchArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let run = watch(&args.run, &live_options(&args.live)?)?;
    print_events(&run, &args.live, out)
}

/// Runs `perfscape replay`: the same lines as `watch` prints for the replayed run.
pub fn run_replay(args: &ReplayArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    let opts = ReplayOptions {
        speed: args.speed,
        into: args.into.clone(),
        live: live_options(&args.live)?,
    };
    let run = replay(&args.run, &opts)?;
    if args.live.verbose {
        eprintln!("perfscape: replaying into {}", run.dir().display());
    }
    print_events(&run, &args.live, out)
}

/// Stops the run on the first Ctrl-C (SIGINT; SIGTERM too on Unix); a second one exits at
/// once. Returns once the handler is installed.
fn stop_on_ctrl_c(stop: StopHandle) {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("perfscape-signals".into())
        .spawn(move || {
            let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
                let _ = ready_tx.send(());
                return;
            };
            rt.block_on(async move {
                #[cfg(unix)]
                {
                    use tokio::signal::unix::{SignalKind, signal};
                    let (Ok(mut int), Ok(mut term)) =
                        (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
                    else {
                        let _ = ready_tx.send(());
                        return;
                    };
                    let _ = ready_tx.send(());
                    tokio::select! { _ = int.recv() => {}, _ = term.recv() => {} }
                    stop.stop();
                    tokio::select! { _ = int.recv() => {}, _ = term.recv() => {} }
                }
                #[cfg(not(unix))]
                {
                    let _ = ready_tx.send(());
                    let _ = tokio::signal::ctrl_c().await;
                    stop.stop();
                    let _ = tokio::signal::ctrl_c().await;
                }
                std::process::exit(130);
            });
        });
    if spawned.is_ok() {
        let _ = ready_rx.recv_timeout(Duration::from_secs(2));
    }
}

/// One JSON line per sample.
#[derive(Serialize)]
struct SampleLine<'a> {
    seq: u32,
    name: &'a str,
    timestamp_us: i64,
    threads: usize,
    expected: usize,
    complete: bool,
    missing: Vec<String>,
    metric: &'a str,
    top: &'a [TopChange],
}

/// One JSON line per late part.
#[derive(Serialize)]
struct AmendedLine {
    event: &'static str,
    seq: u32,
    thread: String,
    threads: usize,
    complete: bool,
}

fn print_events(run: &LiveRun, a: &LiveArgs, out: &mut dyn Write) -> anyhow::Result<ExitCode> {
    stop_on_ctrl_c(run.stop_handle());
    let mut header = a.format == LineFormat::Table;
    let mut first_us: Option<i64> = None;
    let mut problems = 0usize;
    for event in run.events() {
        match event {
            LiveEvent::Sample(s) => {
                let (top, metric, unit) = {
                    let series = run.series().read();
                    let m = series.metrics().first();
                    (
                        top_changes(&series, s.id, MetricId(0), a.top),
                        m.map(|m| m.name.clone()).unwrap_or_default(),
                        m.map_or(Unit::Count, |m| m.unit.clone()),
                    )
                };
                match a.format {
                    LineFormat::Json => {
                        let line = SampleLine {
                            seq: s.id.0,
                            name: &s.name,
                            timestamp_us: s.timestamp_us,
                            threads: s.threads_present,
                            expected: s.threads_expected,
                            complete: s.complete,
                            missing: s.threads_missing.iter().map(ThreadId::to_string).collect(),
                            metric: &metric,
                            top: &top,
                        };
                        serde_json::to_writer(&mut *out, &line)?;
                        writeln!(out)?;
                    }
                    LineFormat::Table => {
                        if header {
                            header = false;
                            writeln!(
                                out,
                                "{:>5}  {:<23}  {:>8}  {:<16}  {:<9}  changed most (exclusive {metric}, summed over threads)",
                                "seq", "time (UTC)", "+s", "sample", "threads"
                            )?;
                        }
                        let first = *first_us.get_or_insert(s.timestamp_us);
                        writeln!(out, "{}", table_line(&s, first, &top, &unit))?;
                    }
                }
                out.flush()?;
            }
            LiveEvent::Amended(x) => {
                match a.format {
                    LineFormat::Json => {
                        serde_json::to_writer(
                            &mut *out,
                            &AmendedLine {
                                event: "amended",
                                seq: x.id.0,
                                thread: x.thread.to_string(),
                                threads: x.threads_present,
                                complete: x.complete,
                            },
                        )?;
                        writeln!(out)?;
                    }
                    LineFormat::Table => writeln!(
                        out,
                        "{:>5}  amended: thread {} arrived late; {} threads now{}",
                        x.id.0,
                        x.thread,
                        x.threads_present,
                        if x.complete { " (complete)" } else { "" }
                    )?,
                }
                out.flush()?;
            }
            LiveEvent::FileError(e) => {
                problems += 1;
                eprintln!("perfscape: {e}");
            }
            LiveEvent::ProducerError {
                producer,
                offset,
                message,
            } => {
                problems += 1;
                eprintln!("perfscape: {producer}: record at byte {offset}: {message}");
            }
            LiveEvent::Notice { message } => {
                if a.verbose {
                    eprintln!("perfscape: {message}");
                }
            }
            LiveEvent::ThreadAppeared { thread, path } => {
                if a.verbose {
                    eprintln!("perfscape: thread {thread} appeared ({})", path.display());
                }
            }
            LiveEvent::ThreadEnded { thread } => {
                if a.verbose {
                    eprintln!("perfscape: thread {thread} ended");
                }
            }
            LiveEvent::Finished { reason } => {
                if a.verbose || reason != FinishReason::AllThreadsEnded {
                    eprintln!(
                        "perfscape: {}",
                        match reason {
                            FinishReason::AllThreadsEnded => "every thread ended: the run is finished",
                            FinishReason::Quiet =>
                                "the profiles are written and nothing changed: the run is finished",
                            FinishReason::Stopped => "stopped",
                        }
                    );
                }
                break;
            }
        }
    }
    Ok(if problems > 0 {
        ExitCode::from(crate::args::EXIT_PARTIAL)
    } else {
        ExitCode::SUCCESS
    })
}

fn table_line(s: &SampleEvent, first_us: i64, top: &[TopChange], unit: &Unit) -> String {
    let mut threads = format!("{}/{}", s.threads_present, s.threads_expected);
    if !s.threads_missing.is_empty() {
        let shown: Vec<String> = s
            .threads_missing
            .iter()
            .take(4)
            .map(ThreadId::to_string)
            .collect();
        let more = s.threads_missing.len().saturating_sub(4);
        threads.push_str(&format!(
            " (missing {}{})",
            shown.join(" "),
            if more > 0 {
                format!(" +{more}")
            } else {
                String::new()
            }
        ));
    }
    let changes: Vec<String> = top
        .iter()
        .map(|t| format!("{} {}", short(&t.event), fmt::value(t.delta, unit)))
        .collect();
    format!(
        "{:>5}  {:<23}  {:>8.3}  {:<16}  {:<9}  {}",
        s.id.0,
        utc(s.timestamp_us),
        (s.timestamp_us - first_us) as f64 / 1e6,
        s.name,
        threads,
        changes.join(", ")
    )
}

/// An event name cut to 40 characters for a line.
fn short(name: &str) -> String {
    if name.chars().count() <= 40 {
        name.to_string()
    } else {
        format!("{}…", name.chars().take(39).collect::<String>())
    }
}

/// `2026-11-21 19:41:45.250` from µs since the epoch (UTC).
fn utc(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let ms = us.rem_euclid(1_000_000) / 1000;
    let (days, sod) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{ms:03}",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

#[cfg(test)]
mod tests {
    use super::utc;

    #[test]
    fn utc_times() {
        // Checked with `date -u -d @1795290105.250669 '+%F %T.%3N'`.
        assert_eq!(utc(1_795_290_105_250_669), "2026-11-21 19:41:45.250");
        assert_eq!(utc(0), "1970-01-01 00:00:00.000");
        assert_eq!(utc(951_782_400_000_000), "2000-02-29 00:00:00.000");
        assert_eq!(utc(-1_000), "1969-12-31 23:59:59.999");
    }
}
