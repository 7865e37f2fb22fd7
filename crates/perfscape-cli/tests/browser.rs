//! The browser tests (web/tests/*.test.mjs, headless Debian Chromium via playwright-core),
//! run against this build of `perfscape`: every view draws real data on the 64-rank example
//! and on 4,096- and 65,536-rank runs (made once by tau_scale.py and kept in the target
//! directory), the views are linked, the URL reproduces the state, a failed load is
//! shown in the page. Needs Node.js, npm and `/usr/bin/chromium` (`scripts/test.sh` installs
//! it); set `PERFSCAPE_SKIP_BROWSER_TESTS=1` to skip on a machine without a browser. The
//! servers keep their profile caches in a temporary directory of this test
//! (`PERFSCAPE_CACHE_DIR`), removed afterwards; never in the user's cache directory.

use std::path::Path;
use std::process::Command;

#[test]
fn browser_views_on_real_runs() {
    if std::env::var_os("PERFSCAPE_SKIP_BROWSER_TESTS").is_some() {
        eprintln!("browser tests skipped: PERFSCAPE_SKIP_BROWSER_TESTS is set");
        return;
    }
    let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web");
    let big = Path::new(env!("CARGO_TARGET_TMPDIR")).join("np4096-lines5000");
    let huge = Path::new(env!("CARGO_TARGET_TMPDIR")).join("np65536-lines5000");
    let cache = tempfile::tempdir().unwrap();
    let out = Command::new("npm")
        .args(["run", "test:browser", "--silent"])
        .current_dir(&web)
        .env("PERFSCAPE_BIN", env!("CARGO_BIN_EXE_perfscape"))
        .env("PERFSCAPE_BIG_RUN", &big)
        .env("PERFSCAPE_HUGE_RUN", &huge)
        .env("PERFSCAPE_CACHE_DIR", cache.path())
        .env_remove("PERFSCAPE_CACHE_MAX_BYTES")
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => panic!(
            "cannot run npm in {}: {e} (the browser tests need Node.js and npm)",
            web.display()
        ),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "browser tests failed ({}):\n{stdout}\n{stderr}\n(install Debian's chromium: `apt-get install chromium`, or run scripts/test.sh)",
        out.status
    );
    assert!(stdout.contains("# fail 0"), "{stdout}");
    assert!(!stdout.contains("# pass 0"), "no browser test ran:\n{stdout}");
}
