//! Loading whole TAU runs: every real run of the corpus, the quirks of real files, bad input
//! inside a run, multi-metric edge cases, and identical results for 1 and N worker threads.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::corpus;
use perfscape_formats::{CacheMode, LoadError, OpenOptions, detect, open};
use perfscape_model::{EventKind, MetricId, ThreadId, ValueKind};
use std::fs;
use std::path::{Path, PathBuf};

fn opts() -> OpenOptions<'static> {
    OpenOptions::default()
}

/// Every directory under corpus/tau and corpus/tau-real that holds profile.N.C.T runs.
fn all_profile_runs() -> Vec<PathBuf> {
    let mut runs = Vec::new();
    for base in ["tau", "tau-real"] {
        for e in fs::read_dir(corpus().join(base)).unwrap() {
            let p = e.unwrap().path();
            if !p.is_dir() {
                continue;
            }
            if p.is_dir() && detect(&p).is_ok_and(|f| f.name == "tau") {
                runs.push(p.clone());
            }
            for sub in fs::read_dir(&p).unwrap() {
                let s = sub.unwrap().path();
                if s.is_dir() && s.file_name().unwrap().to_str().unwrap().starts_with("np") {
                    runs.push(s);
                }
            }
        }
    }
    runs.sort();
    runs
}

fn copy_run(src: &Path, dst: &Path) {
    for e in fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            fs::copy(&p, dst.join(p.file_name().unwrap())).unwrap();
        }
    }
}

#[test]
fn every_corpus_run_loads_completely() {
    let runs = all_profile_runs();
    assert!(runs.len() >= 27, "found only {} runs", runs.len());
    for run in runs {
        let l = open(&run, &opts()).unwrap_or_else(|e| panic!("{}: {e}", run.display()));
        assert!(
            l.report.bad_files.is_empty(),
            "{}: {:?}",
            run.display(),
            l.report.bad_files
        );
        assert!(l.report.threads_skipped.is_empty());
        let p = &l.profile;
        assert!(
            !p.threads().is_empty() && !p.events().is_empty(),
            "{}",
            run.display()
        );
        assert!(p.threads().windows(2).all(|w| w[0] < w[1]), "threads sorted");
        // No warnings on real, well-formed TAU output.
        assert!(
            l.report.warnings.is_empty(),
            "{}: {:?}",
            run.display(),
            l.report.warnings
        );
    }
}

#[test]
fn oracle_and_other_subdirectories_are_not_read() {
    // The run directory has oracle/paraprof-derived/profile.* files: they must not become threads.
    let run = corpus().join("tau-real/mpi-stencil-np4-callpath-commmatrix");
    assert!(run.join("oracle/paraprof-derived/profile.Total").exists());
    let l = open(&run, &opts()).unwrap();
    assert_eq!(l.profile.threads().len(), 4);
    assert_eq!(l.report.files_read, 4);
}

#[test]
fn multimetric_runs_merge_metric_directories() {
    let l = open(&corpus().join("tau-real/mpi-stencil-np8-multimetric"), &opts()).unwrap();
    let names: Vec<&str> = l.profile.metrics().iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["TIME", "CPU_TIME", "TAU_MPI_MESSAGE_SIZE"]);
    assert_eq!(l.report.files_read, 24);
    let p = &l.profile;
    let e = p.event_by_name("MPI_Allreduce()").unwrap();
    let t = p.thread_index(ThreadId::new(0, 0, 0)).unwrap();
    // Values from paraprof.csv of this run (thread 0.0.0).
    let size = p.metric_by_name("TAU_MPI_MESSAGE_SIZE").unwrap();
    assert_eq!(p.value(e, t, ValueKind::Inclusive, size), Some(3200.0));
    assert_eq!(p.value(e, t, ValueKind::Calls, MetricId(0)), Some(400.0));
}

