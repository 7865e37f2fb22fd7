//! Build script of the `perfscape` binary: packs its relative relocations (`DT_RELR`) where
//! the toolchain and the C library support them.
//!
//! The binary is position-independent, so every pointer in its read-only-after-relocation
//! data (`.data.rel.ro`: vtables and static tables, 3.9 MB in the default build, most of it
//! Apache DataFusion's) is written by the dynamic loader at start, from one 24-byte
//! `R_X86_64_RELATIVE` entry each: a 5.4 MB `.rela.dyn` table read at every start, 5 to 6 MB of
//! every command's peak RSS (BENCHMARKS.md, "The process baseline"). `-z pack-relative-relocs`
//! (GNU ld >= 2.38, glibc >= 2.36; MaskRay, "Relative relocations and RELR", and the ld manual)
//! stores the same relocations as bitmaps, 62 KB here.
//!
//! A binary with `DT_RELR` does not start on a C library without it, and an older linker
//! warns about the option, so the build asks the C compiler first: a two-line C program linked
//! with the option must link and run. Only then (and only for a GNU/Linux target built on
//! the same machine) is the option passed to the `perfscape` binary's link; otherwise the
//! binary is linked as before. `PERFSCAPE_NO_RELR=1` turns it off.

use std::env;
use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PERFSCAPE_NO_RELR");
    println!("cargo:rerun-if-env-changed=CC");
    let target = env::var("TARGET").unwrap_or_default();
    let host = env::var("HOST").unwrap_or_default();
    let gnu_linux = env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux")
        && env::var("CARGO_CFG_TARGET_ENV").as_deref() == Ok("gnu");
    if !gnu_linux || target != host || env::var_os("PERFSCAPE_NO_RELR").is_some() {
        return;
    }
    if relr_links_and_runs() {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// True when the C compiler (`$CC`, else `cc`) links a position-independent program with
/// `-z pack-relative-relocs` without a warning (`--fatal-warnings`: a linker older than the
/// option only warns) and the program, whose one relocation is then packed, runs and exits 0
/// (a C library without `DT_RELR` refuses to load it).
fn relr_links_and_runs() -> bool {
    let Some(out) = env::var_os("OUT_DIR").map(PathBuf::from) else {
        return false;
    };
    let src = out.join("relr_probe.c");
    let exe = out.join("relr_probe");
    // A pointer in initialized data: a relative relocation in a PIE, so the probe exercises
    // the packed table at start.
    let program = "static int x = 1;\nint *p = &x;\nint main(void) { return *p - 1; }\n";
    if std::fs::write(&src, program).is_err() {
        return false;
    }
    let cc = env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let linked = Command::new(cc)
        .args([
            "-fPIE",
            "-pie",
            "-Wl,-z,pack-relative-relocs",
            "-Wl,--fatal-warnings",
            "-o",
        ])
        .arg(&exe)
        .arg(&src)
        .output();
    match linked {
        Ok(o) if o.status.success() => {}
        _ => return false,
    }
    matches!(Command::new(&exe).status(), Ok(s) if s.success())
}
