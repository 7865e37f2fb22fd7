//! `GET /api/source` on the event-based-sampling run `tau-real/omp-matmul-t4-tauexec-ebs` with
//! `tau-real/src` as the source root: the text of `omp_matmul.c` (named
//! `/home/user/tauprogs/omp_matmul.c` by the run, found by path suffix) with each sampled
//! line's heat and statistics equal to the `[SAMPLE]` rows of ParaProf's `oracle/paraprof.csv`;
//! and the refusals: `..`, names the run does not give, symbolic links leading out of the root,
//! binary files, no root at all.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::http::StatusCode;
use common::{corpus, get_json};
use perfscape_formats::{OpenOptions, open};
use perfscape_server::sources::SourceRoots;
use perfscape_server::{AppState, StateOptions, router};
use std::collections::BTreeMap;
use std::path::PathBuf;

const RUN: &str = "tau-real/omp-matmul-t4-tauexec-ebs";
const FILE: &str = "/home/user/tauprogs/omp_matmul.c";

fn app(roots: &[PathBuf]) -> axum::Router {
    let opened = open(&corpus().join(RUN), &OpenOptions::default()).unwrap();
    let options = StateOptions {
        sources: SourceRoots::new(roots, &[]).unwrap(),
        ..Default::default()
    };
    router(AppState::new(RUN, Ok(opened), options))
}