#[test]
fn quirks_of_real_files() {
    let tau = corpus().join("tau");
    // ` C ` marker and [{file} {l,c}-{l,c}] locations; parameter timers; groups with spaces.
    let p = open(&tau.join("tau224-examples-wrap-2rank"), &opts())
        .unwrap()
        .profile;
    let main = p
        .event_by_name("int main(int, char **) C [{main.c} {5,1}-{17,1}]")
        .unwrap();
    let src = p.event(main).source().unwrap();
    assert_eq!(
        (src.file, src.line, src.column, src.end_line, src.end_column),
        ("main.c", 5, Some(1), Some(17), Some(1))
    );
    let param = p
        .event_by_name("int __wrap_dgemm(int) C [{wb.c} {5,1}-{11,1}]   [ <size> = <100> ]")
        .unwrap();
    let groups: Vec<&str> = p.event(param).groups.iter().map(|g| p.group_name(*g)).collect();
    assert_eq!(groups, ["TAU_PARAM", "TAU_USER"]);

    // [THROTTLED] timers with TAU_DISABLE; [GROUP=MAX_MARKER] context user events with `=>`.
    let p = open(&tau.join("pbmpi-phylobayes-16rank-throttled"), &opts())
        .unwrap()
        .profile;
    assert_eq!(p.threads().len(), 16);
    let th = p
        .event_by_name("double Random::Uniform() [{Random.cpp} {98,1}-{166,1}] [THROTTLED]")
        .unwrap();
    assert!(p.event(th).throttled);
    assert_eq!(p.event_groups_joined(th), "TAU_DISABLE");
    let ue = p
        .atomic_event_by_name("[GROUP=MAX_MARKER] Message size for broadcast : void PhyloProcess::GlobalBroadcastTree() [{PhyloProcess.cpp} {1938,1}-{1954,1}] => MPI_Bcast()")
        .unwrap();
    assert_eq!(
        p.atomic_events()[ue.index()].base_name.as_deref(),
        Some("[GROUP=MAX_MARKER] Message size for broadcast")
    );

    // Sampling: [SAMPLE] per line, [CONTEXT], two spaces before `=>`.
    let p = open(&tau.join("taucmdr-mm-ebs-sampling"), &opts())
        .unwrap()
        .profile;
    let s = p
        .event_by_name("[SAMPLE] compute [{/home/jlinford/workspace/taucmdr/examples/mm/matmult.c} {101}]")
        .unwrap();
    assert_eq!(p.event(s).kind, EventKind::Sample);
    assert_eq!(p.event(s).source().unwrap().line, 101);
    let path = p
        .event_by_name(".TAU application => [CONTEXT] .TAU application => [SAMPLE] compute [{/home/jlinford/workspace/taucmdr/examples/mm/matmult.c} {101}]")
        .unwrap();
    assert_eq!(p.event(path).routine(), Some(s));
    let ctx = p.event_by_name("[CONTEXT] .TAU application").unwrap();
    assert_eq!(p.event(ctx).kind, EventKind::SampleContext);

    // A thread whose first timer is not `.TAU application`.
    let p = open(&tau.join("tau224-taudb-parse-test-2thread"), &opts())
        .unwrap()
        .profile;
    assert_eq!(p.threads(), &[ThreadId::new(0, 0, 0), ThreadId::new(0, 0, 1)]);
    assert!(p.event_by_name("compute OpenMP region").is_some());
}

#[test]
fn callpaths_form_a_tree_and_context_events_attach_to_them() {
    let p = open(
        &corpus().join("tau-real/mpi-stencil-np4-callpath-commmatrix"),
        &opts(),
    )
    .unwrap()
    .profile;
    let root = p.event_by_name(".TAU application").unwrap();
    assert_eq!(p.call_tree().roots(), &[root]);
    let main = p
        .event_by_name(".TAU application => main int (int, char **)")
        .unwrap();
    assert!(p.call_tree().children(root).contains(&main));
    assert_eq!(p.event(main).parent(), Some(root));
    assert_eq!(
        p.event(main).routine(),
        p.event_by_name("main int (int, char **)")
    );
    let halo = p.event_by_name(".TAU application => main int (int, char **) => timestep_loop => halo_exchange void (double *, int, int, int)").unwrap();
    let ue = p.atomic_event_by_name("halo bytes sent : main int (int, char **) => timestep_loop => halo_exchange void (double *, int, int, int)").unwrap();
    let a = &p.atomic_events()[ue.index()];
    assert_eq!(a.context, Some(halo));
    assert_eq!(a.base, p.atomic_event_by_name("halo bytes sent"));
    // A plain user event has no context.
    let plain = p.atomic_event_by_name("global residual").unwrap();
    assert_eq!(p.atomic_events()[plain.index()].context, None);
}

