//! Tests of [`super::ProfileBuilder`].

use super::*;
use crate::columns::ValueKind;
use crate::ids::MetricId;

#[test]
fn event_attributes_keep_every_distinct_value_in_order() {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    for (rank, size) in [(0u32, "1024"), (1, "2048"), (2, "1024")] {
        let mut d = ThreadData::new(1);
        d.push_timer("main", "G", 1.0, 0.0, &[1.0], &[1.0]).unwrap();
        b.add_thread(ThreadId::new(rank, 0, 0), d).unwrap();
        b.set_event_attribute("main", "ProblemSize", size);
        b.set_event_attribute("main", "Reps", "50");
    }
    // An event no thread measured is declared for its attribute.
    b.set_event_attribute("setup", "BlockSize", "256");
    let (p, _) = b.finish();
    let main = p.event_by_name("main").unwrap();
    let attrs: Vec<(&str, &str)> = p.event_attributes(main).collect();
    assert_eq!(attrs, [("ProblemSize", "1024, 2048"), ("Reps", "50")]);
    let setup = p.event_by_name("setup").unwrap();
    assert_eq!(
        p.event_attributes(setup).collect::<Vec<_>>(),
        [("BlockSize", "256")]
    );
    assert!(p.interval(setup).is_empty());
}

#[test]
fn callpaths_by_name_and_by_node_are_one_tree() {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    let mut d = ThreadData::new(1);
    // A child listed before its parent, and a path cut by TAU_CALLPATH_DEPTH.
    d.push_timer("main => f  => g", "", 1.0, 0.0, &[1.0], &[1.0])
        .unwrap();
    d.push_timer("main => f", "", 1.0, 1.0, &[2.0], &[3.0]).unwrap();
    d.push_timer("main", "", 1.0, 1.0, &[4.0], &[7.0]).unwrap();
    d.push_timer("x => y => z", "", 1.0, 0.0, &[5.0], &[5.0]).unwrap();
    b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
    // A call-tree reader adds a node under the named `main => f`: found, not duplicated.
    let (p0, _) = {
        let mut b2 = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        let main = b2.intern_node(None, "main", "");
        let f = b2.intern_node(Some(main), "f", "");
        assert_eq!(b2.intern_node(Some(main), " f ", ""), f);
        let mut d = ThreadData::new(1);
        d.push_event(f, 1.0, 0.0, &[2.0], &[2.0]).unwrap();
        d.push_timer("main => f", "", 1.0, 0.0, &[1.0], &[1.0]).unwrap();
        b2.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        assert_eq!(b2.event_name(f), "main => f");
        b2.finish()
    };
    let f = p0.event_by_name("main => f").unwrap();
    assert_eq!(p0.events().len(), 2);
    assert_eq!(p0.interval(f).exclusive(crate::ids::MetricId(0)), &[3.0]);

    let (p, _) = b.finish();
    let g = p.event_by_name("main=>f=>g").unwrap();
    let f = p.event_by_name("main => f").unwrap();
    let main = p.event_by_name("main").unwrap();
    assert_eq!(&*p.event(g).frame, "g");
    assert_eq!(p.event(g).parent(), Some(f));
    assert_eq!(p.event(f).parent(), Some(main));
    assert_eq!(p.event_name(g), "main => f => g");
    assert_eq!(p.event_child(Some(f), "g"), Some(g));
    // The cut path keeps its whole name as its frame and is a root of the tree.
    let z = p.event_by_name("x => y => z").unwrap();
    assert_eq!((&*p.event(z).frame, p.event(z).parent()), ("x => y => z", None));
    assert_eq!(p.event(z).depth, 3);
    assert!(p.call_tree().roots().contains(&z));
    assert_eq!(p.event_by_name("main => g"), None);
    assert_eq!(p.event_by_name("y => z"), None);
}

