//! The category rule file: first match wins, a user's rules before the defaults, malformed
//! files named by line, and time no rule covers kept as `other`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_analysis::categories::{CategoryClass, OTHER, RuleSet, categorize};
use perfscape_model::{Metric, MetricId, ProfileBuilder, ThreadData, ThreadId};

fn name_of(r: &RuleSet, routine: &str, groups: &[&str]) -> String {
    r.categories()[r.classify(routine, groups.iter().copied())]
        .name
        .clone()
}

#[test]
fn defaults_classify_mpi_openmp_gpu_io_and_the_seed_states() {
    let r = RuleSet::defaults();
    let cases = [
        ("MPI_Isend()", &[][..], "MPI point-to-point"),
        ("MPI_Sendrecv()", &[], "MPI point-to-point"),
        ("MPI_Waitall()", &[], "MPI wait"),
        ("MPI_Iprobe()", &[], "MPI wait"),
        ("MPI_Allreduce()", &[], "MPI collective"),
        ("MPI_Barrier()", &[], "MPI synchronization"),
        ("MPI_Init()", &[], "MPI setup"),
        ("MPI_Comm_rank()", &[], "MPI setup"),
        ("MPI_File_write_all()", &[], "MPI-IO"),
        ("MPI_Pcontrol()", &[], "MPI other"),
        ("PMPI_Something", &["MPI"], "MPI other"),
        ("OpenMP_Sync_Region_Barrier implicit", &[], "OpenMP barrier"),
        ("!$omp parallel @foo.c:3", &[], "OpenMP parallel region"),
        ("OpenMP_Work_Loop", &[], "OpenMP loop"),
        ("<omp idle>", &[], "OpenMP idle"),
        ("cudaMemcpyAsync", &[], "GPU memory copy"),
        ("hipDeviceSynchronize", &[], "GPU synchronization"),
        ("cudaLaunchKernel", &[], "GPU kernel"),
        ("write()", &[], "I/O"),
        ("fopen64", &[], "I/O"),
        ("checkpoint", &["TAU_USER", "TAU_IO"], "I/O"),
        ("blocking", &[], "blocking"),
        ("b6s2", &["transferring"], "transferring"),
        ("compute", &["TAU_USER"], OTHER),
        ("readme_parser", &[], OTHER),
    ];
    for (routine, groups, want) in cases {
        assert_eq!(name_of(&r, routine, groups), want, "{routine}");
    }
    let class = |n: &str| r.categories().iter().find(|c| c.name == n).unwrap().class;
    assert_eq!(class("MPI wait"), CategoryClass::Synchronization);
    assert!(!class("MPI collective").is_useful());
    assert!(class("I/O").is_useful() && class(OTHER).is_useful());
}

#[test]
fn first_match_wins_and_user_rules_come_before_the_defaults() {
    let user = r#"
[[category]]
name = "solver"
class = "computation"

[[rule]]
category = "solver"
name = ["sweep*", "smooth*"]

[[rule]]
category = "MPI collective"
name = "sweep*"

[[rule]]
category = "I/O"
name = "MPI_Allreduce*"
"#;
    let r = RuleSet::with_user_rules(user, "mine.toml").unwrap();
    // The first of two user rules matching `sweep` wins.
    assert_eq!(name_of(&r, "sweep double (int)", &[]), "solver");
    // A user rule wins over the defaults' rule.
    assert_eq!(name_of(&r, "MPI_Allreduce()", &[]), "I/O");
    // The defaults still apply after the user's rules.
    assert_eq!(name_of(&r, "MPI_Bcast()", &[]), "MPI collective");
    // A user may give a default category another class.
    let r = RuleSet::with_user_rules(
        "[[category]]\nname = \"MPI setup\"\nclass = \"computation\"\n",
        "c.toml",
    )
    .unwrap();
    let setup = r.categories().iter().find(|c| c.name == "MPI setup").unwrap();
    assert_eq!(setup.class, CategoryClass::Computation);
}

#[test]
fn a_malformed_file_names_its_line_and_what_was_expected() {
    let cases = [
        ("[[rule]]\ncategory = \"I/O\"\nname = [1\n", "f.toml:3:"),
        (
            "\n[[category]]\nname = \"x\"\nclass = \"useful\"\n",
            "f.toml:4: expected `class` to be one of",
        ),
        (
            "[[rule]]\n\ncategory = \"nowhere\"\nname = \"a\"\n",
            "f.toml:3: expected the name of a category",
        ),
        (
            "\n\n[[rule]]\ncategory = \"I/O\"\n",
            "f.toml:3: expected `name` or `group`",
        ),
        (
            "[[rule]]\ncategory = \"I/O\"\nname = \"a[\"\n",
            "f.toml:3: expected a glob pattern",
        ),
        (
            "[[rules]]\ncategory = \"I/O\"\n",
            "f.toml:1: expected a category rule file",
        ),
    ];
    for (text, want) in cases {
        let e = RuleSet::with_user_rules(text, "f.toml").unwrap_err().to_string();
        assert!(e.starts_with(want), "{text:?}: {e}");
    }
}

#[test]
fn time_no_rule_covers_is_kept_as_other() {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    for (rank, (mpi, work)) in [(3.0, 7.0), (1.0, 5.0)].into_iter().enumerate() {
        let mut d = ThreadData::new(1);
        d.push_timer(".TAU application", "TAU_DEFAULT", 1.0, 2.0, &[0.0], &[mpi + work])
            .unwrap();
        d.push_timer("MPI_Allreduce()", "MPI", 1.0, 0.0, &[mpi], &[mpi])
            .unwrap();
        d.push_timer("work", "TAU_USER", 1.0, 0.0, &[work], &[work])
            .unwrap();
        // A sample inside `work`: its time is already the timer's, never counted twice.
        d.push_timer(
            "[SAMPLE] work [{w.c} {3}]",
            "TAU_SAMPLE",
            1.0,
            0.0,
            &[work / 2.0],
            &[work / 2.0],
        )
        .unwrap();
        b.add_thread(ThreadId::new(rank as u32, 0, 0), d).unwrap();
    }
    let (p, _) = b.finish();
    let c = categorize(&p, MetricId(0), &RuleSet::defaults()).unwrap();
    let names: Vec<&str> = c.categories.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["MPI collective", OTHER]);
    assert_eq!(c.run(), vec![4.0, 12.0]);
    let pop = c.pop();
    // useful 7 and 5; runtime 10.
    assert_eq!((pop.max_useful, pop.mean_useful, pop.runtime), (7.0, 6.0, 10.0));
    assert!((pop.load_balance - 6.0 / 7.0).abs() < 1e-12);
    assert!((pop.communication_efficiency - 0.7).abs() < 1e-12);
}