#[test]
fn paths_cut_by_callpath_depth_are_roots() {
    // Hecatoncheir ran with TAU_CALLPATH_DEPTH=10: deep paths start below the root.
    let p = open(&corpus().join("tau/hecatoncheir-driver-callpath"), &opts())
        .unwrap()
        .profile;
    let cut: Vec<_> = p
        .call_tree()
        .roots()
        .iter()
        .filter(|&&e| p.event(e).is_callpath())
        .collect();
    for &&e in &cut {
        assert!(p.event(e).parent().is_none());
        assert!(!p.event_name(e).starts_with(".TAU application"));
    }
    // Context user events whose path is cut still attach.
    let attached = p.atomic_events().iter().filter(|a| a.context.is_some()).count();
    assert!(attached >= 3, "{attached}");
}

#[test]
fn thread_ids_sort_numerically() {
    let dir = tempfile::tempdir().unwrap();
    let src = corpus().join("tau-real/pthread-heat-t4-profile/profile.0.0.1");
    for t in [10, 2, 1, 0] {
        fs::copy(&src, dir.path().join(format!("profile.0.0.{t}"))).unwrap();
    }
    let p = open(dir.path(), &opts()).unwrap().profile;
    let ids: Vec<String> = p.threads().iter().map(ToString::to_string).collect();
    assert_eq!(ids, ["0.0.0", "0.0.1", "0.0.2", "0.0.10"]);
}

#[test]
fn bad_files_are_listed_and_the_rest_loads() {
    let dir = tempfile::tempdir().unwrap();
    copy_run(
        &corpus().join("tau-real/mpi-stencil-np4-callpath-commmatrix"),
        dir.path(),
    );
    let f1 = dir.path().join("profile.1.0.0");
    let text = fs::read_to_string(&f1).unwrap();
    // Truncated in the middle of a timer line (a file still being written).
    let cut = text.find("\"MPI_Irecv()  \"").unwrap() + 7;
    fs::write(&f1, &text[..cut]).unwrap();
    // A garbage line in the middle of the timers of rank 2.
    let f2 = dir.path().join("profile.2.0.0");
    let mut lines: Vec<String> = fs::read_to_string(&f2)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    lines[6] = "garbage here".to_string();
    fs::write(&f2, lines.join("\n")).unwrap();
    // A non-numeric value in rank 3's user events.
    let f3 = dir.path().join("profile.3.0.0");
    let t3 = fs::read_to_string(&f3)
        .unwrap()
        .replace("\"global residual\" 400", "\"global residual\" four-hundred");
    fs::write(&f3, t3).unwrap();

    let l = open(dir.path(), &opts()).unwrap();
    assert!(l.report.is_partial());
    // Rank 3's timers are complete: the thread is kept, its user events from the bad line on
    // are not, and the file is listed as loaded in part.
    assert_eq!(
        l.profile.threads(),
        &[ThreadId::new(0, 0, 0), ThreadId::new(3, 0, 0)]
    );
    assert_eq!(l.report.threads_skipped.len(), 2);
    let part: Vec<String> = l.report.partial_files.iter().map(ToString::to_string).collect();
    assert!(
        part.len() == 1
            && part[0].contains("profile.3.0.0:")
            && part[0].contains("numevents is `four-hundred`")
            && part[0].contains("not read"),
        "{part:?}"
    );
    let t3 = l.profile.thread_index(ThreadId::new(3, 0, 0)).unwrap();
    let t0 = l.profile.thread_index(ThreadId::new(0, 0, 0)).unwrap();
    let ev = l.profile.event_by_name("MPI_Allreduce()").unwrap();
    assert!(
        l.profile
            .value(ev, t3, ValueKind::Exclusive, MetricId(0))
            .unwrap()
            > 0.0
    );
    let residual = l.profile.atomic_event_by_name("global residual").unwrap();
    assert!(l.profile.atomic(residual).row_of(t0).is_some());
    assert!(
        l.profile.atomic(residual).row_of(t3).is_none(),
        "rank 3's bad user event is not read"
    );
    let msgs: Vec<String> = l.report.bad_files.iter().map(ToString::to_string).collect();
    assert!(
        msgs[0].contains("profile.1.0.0:20:") && msgs[0].contains("file ends inside timer line 18 of 35"),
        "{msgs:?}"
    );
    assert!(
        msgs[1].contains("profile.2.0.0:7:") && msgs[1].contains("garbage here"),
        "{msgs:?}"
    );
    assert_eq!(msgs.len(), 2);
}