#[test]
fn linked_callpaths_share_one_copy_of_each_frame() {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    let mut d = ThreadData::new(1);
    // `solve` is a flat event and the leaf of two callpaths; `step` only a leaf; a leaf
    // frame of 128 bytes or more is interned as one too.
    let long = format!("kernel_{}", "x".repeat(140));
    for name in [
        "main".to_string(),
        "solve".to_string(),
        "main => solve".to_string(),
        "main => step".to_string(),
        "main => step => solve".to_string(),
        "main => step => step".to_string(),
        format!("main => {long}"),
        format!("main => step => {long}"),
    ] {
        d.push_timer(&name, "", 1.0, 0.0, &[1.0], &[1.0]).unwrap();
    }
    b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
    let (p, _) = b.finish();
    let event = |name: &str| p.event(p.event_by_name(name).unwrap());
    let address = |name: &str| event(name).frame.address();
    assert_eq!(address("main => solve"), address("solve"));
    assert_eq!(address("main => step => solve"), address("solve"));
    assert_eq!(address("main => step => step"), address("main => step"));
    let long_a = format!("main => {long}");
    let long_b = format!("main => step => {long}");
    assert_eq!(address(&long_a), address(&long_b));
    // Each keeps its own text, parent and routine.
    assert_eq!(&*event("main => step => solve").frame, "solve");
    assert_eq!(&*event(&long_b).frame, long.as_str());
    assert_eq!(
        event("main => step => solve").parent(),
        p.event_by_name("main => step")
    );
    assert_eq!(event("main => step => solve").routine(), p.event_by_name("solve"));
    assert_eq!(p.event_name(p.event_by_name(&long_b).unwrap()), long_b);
}

#[test]
fn thread_totals_given_by_the_reader_are_kept_per_thread() {
    let mut b = ProfileBuilder::new(vec![Metric::tau("A"), Metric::tau("B")]);
    let mut d = ThreadData::new(2);
    d.push_timer("r1", "", 1.0, 0.0, &[1.0, 2.0], &[1.0, 2.0])
        .unwrap();
    d.set_total(&[4.0, 6.0]);
    b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
    let mut d = ThreadData::new(2);
    d.push_timer("r1", "", 1.0, 0.0, &[1.0, 2.0], &[1.0, 2.0])
        .unwrap();
    d.set_total(&[1.0]); // wrong length: ignored
    b.add_thread(ThreadId::new(1, 0, 0), d).unwrap();
    let (p, _) = b.finish();
    assert_eq!(p.thread_total(ThreadIndex(0), crate::ids::MetricId(1)), Some(6.0));
    assert_eq!(p.thread_total(ThreadIndex(1), crate::ids::MetricId(0)), None);
    let q = Profile::decode(&p.encode()).unwrap();
    assert_eq!(q.thread_total(ThreadIndex(0), crate::ids::MetricId(0)), Some(4.0));
    assert_eq!(q.thread_total(ThreadIndex(1), crate::ids::MetricId(0)), None);
}

#[test]
fn rows_in_the_last_threads_order_or_another_find_the_same_events() {
    let names = ["main", "main => f", "f", "x => y", "main => f => g"];
    let thread = |order: &[usize]| {
        let mut d = ThreadData::new(1);
        for &i in order {
            d.push_timer(names[i], "G", 1.0, 0.0, &[i as f64], &[i as f64])
                .unwrap();
        }
        d
    };
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    b.add_thread(ThreadId::new(0, 0, 0), thread(&[0, 1, 2, 3, 4]))
        .unwrap();
    b.add_thread(ThreadId::new(1, 0, 0), thread(&[0, 1, 2, 3, 4]))
        .unwrap();
    b.add_thread(ThreadId::new(2, 0, 0), thread(&[4, 0, 3, 1]))
        .unwrap();
    b.add_thread(ThreadId::new(3, 0, 0), thread(&[0, 2])).unwrap();
    let (p, notes) = b.finish();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(p.events().len(), names.len());
    for (i, name) in names.iter().enumerate() {
        let e = p.event_by_name(name).unwrap();
        let col = p.interval(e);
        let want: &[usize] = match i {
            2 => &[0, 1, 3],
            4 | 3 | 1 => &[0, 1, 2],
            _ => &[0, 1, 2, 3],
        };
        assert_eq!(
            col.threads().iter().map(|t| t.index()).collect::<Vec<_>>(),
            want,
            "{name}"
        );
        assert!(
            col.exclusive(crate::ids::MetricId(0))
                .iter()
                .all(|&x| x == i as f64),
            "{name}"
        );
    }
}

