#![allow(clippy::expect_used)]
//! Builds the browser front end (`web/`, TypeScript + Vite) into `$OUT_DIR/web`, which
//! `rust-embed` embeds into the binary. Runs `npm ci` first when `web/node_modules` is missing or older than `package-lock.json`.
//!
//! Set `PERFSCAPE_WEB_DIST=<dir>` to embed an already built front end instead (no Node needed).

use std::path::{Path, PathBuf};
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let dest = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &dest)?;
        } else {
            std::fs::copy(entry.path(), dest)?;
        }
    }
    Ok(())
}

fn npm(web: &Path, args: &[&str]) {
    let status = Command::new("npm").args(args).current_dir(web).status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!(
            "`npm {}` in {} failed ({s}). The perfscape front end needs Node.js >= 20.19 and npm; \
             or set PERFSCAPE_WEB_DIST to a built front end.",
            args.join(" "),
            web.display()
        ),
        Err(e) => panic!(
            "cannot run npm ({e}). The perfscape front end needs Node.js >= 20.19 and npm on PATH; \
             or set PERFSCAPE_WEB_DIST to a built front end."
        ),
    }
}

/// True when `web/package-lock.json` changed after `npm ci` last installed `node_modules` (npm
/// writes `node_modules/.package-lock.json` on install): a merge or pull that changed the
/// front end's dependencies gets them installed instead of a build failing on a stale tree.
fn lock_is_newer(web: &Path) -> bool {
    let modified = |p: PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    match (
        modified(web.join("package-lock.json")),
        modified(web.join("node_modules/.package-lock.json")),
    ) {
        (Some(lock), Some(installed)) => lock > installed,
        (Some(_), None) => true,
        _ => false,
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("web");
    println!("cargo:rerun-if-env-changed=PERFSCAPE_WEB_DIST");
    if let Ok(dist) = std::env::var("PERFSCAPE_WEB_DIST") {
        let _ = std::fs::remove_dir_all(&out);
        copy_dir(Path::new(&dist), &out).expect("copy PERFSCAPE_WEB_DIST");
        return;
    }
    let web = manifest.join("../../web");
    for f in [
        "index.html",
        "package.json",
        "package-lock.json",
        "vite.config.ts",
        "tsconfig.json",
    ] {
        println!("cargo:rerun-if-changed={}", web.join(f).display());
    }
    // Every source entry except the generated API types (rewritten by `cargo test`; types only,
    // they do not change the built JavaScript).
    if let Ok(entries) = std::fs::read_dir(web.join("src")) {
        for e in entries.flatten() {
            if e.file_name() != "api" {
                println!("cargo:rerun-if-changed={}", e.path().display());
            }
        }
    }
    if !web.join("node_modules").is_dir() || lock_is_newer(&web) {
        npm(&web, &["ci", "--no-audit", "--no-fund", "--loglevel=error"]);
    }
    let out_s = out.to_string_lossy().to_string();
    npm(
        &web,
        &[
            "run",
            "build",
            "--silent",
            "--",
            "--outDir",
            &out_s,
            "--emptyOutDir",
            "--logLevel",
            "warn",
        ],
    );
}