#[test]
fn truncation_at_a_line_end_and_empty_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    copy_run(&corpus().join("tau-real/mpi-stencil-np4-profile"), dir.path());
    let f0 = dir.path().join("profile.0.0.0");
    let text = fs::read_to_string(&f0).unwrap();
    let keep: Vec<&str> = text.lines().take(10).collect();
    fs::write(&f0, keep.join("\n") + "\n").unwrap();
    fs::write(dir.path().join("profile.1.0.0"), "").unwrap();
    let l = open(dir.path(), &opts()).unwrap();
    let msgs: Vec<String> = l.report.bad_files.iter().map(ToString::to_string).collect();
    assert!(
        msgs[0].contains("profile.0.0.0:11:") && msgs[0].contains("of the 17 timer lines"),
        "{msgs:?}"
    );
    assert!(
        msgs[1].contains("profile.1.0.0:1:") && msgs[1].contains("empty"),
        "{msgs:?}"
    );
    assert_eq!(l.profile.threads().len(), 2);
}

#[test]
fn more_timer_lines_than_the_header_announces_keeps_the_announced_ones() {
    let dir = tempfile::tempdir().unwrap();
    let src = fs::read_to_string(corpus().join("tau-real/mpi-stencil-np4-profile/profile.0.0.0")).unwrap();
    let wrong = src.replacen("17 templated_functions", "16 templated_functions", 1);
    fs::write(dir.path().join("profile.0.0.0"), wrong).unwrap();
    fs::write(dir.path().join("profile.1.0.0"), &src).unwrap();
    let l = open(dir.path(), &opts()).unwrap();
    assert_eq!(l.profile.threads().len(), 2);
    let m = l.report.partial_files[0].to_string();
    assert!(
        m.contains("profile.0.0.0:19:") && m.contains("announces 16 timer lines") && m.contains("not read"),
        "{m}"
    );
    let t0 = l.profile.thread_index(ThreadId::new(0, 0, 0)).unwrap();
    let has = |t| {
        l.profile
            .events()
            .iter()
            .enumerate()
            .filter(|(e, _)| {
                l.profile
                    .interval(perfscape_model::EventId(*e as u32))
                    .row_of(t)
                    .is_some()
            })
            .count()
    };
    let t1 = l.profile.thread_index(ThreadId::new(1, 0, 0)).unwrap();
    assert_eq!(
        has(t0) + 1,
        has(t1),
        "the 17th timer line of the file that announces 16 is not read"
    );
}

