//! The profile cache as a user meets it: `summary` and `serve` write nothing beside the run,
//! the second load reads the cache with identical output, `--no-cache` / `--refresh-cache`,
//! where the cache directory is (`--cache-dir` over `$PERFSCAPE_CACHE_DIR` over the user's
//! cache directory), and `perfscape cache info` / `cache clear`.
//!
//! Every test uses its own temporary run copy and cache directory; the binary never sees the
//! user's cache directory (`HOME` and `XDG_CACHE_HOME` point into the test's directory too).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::corpus;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

/// One test's directories: `tmp` holds the run copies, `home` stands for the user's home (its
/// `.cache` is the default cache directory), `cache` is the cache directory given explicitly.
struct Fixture {
    tmp: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        let f = Fixture {
            tmp: tempfile::tempdir().unwrap(),
        };
        fs::create_dir(f.home()).unwrap();
        f
    }

    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    fn cache(&self) -> PathBuf {
        self.tmp.path().join("cache")
    }

    /// `perfscape` with a clean cache environment: no `PERFSCAPE_CACHE_*`, `HOME` and
    /// `XDG_CACHE_HOME` in this test's directory.
    fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_perfscape"));
        c.env_remove("PERFSCAPE_CACHE_DIR")
            .env_remove("PERFSCAPE_CACHE_MAX_BYTES")
            .env("HOME", self.home())
            .env("XDG_CACHE_HOME", self.home().join(".cache"));
        c
    }

    /// `perfscape ARGS --cache-dir <this test's cache>`-like: `PERFSCAPE_CACHE_DIR` set to it.
    fn run(&self, args: &[&str]) -> Output {
        self.command()
            .env("PERFSCAPE_CACHE_DIR", self.cache())
            .args(args)
            .output()
            .unwrap()
    }

    /// A copy of a run (its files, one hour old: files modified within the last 2 s are not
    /// cached, they may still be being written).
    fn copy(&self, src: &Path, name: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let dst = self.tmp.path().join(name);
        fs::create_dir_all(&dst).unwrap();
        for e in fs::read_dir(src).unwrap() {
            let p = e.unwrap().path();
            let file_name = p.file_name().unwrap();
            if p.is_file() && !file_name.to_string_lossy().contains(".perfscape-cache") {
                let to = dst.join(file_name);
                fs::copy(&p, &to).unwrap();
                fs::set_permissions(&to, fs::Permissions::from_mode(0o644)).unwrap();
                let f = fs::File::options().write(true).open(&to).unwrap();
                f.set_modified(SystemTime::now() - Duration::from_secs(3600))
                    .unwrap();
            }
        }
        dst
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn notes(o: &Output) -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(&stdout(o)).unwrap();
    let mut found = Vec::new();
    let mut stack = vec![&v];
    while let Some(v) = stack.pop() {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(serde_json::Value::Array(n)) = m.get("notes") {
                    found.extend(n.iter().map(|s| s.as_str().unwrap().to_string()));
                }
                stack.extend(m.values());
            }
            serde_json::Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    found
}

/// The names, sizes and modification times of everything under `dir`.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
            }
            out.push((p, m.len(), m.modified().unwrap()));
        }
    }
    out.sort();
    out
}