#[test]
fn rows_naming_an_event_the_builder_did_not_intern_are_refused() {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    let main = b.intern_node(None, "main", "");
    let mut d = ThreadData::new(1);
    d.push_event(main, 1.0, 0.0, &[1.0], &[1.0]).unwrap();
    d.declare_event(EventId(7));
    assert_eq!(
        b.add_thread(ThreadId::new(0, 0, 0), d),
        Err(BuildError::UnknownEvent { event: 7 })
    );
    let mut d = ThreadData::new(1);
    d.push_event(EventId(1), 1.0, 0.0, &[1.0], &[1.0]).unwrap();
    assert_eq!(
        b.add_thread(ThreadId::new(0, 0, 0), d),
        Err(BuildError::UnknownEvent { event: 1 })
    );
}

#[test]
fn nodes_of_a_ready_frame_are_the_nodes_intern_node_makes() {
    // The same calls through `intern_node` and through `node_frame` + `intern_node_frame`,
    // mixed: the same events, names, kinds, throttled marks, groups and depths.
    let frames = [
        (" MPI_Send() ", "MPI"),
        ("compute [THROTTLED]", ""),
        ("f", "TAU_CALLPATH"),
        ("f", "G|TAU_CALLPATH"),
    ];
    let build = |ready: bool| {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
        let main = b.intern_node(None, "main", "");
        let mut ids = Vec::new();
        let mut parent = main;
        for round in 0..2 {
            for (i, &(frame, groups)) in frames.iter().enumerate() {
                let e = if ready && (round + i) % 2 == 0 {
                    let f = b.node_frame(frame, groups);
                    b.intern_node_frame(parent, &f)
                } else {
                    b.intern_node(Some(parent), frame, groups)
                };
                ids.push(e);
                parent = if i == 1 { e } else { parent };
            }
        }
        let mut d = ThreadData::new(1);
        for &e in &ids {
            d.push_event(e, 1.0, 0.0, &[1.0], &[1.0]).unwrap();
        }
        b.add_thread(ThreadId::new(0, 0, 0), d).unwrap();
        (ids, b.finish().0)
    };
    let (by_name, p) = build(false);
    let (by_frame, q) = build(true);
    assert_eq!(by_name, by_frame);
    assert_eq!(p.events().len(), q.events().len());
    // Found again, not duplicated: `f` twice under `compute` (two group texts). Round 0 makes
    // three nodes and round 1 three more, one level down.
    assert_eq!(by_name[2], by_name[3]);
    assert_eq!(p.events().len(), 1 + 3 + 3);
    for e in p.event_ids() {
        let (a, b) = (p.event(e), q.event(e));
        assert_eq!(p.event_name(e), q.event_name(e));
        assert_eq!((a.kind, a.throttled, a.depth), (b.kind, b.throttled, b.depth));
        assert_eq!((a.parent(), a.routine()), (b.parent(), b.routine()));
        assert_eq!(p.event_groups_joined(e), q.event_groups_joined(e));
    }
    let send = q.event_by_name("main => MPI_Send()").unwrap();
    assert_eq!(q.event_groups_joined(send), "MPI");
    let throttled = q.event_by_name("main => compute [THROTTLED]").unwrap();
    assert!(q.event(throttled).throttled);
    let f = q.event_by_name("main => compute [THROTTLED] => f").unwrap();
    assert_eq!(q.event_groups_joined(f), "TAU_CALLPATH | G");
}

/// Thread `rank` of a run of 2 metrics the way the TAU reader hands it over: the first
/// thread's timers by event id (`ids`), a timer only odd ranks have by name, a timer listed
/// twice on every fifth rank, a declared timer on rank 7, user events (one twice on rank
/// 11) and metadata that differs per rank.
fn tau_like_thread(rank: u32, ids: &[EventId]) -> ThreadData {
    let mut d = ThreadData::new(2);
    let v = f64::from(rank);
    for (i, &e) in ids.iter().enumerate() {
        let x = v + i as f64 / 8.0;
        d.push_event(e, 1.0 + v, 2.0, &[x, 2.0 * x], &[x + 1.0, 2.0 * x + 1.0])
            .unwrap();
        if i == 1 && rank % 2 == 1 {
            d.push_timer("smooth", "COMPUTE", 3.0, 0.0, &[v, v], &[v, v])
                .unwrap();
        }
    }
    if rank % 5 == 0 {
        d.push_timer("main", "TAU_DEFAULT", 1.0, 0.0, &[0.5, 0.25], &[0.5, 0.25])
            .unwrap();
    }
    if rank == 7 {
        d.declare_timer("never called", "G");
    }
    d.push_atomic("halo bytes", 4.0, 8.0, 1.0, 2.0 + v, 20.0);
    if rank == 11 {
        d.push_atomic("halo bytes", 2.0, 9.0, 0.5, 3.0, 10.0);
    }
    d.push_metadata("Hostname", &format!("node{}", rank / 4));
    d.push_metadata("CPU Cores", "2");
    d
}