#[test]
fn a_run_where_nothing_loads_is_an_error_listing_every_file() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("profile.0.0.0"), "hello\n").unwrap();
    fs::write(dir.path().join("profile.1.0.0"), "").unwrap();
    match open(dir.path(), &opts()) {
        Err(LoadError::NothingLoaded { errors, .. }) => assert_eq!(errors.len(), 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn not_a_tau_run_gets_a_clear_error() {
    let empty = tempfile::tempdir().unwrap();
    let e = open(empty.path(), &opts()).unwrap_err().to_string();
    assert!(
        e.contains("the directory is empty") && e.contains("perfscape reads:"),
        "{e}"
    );
    let other = tempfile::tempdir().unwrap();
    fs::write(other.path().join("notes.txt"), "hello").unwrap();
    let e = open(other.path(), &opts()).unwrap_err().to_string();
    assert!(e.contains("notes.txt"), "{e}");
    // An input recognized but not read (a Charm++ Projections summary file).
    let e = open(
        &corpus().join("projections/pipit-ping-pong-projections/pingpong.prj.sts"),
        &opts(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("Projections") && e.contains("does not read yet"),
        "{e}"
    );
    let e = open(Path::new("/nonexistent/run"), &opts())
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent/run"), "{e}");
    let e = open(&corpus().join("tau-real/README.md"), &opts())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a profile format"), "{e}");
}

#[test]
fn multimetric_thread_with_a_missing_or_bad_metric_file_is_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let src = corpus().join("tau-real/pthread-heat-t4-multimetric");
    for m in ["MULTI__TIME", "MULTI__CPU_TIME"] {
        fs::create_dir(dir.path().join(m)).unwrap();
        copy_run(&src.join(m), &dir.path().join(m));
    }
    fs::remove_file(dir.path().join("MULTI__CPU_TIME/profile.0.0.3")).unwrap();
    fs::write(
        dir.path().join("MULTI__CPU_TIME/profile.0.0.4"),
        "3 templated_functions_MULTI_CPU_TIME\n",
    )
    .unwrap();
    let l = open(dir.path(), &opts()).unwrap();
    assert_eq!(l.profile.threads().len(), 3);
    assert_eq!(
        l.report.threads_skipped,
        vec![ThreadId::new(0, 0, 3), ThreadId::new(0, 0, 4)]
    );
    let msgs: Vec<String> = l.report.bad_files.iter().map(ToString::to_string).collect();
    assert!(
        msgs[0].contains("MULTI__CPU_TIME/profile.0.0.3") && msgs[0].contains("missing"),
        "{msgs:?}"
    );
    assert!(msgs[1].contains("MULTI__CPU_TIME/profile.0.0.4:2:"), "{msgs:?}");
}

#[test]
fn zero_call_lines_and_negative_values_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let src = "3 templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls\n\
\".TAU application\" 1 1 10 110 0 GROUP=\"TAU_DEFAULT\" \n\
\"never ran\" 0 0 0 0 0 GROUP=\"TAU_USER\" \n\
\"odd\" 0 0 5 -7 0 GROUP=\"TAU_USER\" \n0 aggregates\n";
    fs::write(dir.path().join("profile.0.0.0"), src).unwrap();
    let l = open(dir.path(), &opts()).unwrap();
    let p = &l.profile;
    // Both events are known, neither counts as present on the thread (as in ParaProf).
    for name in ["never ran", "odd"] {
        let e = p.event_by_name(name).unwrap();
        assert!(p.interval(e).is_empty(), "{name}");
    }
    let w: Vec<String> = l.report.warnings.iter().map(ToString::to_string).collect();
    assert!(
        w.iter().any(|m| m.contains(":5:") && m.contains("negative")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|m| m.contains(":5:") && m.contains("0 calls but non-zero values")),
        "{w:?}"
    );
    assert!(!l.report.is_partial());
}

#[test]
fn duplicate_names_in_one_file_are_summed_like_paraprof() {
    let dir = tempfile::tempdir().unwrap();
    let src = "3 templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls\n\
\"main\" 1 2 10 110 0 GROUP=\"TAU_DEFAULT\" \n\
\"MPI_Send()  \" 3 0 30 30 0 GROUP=\"MPI\" \n\
\"MPI_Send()\" 2 0 20 20 0 GROUP=\"MPI\" \n0 aggregates\n";
    fs::write(dir.path().join("profile.0.0.0"), src).unwrap();
    let l = open(dir.path(), &opts()).unwrap();
    let p = &l.profile;
    let e = p.event_by_name("MPI_Send()").unwrap();
    assert_eq!(p.interval(e).calls(), &[5.0]);
    assert_eq!(p.interval(e).exclusive(MetricId(0)), &[50.0]);
    assert!(
        l.report
            .warnings
            .iter()
            .any(|w| w.message.contains("listed more than once"))
    );
}

#[test]
fn result_is_identical_for_one_and_many_worker_threads() {
    // 600 threads: more than two parallel chunks.
    let dir = tempfile::tempdir().unwrap();
    let src = corpus().join("tau-real/mpi-stencil-np64-callpath-commmatrix");
    for k in 0..600 {
        fs::copy(
            src.join(format!("profile.{}.0.0", k % 64)),
            dir.path().join(format!("profile.{k}.0.0")),
        )
        .unwrap();
    }
    let one = open(
        dir.path(),
        &OpenOptions {
            threads: Some(1),
            cache: CacheMode::Off,
            ..opts()
        },
    )
    .unwrap();
    let many = open(
        dir.path(),
        &OpenOptions {
            threads: Some(4),
            cache: CacheMode::Off,
            ..opts()
        },
    )
    .unwrap();
    assert_eq!(one.profile.threads().len(), 600);
    assert!(
        one.profile == many.profile,
        "profiles differ between 1 and 4 worker threads"
    );
}

/// A run whose first thread lists one timer and whose later threads list 150 more, in an
/// order that shifts from thread to thread, some twice: more events than the builder makes
/// room for in place after the first thread, so the cells move to per-event drafts midway.
/// Every value is planted (thread `k`, timer `f<i>`: exclusive `1000 k + i`), and the
/// profile is the same for 1 and 4 worker threads.
#[test]
fn threads_adding_many_events_load_the_same_with_one_and_many_workers() {
    let dir = tempfile::tempdir().unwrap();
    let file = |names: &[String]| {
        let mut s = format!(
            "{} templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls\n",
            names.len()
        );
        for n in names {
            s.push_str(n);
        }
        s + "0 aggregates\n"
    };
    let line = |name: &str, v: u64| format!("\"{name}\" 1 0 {v} {v} 0 GROUP=\"TAU_USER\" \n");
    fs::write(dir.path().join("profile.0.0.0"), file(&[line("main", 1)])).unwrap();
    for k in 1..300u64 {
        let mut names = vec![line("main", 1000 * k)];
        for j in 0..150u64 {
            let i = (j + k) % 150; // a different order on every thread
            names.push(line(&format!("f{i}"), 1000 * k + i));
        }
        if k % 7 == 0 {
            names.push(line("f3", 0)); // listed twice: summed
        }
        fs::write(dir.path().join(format!("profile.{k}.0.0")), file(&names)).unwrap();
    }
    let load = |threads| {
        open(
            dir.path(),
            &OpenOptions {
                threads: Some(threads),
                cache: CacheMode::Off,
                ..opts()
            },
        )
        .unwrap()
    };
    let (one, many) = (load(1), load(4));
    assert!(
        one.profile == many.profile,
        "profiles differ between 1 and 4 worker threads"
    );
    let p = &one.profile;
    assert_eq!(p.threads().len(), 300);
    assert_eq!(p.events().len(), 151);
    for i in [0u64, 3, 77, 149] {
        let col = p.interval(p.event_by_name(&format!("f{i}")).unwrap());
        let want: Vec<f64> = (1..300u64).map(|k| (1000 * k + i) as f64).collect();
        assert_eq!(col.exclusive(MetricId(0)), &want[..], "f{i}");
        let calls: Vec<f64> = (1..300u64)
            .map(|k| if i == 3 && k % 7 == 0 { 2.0 } else { 1.0 })
            .collect();
        assert_eq!(col.calls(), &calls[..], "f{i}");
    }
    let main = p.interval(p.event_by_name("main").unwrap());
    assert_eq!(main.threads().len(), 300);
    assert_eq!(main.exclusive(MetricId(0))[299], 299_000.0);
}

#[test]
fn a_single_profile_file_loads_as_one_thread() {
    let f = corpus().join("tau-real/mpi-stencil-np4-profile/profile.2.0.0");
    let l = open(&f, &opts()).unwrap();
    assert_eq!(l.profile.threads(), &[ThreadId::new(2, 0, 0)]);
    assert_eq!(l.report.files_read, 1);
}

/// Real files sometimes carry stray text after the last user event (a message printed into
/// the profile, an editor's trailer): TAU's `pprof` shows the thread, and so does perfscape,
/// with a warning naming the file, the line and what was expected there.
#[test]
fn stray_text_after_the_user_events_keeps_the_thread_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    copy_run(&corpus().join("tau-real/mpi-stencil-np4-profile"), dir.path());
    let f2 = dir.path().join("profile.2.0.0");
    let mut text = fs::read_to_string(&f2).unwrap();
    let lines = text.lines().count();
    text.push_str("\nrank 2: MPI_Finalize done\n");
    fs::write(&f2, &text).unwrap();
    let reference = open(&corpus().join("tau-real/mpi-stencil-np4-profile"), &opts()).unwrap();
    let l = open(dir.path(), &opts()).unwrap();
    assert!(!l.report.is_partial(), "{:?}", l.report);
    assert_eq!(l.profile, reference.profile, "every thread, every value");
    let w: Vec<String> = l.report.warnings.iter().map(ToString::to_string).collect();
    let stray = format!("profile.2.0.0:{}:", lines + 2);
    assert!(
        w.iter().any(|w| w.contains(&stray)
            && w.contains("rank 2: MPI_Finalize done")
            && w.contains("expected the end of the file")),
        "{stray} {w:?}"
    );
}