/// The cache entries (perfscape's files) in `dir`.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .map(|l| {
            l.map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().ends_with(".perfscape-cache"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn reopening_reads_the_cache_with_identical_output_and_the_flags_control_it() {
    let f = Fixture::new();
    let run = f.copy(
        &corpus().join("tau-real/mpi-stencil-np64-callpath-commmatrix"),
        "run",
    );
    let before = listing(f.tmp.path().join("run").as_path());
    let r = run.to_str().unwrap();
    let first = f.run(&["stats", r, "-f", "csv"]);
    assert!(first.status.success(), "{}", stderr(&first));
    let written = entries(&f.cache());
    assert_eq!(written.len(), 1);
    let cached = f.run(&["stats", r, "-f", "csv"]);
    assert_eq!(
        first.stdout, cached.stdout,
        "the statistics from the cache are identical"
    );
    let s = f.run(&["summary", r, "-f", "json"]);
    assert_eq!(
        notes(&s),
        [format!("read from the cache {}", written[0].display())]
    );
    let s = f.run(&["summary", r, "-f", "json", "--no-cache"]);
    assert!(notes(&s).is_empty(), "{:?}", notes(&s));
    let s = f.run(&["summary", r, "-f", "json", "--refresh-cache"]);
    assert_eq!(
        notes(&s),
        [format!(
            "the files were read and the cache {} rewritten, as asked",
            written[0].display()
        )]
    );
    let o = f.run(&["summary", r, "--no-cache", "--refresh-cache"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(listing(&run), before, "nothing was written beside the run");
    assert!(!f.home().join(".cache").exists(), "the user's cache was not used");
}

#[test]
fn a_read_only_run_is_cached_in_the_cache_directory_and_nothing_is_written_beside_it() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let run = f.copy(&corpus().join("tau-real/mpi-stencil-np4-profile"), "run");
    let file = f.tmp.path().join("profile.cubex");
    fs::copy(corpus().join("cube/pycubexr-time-p4/profile.cubex"), &file).unwrap();
    let f_file = fs::File::options().write(true).open(&file).unwrap();
    f_file
        .set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    fs::set_permissions(&run, fs::Permissions::from_mode(0o555)).unwrap();
    let before = listing(f.tmp.path());
    let summary = |input: &Path| f.run(&["summary", input.to_str().unwrap(), "-f", "json"]);
    let outputs: Vec<Output> = [&run, &run, &file, &file]
        .into_iter()
        .map(|i| summary(i))
        .collect();
    fs::set_permissions(&run, fs::Permissions::from_mode(0o755)).unwrap();
    for o in &outputs {
        assert!(o.status.success(), "{}", stderr(o));
    }
    let after: Vec<_> = listing(f.tmp.path())
        .into_iter()
        .filter(|(p, _, _)| !p.starts_with(f.cache()))
        .collect();
    assert_eq!(after, before, "only the cache directory was written");
    let written = entries(&f.cache());
    assert_eq!(written.len(), 2, "{written:?}");
    let run_entry = written
        .iter()
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("run-"))
        .unwrap();
    assert_eq!(
        notes(&outputs[1]),
        [format!("read from the cache {}", run_entry.display())]
    );
    assert!(
        notes(&outputs[3])
            .last()
            .unwrap()
            .starts_with("read from the cache ")
    );
}

#[test]
fn serve_writes_nothing_beside_the_run() {
    let f = Fixture::new();
    let run = f.copy(&corpus().join("tau-real/mpi-stencil-np4-profile"), "run");
    let before = listing(&run);
    let mut child = f
        .command()
        .args([
            "serve",
            run.to_str().unwrap(),
            "--no-open",
            "--cache-dir",
            f.cache().to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    while !line.contains("http://") {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(line.contains("http://"), "serve did not start: {line}");
    assert_eq!(listing(&run), before);
    assert_eq!(entries(&f.cache()).len(), 1);
}

#[test]
fn the_cache_directory_is_the_option_else_the_environment_else_the_users() {
    let f = Fixture::new();
    let run = f.copy(&corpus().join("tau-real/mpi-stencil-np4-profile"), "run");
    let r = run.to_str().unwrap();
    let (opt, env) = (f.tmp.path().join("opt"), f.tmp.path().join("env"));
    let user = f.home().join(".cache/perfscape");
    let summary = |extra: &[&str], env_dir: Option<&Path>| {
        let mut c = f.command();
        if let Some(d) = env_dir {
            c.env("PERFSCAPE_CACHE_DIR", d);
        }
        let o = c.args(["summary", r, "-f", "json"]).args(extra).output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        o
    };
    // --cache-dir wins over PERFSCAPE_CACHE_DIR.
    summary(&["--cache-dir", opt.to_str().unwrap()], Some(&env));
    assert_eq!(entries(&opt).len(), 1);
    assert!(!env.exists() && !user.exists());
    // PERFSCAPE_CACHE_DIR wins over the user's cache directory.
    summary(&[], Some(&env));
    assert_eq!(entries(&env).len(), 1);
    assert!(!user.exists());
    // Else $XDG_CACHE_HOME/perfscape (dirs::cache_dir() on Linux); an empty variable is unset.
    let o = summary(&[], Some(Path::new("")));
    let written = entries(&user);
    assert_eq!(written.len(), 1);
    assert!(notes(&o).is_empty(), "{:?}", notes(&o));
    let o = summary(&[], None);
    assert_eq!(
        notes(&o),
        [format!("read from the cache {}", written[0].display())]
    );
    // `cache info` follows the same rule.
    let info = |extra: &[&str], env_dir: Option<&Path>| {
        let mut c = f.command();
        if let Some(d) = env_dir {
            c.env("PERFSCAPE_CACHE_DIR", d);
        }
        let o = c
            .args(["cache", "info", "-f", "json"])
            .args(extra)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        PathBuf::from(v["directory"].as_str().unwrap())
    };
    assert_eq!(info(&["--cache-dir", opt.to_str().unwrap()], Some(&env)), opt);
    assert_eq!(info(&[], Some(&env)), env);
    assert_eq!(info(&[], None), user);
}

#[test]
fn cache_info_lists_the_entries_and_clear_removes_only_perfscapes() {
    let f = Fixture::new();
    let a = f.copy(&corpus().join("tau-real/mpi-stencil-np4-profile"), "a");
    let b = f.copy(
        &corpus().join("tau-real/mpi-stencil-np4-callpath-commmatrix"),
        "b",
    );
    let info = |format: &str| f.run(&["cache", "info", "-f", format]);
    // Before anything is cached: the directory, no entries, the limit.
    let o = info("table");
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "Cache directory: {} (not created yet)",
            f.cache().display()
        )),
        "{text}"
    );
    assert!(
        text.contains("0 entries, 0 B of the 2.000 GiB limit (0 bytes of 2147483648)"),
        "{text}"
    );
    for (input, extra) in [(&a, None), (&b, None), (&b, Some("tau"))] {
        let mut args = vec!["summary", input.to_str().unwrap()];
        if let Some(format) = extra {
            args.extend(["--input-format", format]);
        }
        assert!(f.run(&args).status.success());
    }
    let v: serde_json::Value = serde_json::from_slice(&info("json").stdout).unwrap();
    assert_eq!(v["directory"], f.cache().to_str().unwrap());
    assert_eq!(v["entry_count"], 3);
    assert_eq!(v["limit_bytes"], 2u64 << 30);
    let list = v["entries"].as_array().unwrap();
    let sizes: u64 = list.iter().map(|e| e["size"].as_u64().unwrap()).sum();
    assert_eq!(v["total_bytes"].as_u64().unwrap(), sizes);
    let on_disk: u64 = entries(&f.cache())
        .iter()
        .map(|p| fs::metadata(p).unwrap().len())
        .sum();
    assert_eq!(sizes, on_disk);
    let mut seen: Vec<(String, String)> = list
        .iter()
        .map(|e| {
            assert_eq!(e["format"], "tau");
            assert_eq!(e["state"], "current");
            assert!(e["last_used"].as_str().unwrap().ends_with('Z'));
            (
                e["input"].as_str().unwrap().to_string(),
                e["format_request"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    let canon = |p: &Path| fs::canonicalize(p).unwrap().display().to_string();
    assert_eq!(
        seen,
        [
            (canon(&a), String::new()),
            (canon(&b), String::new()),
            (canon(&b), "tau".to_string())
        ]
    );
    let csv = stdout(&info("csv"));
    assert_eq!(csv.lines().count(), 4, "{csv}");
    assert!(csv.starts_with("input,format_request,format,size,last_used,last_used_unix_s,state,file\n"));
    let table = stdout(&info("table"));
    assert!(
        table.contains("3 entries, ") && table.contains(&canon(&a)),
        "{table}"
    );
    // clear: perfscape's entries only.
    fs::write(f.cache().join("mine.txt"), "keep me").unwrap();
    let o = f.run(&["cache", "clear"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = stdout(&o);
    assert!(
        said.starts_with("Removed 3 cache entries (")
            && said.contains(&format!(", {sizes} bytes) from {}", f.cache().display())),
        "{said}"
    );
    assert!(entries(&f.cache()).is_empty());
    assert_eq!(fs::read_to_string(f.cache().join("mine.txt")).unwrap(), "keep me");
    let v: serde_json::Value = serde_json::from_slice(&info("json").stdout).unwrap();
    assert_eq!(v["entry_count"], 0);
    assert_eq!(
        stdout(&f.run(&["cache", "clear"])),
        format!(
            "Removed 0 cache entries (0 B, 0 bytes) from {}.\n",
            f.cache().display()
        )
    );
}

#[test]
fn a_small_limit_from_the_environment_evicts_and_a_bad_one_is_said() {
    let f = Fixture::new();
    let a = f.copy(&corpus().join("tau-real/mpi-stencil-np4-profile"), "a");
    let b = f.copy(&corpus().join("tau-real/mpi-stencil-np4-profile"), "b");
    let summary = |input: &Path, limit: &str| {
        f.command()
            .env("PERFSCAPE_CACHE_DIR", f.cache())
            .env("PERFSCAPE_CACHE_MAX_BYTES", limit)
            .args(["summary", input.to_str().unwrap(), "-f", "json"])
            .output()
            .unwrap()
    };
    let o = summary(&a, "1G");
    assert!(notes(&o).is_empty(), "{:?}", notes(&o));
    let size = fs::metadata(&entries(&f.cache())[0]).unwrap().len();
    // Room for one entry: writing b's removes a's.
    let o = summary(&b, &(size * 3 / 2).to_string());
    assert_eq!(notes(&o).len(), 1, "{:?}", notes(&o));
    assert!(
        notes(&o)[0].contains("removed the 1 least recently used entries"),
        "{:?}",
        notes(&o)
    );
    let left = entries(&f.cache());
    assert_eq!(left.len(), 1);
    assert!(left[0].file_name().unwrap().to_str().unwrap().starts_with("b-"));
    // A value that is not a size: the load works, the default applies, a note says why.
    let o = summary(&a, "lots");
    assert!(o.status.success());
    assert!(
        notes(&o).iter().any(|n| n
            == "PERFSCAPE_CACHE_MAX_BYTES=`lots` is not a size (bytes, or a number with K, M, G or T: 500M, 4G); the default limit of 2.0 GiB applies"),
        "{:?}",
        notes(&o)
    );
    assert_eq!(entries(&f.cache()).len(), 2);
    let o = f
        .command()
        .env("PERFSCAPE_CACHE_MAX_BYTES", "lots")
        .args(["cache", "info", "--cache-dir", f.cache().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("PERFSCAPE_CACHE_MAX_BYTES=`lots` is not a size"),
        "{}",
        stderr(&o)
    );
}
