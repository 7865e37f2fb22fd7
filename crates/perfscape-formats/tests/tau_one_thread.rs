//! A one-thread TAU run is read with its timers interned while its file is parsed (not copied
//! into the thread's data first): the profile is the one the builder makes from the same
//! lines given by name, as it makes every other thread's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_formats::{OpenOptions, open};
use perfscape_model::{EventId, Metric, Profile, ProfileBuilder, ThreadData, ThreadId};
use std::fs;

/// (name as written, groups, calls, subcalls, exclusive, inclusive): a callpath before its
/// parent, a line with zero calls, a name listed twice (the second with TAU's trailing
/// blanks), and a path whose parent is not in the file (cut by `TAU_CALLPATH_DEPTH`).
const LINES: [(&str, &str, f64, f64, f64, f64); 8] = [
    (
        "main => solve => MPI_Send()",
        "MPI|TAU_CALLPATH",
        4.0,
        0.0,
        8.0,
        8.0,
    ),
    ("never ran", "TAU_USER", 0.0, 0.0, 0.0, 0.0),
    ("main", "TAU_DEFAULT", 1.0, 2.0, 10.0, 50.0),
    ("main => solve", "TAU_USER|TAU_CALLPATH", 2.0, 4.0, 12.0, 20.0),
    ("main => solve  ", "TAU_USER|TAU_CALLPATH", 1.0, 0.0, 3.0, 3.0),
    ("solve", "TAU_USER", 3.0, 4.0, 15.0, 23.0),
    ("MPI_Send()", "MPI", 4.0, 0.0, 8.0, 8.0),
    ("step => MPI_Send()", "MPI|TAU_CALLPATH", 1.0, 0.0, 2.0, 2.0),
];

fn file_text() -> String {
    let mut s = format!(
        "{} templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls #\n",
        LINES.len()
    );
    for (name, groups, calls, subcalls, excl, incl) in LINES {
        s.push_str(&format!(
            "\"{name}\" {calls} {subcalls} {excl} {incl} 0 GROUP=\"{groups}\"\n"
        ));
    }
    s.push_str("0 aggregates\n");
    s
}

/// What the builder makes of the lines given by name (zero-call lines declared).
fn by_name() -> Profile {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    let mut d = ThreadData::new(1);
    for (name, groups, calls, subcalls, excl, incl) in LINES {
        if calls == 0.0 {
            d.declare_timer(name, groups);
        } else {
            d.push_timer(name, groups, calls, subcalls, &[excl], &[incl])
                .unwrap();
        }
    }
    b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
    b.finish().0
}

/// Every event, in id order: its whole name, its own fields, its groups by name and its cells.
fn events(p: &Profile) -> Vec<String> {
    (0..p.events().len())
        .map(|i| {
            let e = EventId::from(i);
            let groups: Vec<&str> = p.event(e).groups.iter().map(|&g| p.group_name(g)).collect();
            format!(
                "{} {:?} {groups:?} {:?}",
                p.event_name(e),
                p.event(e),
                p.interval(e)
            )
        })
        .collect()
}

#[test]
fn one_thread_is_the_builder_s_reading_of_its_lines_by_name() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("profile.0.0.0"), file_text()).unwrap();
    let expected = by_name();
    // The run directory and its one file alone (two ways in, one reading).
    for input in [dir.path().to_path_buf(), dir.path().join("profile.0.0.0")] {
        let l = open(&input, &OpenOptions::default()).unwrap();
        assert_eq!(events(&l.profile), events(&expected), "{}", input.display());
        // The name listed twice is summed and said, as for any thread.
        let said: Vec<String> = l.report.warnings.iter().map(ToString::to_string).collect();
        assert!(
            said.iter()
                .any(|w| w.contains("`main => solve` is listed more than once")),
            "{said:?}"
        );
    }
    // And the tree is TAU's: linked where the parent path is an event, whole where not.
    let send = expected.event_by_name("main => solve => MPI_Send()").unwrap();
    assert_eq!(
        expected.event(send).parent(),
        expected.event_by_name("main => solve")
    );
    let cut = expected.event_by_name("step => MPI_Send()").unwrap();
    assert_eq!(expected.event(cut).parent(), None);
    assert!(
        expected
            .interval(expected.event_by_name("never ran").unwrap())
            .is_empty()
    );
}