/// A file cut inside its user-event section keeps its thread's timers and the user events
/// before the cut; the file is listed as loaded in part with the line and what was lost.
#[test]
fn a_file_cut_in_its_user_events_keeps_the_timers() {
    let dir = tempfile::tempdir().unwrap();
    copy_run(&corpus().join("tau-real/mpi-stencil-np4-profile"), dir.path());
    let f1 = dir.path().join("profile.1.0.0");
    let text = fs::read_to_string(&f1).unwrap();
    let user = text.find("userevents").unwrap();
    let cut = user + (text.len() - user) / 2;
    fs::write(&f1, &text[..cut]).unwrap();
    let reference = open(&corpus().join("tau-real/mpi-stencil-np4-profile"), &opts()).unwrap();
    let l = open(dir.path(), &opts()).unwrap();
    assert!(l.report.is_partial());
    assert!(l.report.bad_files.is_empty() && l.report.threads_skipped.is_empty());
    let p = l.report.partial_files[0].to_string();
    assert!(
        p.contains("profile.1.0.0:") && p.contains("user event line") && p.contains("not read"),
        "{p}"
    );
    // Every timer value of the cut thread is the reference's.
    let t = ThreadId::new(1, 0, 0);
    let (a, b) = (&l.profile, &reference.profile);
    for e in b.event_ids() {
        let ea = a.event_by_name(&b.event_name(e)).unwrap();
        for k in [ValueKind::Exclusive, ValueKind::Inclusive, ValueKind::Calls] {
            assert_eq!(
                a.value(ea, a.thread_index(t).unwrap(), k, MetricId(0)),
                b.value(e, b.thread_index(t).unwrap(), k, MetricId(0)),
                "{}",
                b.event_name(e)
            );
        }
    }
}

