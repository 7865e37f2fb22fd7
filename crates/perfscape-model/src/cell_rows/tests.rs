//! Tests of [`super::CellRows`]: every layout (first thread, drafts, dense) gives the same
//! arena.

use super::*;
use crate::ids::MetricId;

/// Adds `cells` (event, thread, value) in order (threads ascending) and returns the arena;
/// `expect` is the thread count announced (0: none).
fn arena(expect: usize, events: usize, cells: &[(u32, u32, f64)]) -> (IntervalColumns, Vec<bool>) {
    let mut rows = CellRows::new(1);
    rows.expect_threads(expect);
    let mut made = 0;
    let mut fresh = Vec::new();
    for &(e, t, v) in cells {
        while made <= e as usize {
            rows.push_event();
            made += 1;
        }
        fresh.push(rows.add(EventId(e), ThreadIndex(t), 1.0, 2.0, &[v], &[v * 10.0]));
    }
    while made < events {
        rows.push_event();
        made += 1;
    }
    (rows.finish(events), fresh)
}

/// The cells worked out by hand: each event's threads ascending, a duplicate summed.
fn check(a: &IntervalColumns) {
    assert_eq!(a.len(), 4);
    let threads = |e| a.column(e).threads().iter().map(|t| t.0).collect::<Vec<_>>();
    assert_eq!(threads(0), [0, 1, 2]);
    assert_eq!(threads(1), [0, 2]);
    assert_eq!(threads(2), [1, 2]);
    assert_eq!(threads(3), Vec::<u32>::new());
    let c = a.column(1);
    assert_eq!(c.exclusive(MetricId(0)), &[2.0, 9.0]);
    assert_eq!(c.inclusive(MetricId(0)), &[20.0, 90.0]);
    assert_eq!(c.calls(), &[1.0, 2.0]); // thread 2 lists event 1 twice
    assert_eq!(a.column(2).exclusive(MetricId(0)), &[5.0, 6.0]);
}

const CELLS: [(u32, u32, f64); 8] = [
    (0, 0, 1.0),
    (1, 0, 2.0),
    (0, 1, 3.0),
    (2, 1, 5.0),
    (1, 2, 4.0),
    (0, 2, 7.0),
    (2, 2, 6.0),
    (1, 2, 5.0),
];

#[test]
fn cells_in_place_equal_cells_in_drafts() {
    let (drafts, fresh_d) = arena(0, 4, &CELLS);
    check(&drafts);
    for expect in [3, 2, 1] {
        // 3: every cell in place; 2: thread 2 comes beyond the announced count and the
        // cells move to drafts; 1: no in-place layout at all.
        let (dense, fresh) = arena(expect, 4, &CELLS);
        check(&dense);
        assert_eq!(dense, drafts, "announced {expect} threads");
        assert_eq!(fresh, fresh_d);
    }
    assert_eq!(fresh_d, [true, true, true, true, true, true, true, false]);
}

/// The first thread's events ascending with gaps, a duplicate inside a run, then out of
/// order (the runs give way to a per-cell event list), then a second thread: the values
/// worked out by hand.
#[test]
fn first_thread_runs_gaps_duplicates_and_disorder() {
    let cells = [
        (0, 0, 1.0),
        (1, 0, 2.0),
        (4, 0, 3.0),
        (5, 0, 4.0),
        (1, 0, 10.0), // duplicate inside the first run: summed
        (4, 0, 20.0), // duplicate inside the second run
        (6, 0, 5.0),
        (3, 0, 6.0),  // out of order: a gap of the runs
        (0, 0, 30.0), // duplicate after the disorder
        (2, 1, 7.0),
        (4, 1, 8.0),
    ];
    for expect in [0, 2] {
        let (a, fresh) = arena(expect, 8, &cells);
        let col = |e: usize| {
            let c = a.column(e);
            (
                c.threads().iter().map(|t| t.0).collect::<Vec<_>>(),
                c.exclusive(MetricId(0)).to_vec(),
                c.calls().to_vec(),
            )
        };
        assert_eq!(col(0), (vec![0], vec![31.0], vec![2.0]));
        assert_eq!(col(1), (vec![0], vec![12.0], vec![2.0]));
        assert_eq!(col(2), (vec![1], vec![7.0], vec![1.0]));
        assert_eq!(col(3), (vec![0], vec![6.0], vec![1.0]));
        assert_eq!(col(4), (vec![0, 1], vec![23.0, 8.0], vec![2.0, 1.0]));
        assert_eq!(col(5), (vec![0], vec![4.0], vec![1.0]));
        assert_eq!(col(6), (vec![0], vec![5.0], vec![1.0]));
        assert_eq!(col(7), (vec![], vec![], vec![]));
        assert_eq!(
            fresh,
            [
                true, true, true, true, false, false, true, true, false, true, true
            ]
        );
    }
    // One thread only, out of order: rearranged by event at the end.
    let (a, _) = arena(0, 8, &cells[..9]);
    assert_eq!(a.column(0).exclusive(MetricId(0)), &[31.0]);
    assert_eq!(a.column(3).inclusive(MetricId(0)), &[60.0]);
    assert_eq!(a.cell_count(), 6);
}