/// The profile and notes of `ranks` threads of [`tau_like_thread`] added one at a time
/// (`batch` 0) or, after the first, `batch` threads at a time with `add_threads`;
/// `expect` is the thread count announced.
fn tau_like_run(ranks: u32, expect: usize, batch: usize) -> (Profile, Vec<BuildNote>) {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME"), Metric::tau("PAPI_FP_OPS")]);
    b.expect_threads(expect);
    let ids: Vec<EventId> = ["main", "main => solve", "solve", "MPI_Send()"]
        .iter()
        .map(|n| b.declare_event(n, "TAU_DEFAULT"))
        .collect();
    let mut threads = (0..ranks).map(|r| (ThreadId::new(r, 0, 0), tau_like_thread(r, &ids)));
    if batch == 0 {
        for (id, d) in threads {
            b.add_thread(id, d).unwrap();
        }
    } else {
        let (id, d) = threads.next().unwrap();
        b.add_thread(id, d).unwrap();
        let rest: Vec<_> = threads.collect();
        let mut rest = rest.into_iter().peekable();
        while rest.peek().is_some() {
            b.add_threads(rest.by_ref().take(batch).collect()).unwrap();
        }
    }
    b.finish()
}

#[test]
fn threads_added_at_once_are_the_threads_added_one_at_a_time() {
    for expect in [40, 12, 0] {
        let (want, want_notes) = tau_like_run(40, expect, 0);
        // Summed, combined and noted as ParaProf does: rank 0, 5, … list `main` twice.
        assert!(
            want_notes
                .iter()
                .any(|n| n.message.contains("`main` is listed more than once"))
        );
        assert!(
            want_notes
                .iter()
                .any(|n| n.message.contains("`halo bytes` is listed more than once"))
        );
        let main = want.event_by_name("main").unwrap();
        let t5 = want.thread_index(ThreadId::new(5, 0, 0)).unwrap();
        assert_eq!(
            want.value(main, t5, ValueKind::Exclusive, MetricId(1)),
            Some(10.25)
        );
        let smooth = want.event_by_name("smooth").unwrap();
        assert_eq!(want.interval(smooth).threads().len(), 20);
        for batch in [1, 3, 16, 64] {
            let (got, notes) = tau_like_run(40, expect, batch);
            assert_eq!(notes, want_notes, "expect {expect}, batch {batch}");
            assert!(got == want, "expect {expect}, batch {batch}");
        }
    }
}

#[test]
fn a_thread_refused_in_a_batch_leaves_the_threads_before_it_added() {
    let run = |at_once: bool| {
        let mut b = ProfileBuilder::new(vec![Metric::tau("TIME"), Metric::tau("PAPI_FP_OPS")]);
        b.expect_threads(8);
        let ids = vec![b.declare_event("main", "G")];
        b.add_thread(ThreadId::new(0, 0, 0), tau_like_thread(0, &ids))
            .unwrap();
        // Rank 2 comes after rank 3: refused.
        let threads: Vec<_> = [1, 3, 2, 4]
            .iter()
            .map(|&r| (ThreadId::new(r, 0, 0), tau_like_thread(r, &ids)))
            .collect();
        let error = if at_once {
            b.add_threads(threads).unwrap_err()
        } else {
            threads
                .into_iter()
                .find_map(|(id, d)| b.add_thread(id, d).err())
                .unwrap()
        };
        (error, b.finish())
    };
    let (error, (profile, notes)) = run(true);
    assert_eq!(
        error,
        BuildError::ThreadOrder {
            previous: ThreadId::new(3, 0, 0),
            got: ThreadId::new(2, 0, 0)
        }
    );
    assert_eq!(profile.threads().len(), 3);
    let main = profile.event_by_name("main").unwrap();
    assert_eq!(profile.interval(main).threads().len(), 3);
    let (one_error, (one_profile, one_notes)) = run(false);
    assert_eq!(error, one_error);
    assert_eq!(notes, one_notes);
    assert!(profile == one_profile);
}