/// A `profile.N.C.T` that is a link to a device (or a FIFO) is refused up front, naming the
/// file, instead of being read until memory runs out; the other threads load.
#[test]
fn a_profile_file_linked_to_a_device_is_refused_and_the_rest_loads() {
    let dir = tempfile::tempdir().unwrap();
    copy_run(&corpus().join("tau-real/mpi-stencil-np4-profile"), dir.path());
    fs::remove_file(dir.path().join("profile.2.0.0")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("profile.2.0.0")).unwrap();
    let l = open(dir.path(), &opts()).unwrap();
    assert_eq!(l.profile.threads().len(), 3);
    assert_eq!(l.report.threads_skipped, vec![ThreadId::new(2, 0, 0)]);
    let bad = l.report.bad_files[0].to_string();
    assert!(
        bad.contains("profile.2.0.0") && bad.contains("not a regular file"),
        "{bad}"
    );
    // The same file named alone is refused before anything is read.
    let e = open(&dir.path().join("profile.2.0.0"), &opts())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a regular file"), "{e}");
}

/// Later threads whose lines differ from the first thread's (whose lines they are matched
/// against by raw name and group text): reordered, spaced differently, with another group
/// text, listed twice, absent from the first thread, with zero calls there. Every value and
/// group list is the planted one, with 1 and 4 workers.
#[test]
fn threads_whose_lines_differ_from_the_first_threads_load_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let file = |lines: &[String]| {
        let mut s = format!(
            "{} templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls\n",
            lines.len()
        );
        for l in lines {
            s.push_str(l);
        }
        s + "0 aggregates\n"
    };
    let line = |name: &str, calls: u64, v: u64, groups: &str| {
        format!("\"{name}\" {calls} 0 {v} {v} 0 GROUP=\"{groups}\" \n")
    };
    // Thread 0: main, a, b (zero calls), main => a.
    fs::write(
        dir.path().join("profile.0.0.0"),
        file(&[
            line("main", 1, 100, "TAU_DEFAULT"),
            line("a", 1, 10, "TAU_USER"),
            line("b", 0, 0, "TAU_USER"),
            line("main => a", 1, 11, "TAU_CALLPATH|TAU_USER"),
        ]),
    )
    .unwrap();
    // Thread 1: reordered, `a  ` spaced otherwise, b counted, a new event c, a listed twice.
    fs::write(
        dir.path().join("profile.1.0.0"),
        file(&[
            line("main =>  a  ", 1, 21, "TAU_CALLPATH|TAU_USER"),
            line("a  ", 2, 20, "TAU_USER"),
            line("main", 1, 200, "TAU_DEFAULT"),
            line("c", 1, 5, "IO"),
            line("b", 3, 30, "TAU_USER"),
            line("a", 1, 7, "TAU_USER"),
        ]),
    )
    .unwrap();
    // Thread 2: a with another group text, main missing.
    fs::write(
        dir.path().join("profile.2.0.0"),
        file(&[
            line("a", 1, 40, "TAU_USER|MPI"),
            line("main => a", 1, 41, "TAU_CALLPATH|TAU_USER"),
        ]),
    )
    .unwrap();
    let load = |threads| {
        open(
            dir.path(),
            &OpenOptions {
                threads: Some(threads),
                cache: CacheMode::Off,
                ..opts()
            },
        )
        .unwrap()
    };
    let (one, many) = (load(1), load(4));
    assert!(
        one.profile == many.profile,
        "profiles differ between 1 and 4 worker threads"
    );
    let p = &one.profile;
    let m = MetricId(0);
    let event = |name: &str| {
        p.event_by_name(name)
            .unwrap_or_else(|| panic!("no event `{name}`"))
    };
    let cells = |name: &str| {
        let col = p.interval(event(name));
        let threads: Vec<u32> = col.threads().iter().map(|t| t.0).collect();
        (threads, col.exclusive(m).to_vec(), col.calls().to_vec())
    };
    assert_eq!(cells("main"), (vec![0, 1], vec![100.0, 200.0], vec![1.0, 1.0]));
    // Thread 1 lists `a` twice: summed (20 + 7, calls 2 + 1).
    assert_eq!(
        cells("a"),
        (vec![0, 1, 2], vec![10.0, 27.0, 40.0], vec![1.0, 3.0, 1.0])
    );
    assert_eq!(cells("b"), (vec![1], vec![30.0], vec![3.0]));
    assert_eq!(cells("c"), (vec![1], vec![5.0], vec![1.0]));
    assert_eq!(
        cells("main => a"),
        (vec![0, 1, 2], vec![11.0, 21.0, 41.0], vec![1.0, 1.0, 1.0])
    );
    assert_eq!(p.event_groups_joined(event("a")), "TAU_USER | MPI");
    assert_eq!(p.event_groups_joined(event("c")), "IO");
    assert_eq!(p.events().len(), 5);
    assert!(
        one.report
            .warnings
            .iter()
            .any(|w| w.to_string().contains("profile.1.0.0")
                && w.to_string().contains("`a` is listed more than once")),
        "{:?}",
        one.report.warnings
    );
}