/// Columns given whole for the first thread are adopted (then appended to, and cells
/// added one by one after them); any other case is refused, for the caller to add cell
/// by cell.
#[test]
fn columns_of_the_first_thread_are_adopted() {
    let mut rows = CellRows::new(1);
    for _ in 0..6 {
        rows.push_event();
    }
    let cols = |v: &[f64]| {
        vec![
            vec![1.0; v.len()],
            vec![0.0; v.len()],
            v.to_vec(),
            v.iter().map(|x| x * 10.0).collect(),
        ]
    };
    let e = |ids: &[u32]| ids.iter().map(|&i| EventId(i)).collect::<Vec<_>>();
    let t0 = ThreadIndex(0);
    assert!(
        rows.add_columns(&e(&[0, 2, 3]), t0, cols(&[1.0, 2.0, 3.0]))
            .is_ok()
    );
    // Not past the thread's last event, or not ascending, or the wrong width: refused.
    assert!(rows.add_columns(&e(&[3, 4]), t0, cols(&[9.0, 9.0])).is_err());
    assert!(rows.add_columns(&e(&[5, 4]), t0, cols(&[9.0, 9.0])).is_err());
    assert!(rows.add_columns(&e(&[4]), t0, vec![vec![1.0]]).is_err());
    assert!(rows.add_columns(&e(&[4]), t0, cols(&[4.0])).is_ok());
    assert!(!rows.add(EventId(2), t0, 1.0, 0.0, &[5.0], &[50.0]));
    assert!(rows.add(EventId(1), t0, 1.0, 0.0, &[6.0], &[60.0]));
    assert!(rows.add_columns(&e(&[5]), ThreadIndex(1), cols(&[7.0])).is_err());
    let a = rows.finish(6);
    let x = |e: usize| a.column(e).exclusive(MetricId(0)).to_vec();
    assert_eq!(
        (x(0), x(1), x(2), x(3), x(4), x(5)),
        (vec![1.0], vec![6.0], vec![7.0], vec![3.0], vec![4.0], vec![])
    );
    assert_eq!(a.column(2).inclusive(MetricId(0)), &[70.0]);
    assert_eq!(a.column(2).calls(), &[2.0]);
    assert_eq!(a.column(4).threads(), &[ThreadIndex(0)]);
}

#[test]
fn events_beyond_the_in_place_room_move_the_cells_to_drafts() {
    // The first thread has one event, so the in-place room is 66 events: 1,500 events on
    // thread 1 go past it.
    let mut cells = vec![(0, 0, 1.0)];
    cells.extend((0..1500).map(|e| (e, 1, f64::from(e))));
    cells.extend((0..1500).step_by(7).map(|e| (e, 2, 2.0 * f64::from(e))));
    let (drafts, _) = arena(0, 1500, &cells);
    let (dense, _) = arena(3, 1500, &cells);
    assert_eq!(dense, drafts);
    let c = dense.column(1400);
    assert_eq!(c.threads(), &[ThreadIndex(1), ThreadIndex(2)]);
    assert_eq!(c.exclusive(MetricId(0)), &[1400.0, 2800.0]);
}
