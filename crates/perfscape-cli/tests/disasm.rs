//! `perfscape disasm` against binutils: `tau-real/src/omp_matmul.c` compiled with the build line
//! of the EBS run's README (`gcc -O2 -g -fopenmp -no-pie -fno-omit-frame-pointer`) into a
//! temporary directory; the hottest line range of the run (its sampled lines of the file) is
//! disassembled, and the instructions listed, with their lines, are exactly those `objdump -d
//! -l` attributes to those lines.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{corpus, perfscape, stderr, stdout};
use std::collections::BTreeMap;
use std::process::Command;

const RUN: &str = "tau-real/omp-matmul-t4-tauexec-ebs";

/// address → line of the instructions `objdump -d -l` attributes to `file_name` lines `lines`.
fn objdump_lines(
    binary: &std::path::Path,
    file_name: &str,
    lines: std::ops::RangeInclusive<u32>,
) -> BTreeMap<u64, u32> {
    let o = Command::new("objdump")
        .arg("-d")
        .arg("-l")
        .arg(binary)
        .output()
        .expect("objdump (binutils) runs");
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let mut out = BTreeMap::new();
    let mut current: Option<(String, u32)> = None;
    for l in text.lines() {
        // A symbol's label or a new section: what follows has no line until objdump names one.
        if l.starts_with("Disassembly of section") || (l.ends_with(">:") && !l.starts_with(' ')) {
            current = None;
            continue;
        }
        // `/path/file.c:12` or `/path/file.c:12 (discriminator 3)`.
        if l.starts_with('/') {
            let head = l.split(" (").next().unwrap();
            if let Some((f, n)) = head.rsplit_once(':') {
                current = n.parse().ok().map(|n| (f.to_string(), n));
            }
            continue;
        }
        // `  4014e8:\tf2 0f 10 02          \tmovsd  (%rdx),%xmm0` (continuation lines of long
        // encodings have no third field).
        let fields: Vec<&str> = l.split('\t').collect();
        if fields.len() < 3 {
            continue;
        }
        let Some(addr) = fields[0].trim().strip_suffix(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        if let Some((f, n)) = &current
            && f.ends_with(&format!("/{file_name}"))
            && lines.contains(n)
        {
            out.insert(addr, *n);
        }
    }
    out
}

#[test]
fn the_instructions_of_the_hottest_lines_are_objdumps() {
    if Command::new("gcc").arg("--version").output().is_err()
        || Command::new("objdump").arg("--version").output().is_err()
    {
        panic!("this test needs gcc and objdump (binutils) on PATH");
    }
    let run = corpus().join(RUN);
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("omp_matmul");
    let src = corpus().join("tau-real/src/omp_matmul.c");
    let cc = Command::new("gcc")
        .args([
            "-O2",
            "-g",
            "-fopenmp",
            "-no-pie",
            "-fno-omit-frame-pointer",
            "-o",
        ])
        .arg(&bin)
        .arg(&src)
        .output()
        .unwrap();
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));

    // The hottest line range: the run's sampled lines of the file.
    let o = perfscape(&[
        "source",
        run.to_str().unwrap(),
        "omp_matmul.c",
        "--hot",
        "-f",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let hot: Vec<u32> = j["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_u64().unwrap() as u32)
        .collect();
    let (first, last) = (*hot.iter().min().unwrap(), *hot.iter().max().unwrap());
    assert_eq!((first, last), (11, 12));

    let range = format!("omp_matmul.c:{first}-{last}");
    let o = perfscape(&[
        "disasm",
        run.to_str().unwrap(),
        "--binary",
        bin.to_str().unwrap(),
        &range,
        "-f",
        "json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let ours: BTreeMap<u64, u32> = j["instructions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                u64::from_str_radix(i["address"].as_str().unwrap(), 16).unwrap(),
                i["line"].as_u64().unwrap() as u32,
            )
        })
        .collect();
    let theirs = objdump_lines(&bin, "omp_matmul.c", first..=last);
    assert!(
        !theirs.is_empty(),
        "objdump attributes instructions to lines {first}-{last}"
    );
    assert_eq!(
        ours, theirs,
        "instruction addresses and lines, perfscape vs objdump -d -l"
    );
    // Each line carries the run's total of the line.
    for i in j["instructions"].as_array().unwrap() {
        assert!(i["line_total"].as_f64().unwrap() > 0.0, "{i}");
    }

    // The table names the lines and shows the instructions.
    let o = perfscape(&[
        "disasm",
        run.to_str().unwrap(),
        "--binary",
        bin.to_str().unwrap(),
        &range,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("line 12 · 4.418 s"), "{}", stdout(&o));

    // Wrong inputs are said.
    let o = perfscape(&[
        "disasm",
        run.to_str().unwrap(),
        "--binary",
        src.to_str().unwrap(),
        &range,
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("not an executable"),
        "{}",
        stderr(&o)
    );
    let o = perfscape(&[
        "disasm",
        run.to_str().unwrap(),
        "--binary",
        bin.to_str().unwrap(),
        "nope.c:1-2",
    ]);
    assert!(
        !o.status.success() && stderr(&o).contains("names no file `nope.c`"),
        "{}",
        stderr(&o)
    );
    let o = perfscape(&[
        "disasm",
        run.to_str().unwrap(),
        "--binary",
        bin.to_str().unwrap(),
        "omp_matmul.c:9-3",
    ]);
    assert!(!o.status.success(), "{}", stderr(&o));
}
