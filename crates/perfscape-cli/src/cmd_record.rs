//! `perfscape record -- CMD ARGS` and `perfscape serve --listen ADDR -- CMD ARGS`: run a
//! program whose producers stream to the server (STREAM.md), with the address in its
//! environment, while the views follow it.

use std::ffi::OsString;
use std::thread::JoinHandle;

/// Starts `command` (program and arguments) with `PERFSCAPE_STREAM=addr` (and
/// `PERFSCAPE_TOKEN` when the listener asks for one) in its environment, so that the
/// producers of `producers/` connect to this server; its standard streams are the
/// terminal's. A thread waits for it and says how it ended (on stderr); the server keeps serving the run.
/// Errors: the program cannot be started.
pub fn spawn_producer(
    command: &[OsString],
    addr: &str,
    token: Option<&str>,
) -> anyhow::Result<JoinHandle<()>> {
    let Some((program, args)) = command.split_first() else {
        anyhow::bail!("no command to run after `--`");
    };
    let mut cmd = std::process::Command::new(program);
    cmd.args(args).env("PERFSCAPE_STREAM", addr);
    if let Some(t) = token {
        cmd.env("PERFSCAPE_TOKEN", t);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", program.to_string_lossy()))?;
    let name = program.to_string_lossy().into_owned();
    Ok(std::thread::spawn(move || {
        let ended = child.wait();
        // On stderr: the main thread holds stdout's lock while it serves.
        match ended {
            Ok(status) => eprintln!("perfscape: {name} ended ({status}); the run stays served until Ctrl-C"),
            Err(e) => eprintln!("perfscape: {name} ended; its status is unknown ({e})"),
        }
    }))
}