/// line → thread `N.C.T` → exclusive TIME of the file's `[SAMPLE]` rows in ParaProf's csv.
fn paraprof_lines() -> BTreeMap<u64, BTreeMap<String, f64>> {
    let text = std::fs::read_to_string(corpus().join(RUN).join("oracle/paraprof.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    let (fun, excl) = (col("Function"), col("Exclusive TIME"));
    let mut out: BTreeMap<u64, BTreeMap<String, f64>> = BTreeMap::new();
    let prefix = format!("[{{{FILE}}} {{");
    for l in lines {
        let f: Vec<&str> = l.split('\t').collect();
        if f.len() <= excl || !f[fun].starts_with("[SAMPLE]") || f[fun].contains("=>") {
            continue;
        }
        let Some(i) = f[fun].find(&prefix) else { continue };
        let line: u64 = f[fun][i + prefix.len()..].trim_end_matches("}]").parse().unwrap();
        let thread = format!("{}.{}.{}", f[0], f[1], f[2]);
        *out.entry(line).or_default().entry(thread).or_default() += f[excl].parse::<f64>().unwrap();
    }
    out
}

#[tokio::test]
async fn the_source_of_the_ebs_run_carries_paraprofs_sample_values() {
    let src = corpus().join("tau-real/src");
    let app = app(std::slice::from_ref(&src));
    let (_, run) = get_json(&app, "/api/run").await;
    assert_eq!(run["source_files"], 1, "omp_matmul.c");
    let (s, j) = get_json(&app, "/api/source").await;
    assert_eq!(s, StatusCode::OK, "{j}");
    assert_eq!(j["file"], FILE, "the hottest file by default");
    let text = std::fs::read_to_string(src.join("omp_matmul.c")).unwrap();
    assert_eq!(j["text"].as_str(), Some(text.as_str()));
    assert!(j["note"].is_null());
    assert_eq!(j["disasm"], false, "no --binary");
    assert_eq!(j["line_count"].as_u64(), Some(text.lines().count() as u64));
    let csv = paraprof_lines();
    let lines = j["lines"].as_array().unwrap();
    assert_eq!(
        lines
            .iter()
            .map(|l| l["line"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        csv.keys().copied().collect::<Vec<_>>()
    );
    for l in lines {
        let theirs = &csv[&l["line"].as_u64().unwrap()];
        let sum: f64 = theirs.values().sum();
        let (max_t, max) = theirs.iter().fold(
            ("", f64::NEG_INFINITY),
            |a, (t, v)| if *v > a.1 { (t, *v) } else { a },
        );
        let (min_t, min) = theirs.iter().fold(
            ("", f64::INFINITY),
            |a, (t, v)| if *v < a.1 { (t, *v) } else { a },
        );
        let st = &l["stats"];
        assert!((l["heat"].as_f64().unwrap() - sum).abs() <= 1e-9 * sum, "{l}");
        assert_eq!(
            (st["max"].as_f64(), st["max_thread"].as_str()),
            (Some(max), Some(max_t)),
            "{l}"
        );
        assert_eq!(
            (st["min"].as_f64(), st["min_thread"].as_str()),
            (Some(min), Some(min_t)),
            "{l}"
        );
        assert_eq!(st["threads"].as_u64(), Some(theirs.len() as u64));
    }
    // One thread's heat: that thread's value, line by line.
    for thread in ["0.0.0", "0.0.1", "0.0.2", "0.0.3"] {
        let (s, j) = get_json(
            &app,
            &format!("/api/source?file={FILE}&heat=thread&thread={thread}"),
        )
        .await;
        assert_eq!(s, StatusCode::OK, "{j}");
        for l in j["lines"].as_array().unwrap() {
            let theirs = csv[&l["line"].as_u64().unwrap()].get(thread).copied();
            assert_eq!(l["heat"].as_f64(), theirs, "{thread} {l}");
        }
    }
    // The file of a selected event.
    let event = lines[0]["events"][0].as_u64().unwrap();
    let (_, j) = get_json(&app, &format!("/api/source?event={event}")).await;
    assert_eq!(j["file"], FILE);
}

#[tokio::test]
async fn names_outside_the_run_or_the_roots_are_refused() {
    let app = app(&[corpus().join("tau-real/src")]);
    for (uri, status) in [
        ("/api/source?file=../../etc/passwd", StatusCode::BAD_REQUEST),
        (
            "/api/source?file=/home/user/tauprogs/../../../etc/passwd",
            StatusCode::BAD_REQUEST,
        ),
        ("/api/source?file=/etc/passwd", StatusCode::NOT_FOUND),
        ("/api/source?file=omp_matmul.c", StatusCode::NOT_FOUND),
        ("/api/source?heat=thread", StatusCode::BAD_REQUEST),
        ("/api/source?heat=hottest", StatusCode::BAD_REQUEST),
        ("/api/source?heat=thread&thread=9.9.9", StatusCode::NOT_FOUND),
    ] {
        let (s, j) = get_json(&app, uri).await;
        assert_eq!(s, status, "{uri}: {j}");
        assert!(j["text"].is_null() && j["error"].is_string(), "{uri}: {j}");
    }
    let long = format!("/api/source?file={}", "a/".repeat(3000));
    let (s, j) = get_json(&app, &long).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{j}");
}

#[tokio::test]
async fn a_file_the_roots_do_not_give_is_a_note_not_an_empty_view() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.c"), "the secret\n").unwrap();
    let linked = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret.c"),
        linked.path().join("omp_matmul.c"),
    )
    .unwrap();
    let binary = tempfile::tempdir().unwrap();
    std::fs::write(binary.path().join("omp_matmul.c"), b"\x7fELF\x02\x01\x01\0\0\0").unwrap();
    let empty = tempfile::tempdir().unwrap();
    for (roots, says) in [
        (
            vec![linked.path().to_path_buf()],
            "leads out of the source directories",
        ),
        (vec![binary.path().to_path_buf()], "binary"),
        (
            vec![empty.path().to_path_buf()],
            "was not found under the source directories",
        ),
        (vec![], "--source-dir"),
    ] {
        let (s, j) = get_json(&app(&roots), "/api/source").await;
        assert_eq!(s, StatusCode::OK, "{j}");
        assert!(j["text"].is_null(), "{says}: {j}");
        assert!(!j.to_string().contains("the secret"));
        assert!(
            j["note"].as_str().unwrap().contains(says),
            "{says}: {}",
            j["note"]
        );
        // The sampled lines are still there.
        assert_eq!(j["lines"].as_array().unwrap().len(), paraprof_lines().len());
        assert_eq!(j["line_count"].as_u64(), Some(12), "the last line the run names");
    }
}

#[tokio::test]
async fn the_assembler_of_a_line_range_comes_from_the_served_executable() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("omp_matmul");
    let cc = std::process::Command::new("gcc")
        .args([
            "-O2",
            "-g",
            "-fopenmp",
            "-no-pie",
            "-fno-omit-frame-pointer",
            "-o",
        ])
        .arg(&bin)
        .arg(corpus().join("tau-real/src/omp_matmul.c"))
        .output()
        .expect("gcc runs");
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let opened = open(&corpus().join(RUN), &OpenOptions::default()).unwrap();
    let options = StateOptions {
        binary: Some(bin.clone()),
        ..Default::default()
    };
    let app = router(AppState::new(RUN, Ok(opened), options));
    assert_eq!(get_json(&app, "/api/source").await.1["disasm"], true);
    let (s, j) = get_json(&app, &format!("/api/disasm?file={FILE}&first=11&last=12")).await;
    assert_eq!(s, StatusCode::OK, "{j}");
    let ins = j["instructions"].as_array().unwrap();
    assert!(!ins.is_empty());
    let csv = paraprof_lines();
    for i in ins {
        let line = i["line"].as_u64().unwrap();
        assert!((11..=12).contains(&line), "{i}");
        // Each instruction carries its line's total in the run: the csv's sum over threads.
        let sum: f64 = csv[&line].values().sum();
        assert!(
            (i["line_total"].as_f64().unwrap() - sum).abs() <= 1e-9 * sum,
            "{i}"
        );
    }
    // Addresses ascend; line 12 (the inner loop) has instructions of its own.
    let addrs: Vec<u64> = ins
        .iter()
        .map(|i| u64::from_str_radix(i["address"].as_str().unwrap(), 16).unwrap())
        .collect();
    assert!(addrs.windows(2).all(|w| w[0] < w[1]));
    assert!(ins.iter().any(|i| i["line"] == 12));
    for (uri, status) in [
        (format!("/api/disasm?file={FILE}"), StatusCode::BAD_REQUEST),
        (
            format!("/api/disasm?file={FILE}&first=12&last=11"),
            StatusCode::BAD_REQUEST,
        ),
        (
            "/api/disasm?file=/etc/passwd&first=1".to_string(),
            StatusCode::NOT_FOUND,
        ),
        (
            "/api/disasm?file=../x.c&first=1".to_string(),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (s, j) = get_json(&app, &uri).await;
        assert_eq!(s, status, "{uri}: {j}");
    }
    // Without --binary: a 404 that says what to do.
    let (s, j) = get_json(&self::app(&[]), &format!("/api/disasm?file={FILE}&first=12")).await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(j["error"].as_str().unwrap().contains("--binary"), "{j}");
}

#[tokio::test]
async fn the_executable_named_in_the_metadata_is_found_under_the_source_roots() {
    // The run's metadata names /home/user/tauprogs/omp_matmul_nopie: built here under that name
    // in a directory given as a source root, it is found by its file name.
    let dir = tempfile::tempdir().unwrap();
    let cc = std::process::Command::new("gcc")
        .args([
            "-O2",
            "-g",
            "-fopenmp",
            "-no-pie",
            "-fno-omit-frame-pointer",
            "-o",
        ])
        .arg(dir.path().join("omp_matmul_nopie"))
        .arg(corpus().join("tau-real/src/omp_matmul.c"))
        .output()
        .expect("gcc runs");
    assert!(cc.status.success(), "{}", String::from_utf8_lossy(&cc.stderr));
    let app = app(&[corpus().join("tau-real/src"), dir.path().to_path_buf()]);
    let (s, j) = get_json(&app, "/api/source").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(j["disasm"], true, "{j}");
    let (s, j) = get_json(&app, &format!("/api/disasm?file={FILE}&first=12")).await;
    assert_eq!(s, StatusCode::OK, "{j}");
    assert!(
        j["binary"].as_str().unwrap().ends_with("/omp_matmul_nopie"),
        "{j}"
    );
    assert!(!j["instructions"].as_array().unwrap().is_empty());
}

#[tokio::test]
async fn a_run_of_located_timers_shows_where_its_routines_begin() {
    // Compiler instrumentation names `main [{/home/user/tauprogs/ci/mpi_stencil.c} {69,0}]`: no
    // sampled lines, one routine start, the text found by path suffix.
    let run = "tau-real/mpi-stencil-np4-compinst-callpath";
    let opened = open(&corpus().join(run), &OpenOptions::default()).unwrap();
    let options = StateOptions {
        sources: SourceRoots::new(&[corpus().join("tau-real/src")], &[]).unwrap(),
        ..Default::default()
    };
    let app = router(AppState::new(run, Ok(opened), options));
    let (_, info) = get_json(&app, "/api/run").await;
    assert_eq!(info["source_files"], 1);
    let (s, j) = get_json(&app, "/api/source").await;
    assert_eq!(s, StatusCode::OK, "{j}");
    assert_eq!(j["file"], "/home/user/tauprogs/ci/mpi_stencil.c");
    let text = std::fs::read_to_string(corpus().join("tau-real/src/mpi_stencil.c")).unwrap();
    assert_eq!(j["text"].as_str(), Some(text.as_str()));
    assert!(j["lines"].as_array().unwrap().is_empty());
    let main = j["routines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "main")
        .unwrap();
    assert_eq!(
        (main["start"].as_u64(), main["end"].as_u64()),
        (Some(69), Some(69))
    );
    assert!(
        text.lines().nth(68).unwrap().contains("main"),
        "line 69 of the file is main's"
    );
}
