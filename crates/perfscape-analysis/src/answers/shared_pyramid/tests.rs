//! The views read through a pyramid cut from the shared one ([`derived_pyramid`]) answer as
//! through the pyramid built directly over their rows and threads (the oracle:
//! [`build_pyramid`]), for every row order, `callpaths` choice, first `n` threads, value kind
//! and metric.

use super::*;
use crate::answers::{MatrixInput, OverviewOptions, Region, build_pyramid, matrix, overview, terrain};
use crate::axis::{AxisOrder, AxisSubset, order_axis, subset_axis};
use crate::views::Reduce;
use perfscape_model::{Combine, Metric, ProfileBuilder, ThreadData, ThreadId, ThreadIndex, ValueKind};
use proptest::prelude::*;

/// [`derived_pyramid`] from a pyramid already built (`base`).
fn cut_from(
    p: &Profile,
    values: Values,
    (base_rows, base_axis, base): (&RowSet, &AxisInfo, &Pyramid),
    rows: (&RowSet, &AxisInfo),
    level_cells: usize,
) -> Option<Pyramid> {
    let base = || Ok::<_, std::convert::Infallible>(base);
    derived_pyramid(p, values, (base_rows, base_axis), base, rows, level_cells)
        .unwrap_or_else(|never| match never {})
}

/// `threads` threads of flat timers, callpaths (`main => fN`) and `[SAMPLE]` events, values on
/// a few levels (ties), zeros, and some threads without some events; a metric combining by
/// the maximum too.
fn profile(threads: u32, events: usize) -> Profile {
    let metrics = vec![
        Metric::tau("TIME"),
        Metric::tau("MAX_X").combined_by(Combine::Max),
    ];
    let mut names: Vec<String> = (0..events).map(|e| format!("f{e}")).collect();
    names.extend((1..events.min(6)).map(|e| format!("main => f{e}")));
    names.push("[SAMPLE] a [{x.c} {10}]".to_string());
    let mut b = ProfileBuilder::new(metrics);
    for t in 0..threads {
        let mut d = ThreadData::new(2);
        for (e, name) in names.iter().enumerate() {
            let (t, e) = (t as usize, e);
            if (t * 7 + e * 3) % 5 == 0 {
                continue; // no data for this event on this thread
            }
            let q = |salt: usize| ((t * 13 + e * 7 + salt) % 4) as f64;
            d.push_timer(name, "G", q(5), q(6), &[q(0), q(1) * 10.0], &[q(1) + 4.0, q(2)])
                .unwrap();
        }
        b.add_thread(ThreadId::new(t, 0, 0), d).unwrap();
    }
    b.finish().0
}

/// Every answer of the matrix views through pyramid `a` equals that through `b` (as JSON).
fn same_views(p: &Profile, values: Values, rows: &RowSet, axis: &AxisInfo, a: &Pyramid, b: &Pyramid) {
    let input = |pyramid| MatrixInput {
        profile: p,
        values,
        rows,
        axis,
        pyramid,
        first_row: 0,
    };
    let (ia, ib) = (input(a), input(b));
    let json = |v: &dyn erased::Json| v.json();
    let regions = [
        Region::default(),
        Region {
            r0: Some(1),
            r1: Some(7),
            t0: Some(3),
            t1: Some(29),
            h: Some(3),
            w: Some(5),
        },
        Region {
            h: Some(2),
            w: Some(3),
            ..Region::default()
        },
    ];
    for region in &regions {
        for reduce in [Reduce::Max, Reduce::Sum] {
            if values.check_reduce(p.metrics(), reduce).is_err() {
                continue;
            }
            let (x, y) = (
                matrix(&ia, region, reduce, None, None).unwrap(),
                matrix(&ib, region, reduce, None, None).unwrap(),
            );
            assert_eq!(json(&x), json(&y), "matrix {region:?} {reduce:?}");
            let options = OverviewOptions {
                skip: Some(1),
                bin: Some(2),
                strips: Some(2),
                w: region.w,
            };
            let (x, y) = (
                overview(&ia, &options, reduce).unwrap(),
                overview(&ib, &options, reduce).unwrap(),
            );
            assert_eq!(json(&x), json(&y), "overview {reduce:?}");
        }
        let (x, y) = (
            terrain(&ia, region, Some(5), None),
            terrain(&ib, region, Some(5), None),
        );
        assert_eq!(json(&x), json(&y), "terrain {region:?}");
    }
}

/// JSON of any answer, bit for bit (floats written in full).
mod erased {
    pub trait Json {
        fn json(&self) -> String;
    }
    impl<T: serde::Serialize> Json for T {
        fn json(&self) -> String {
            serde_json::to_string(self).unwrap()
        }
    }
}

/// Axes: id order, reversed, and the first `n` threads of each.
fn axes(p: &Profile, tops: &[u32]) -> Vec<(AxisInfo, AxisInfo)> {
    let n = p.threads().len();
    let id = order_axis(p, AxisOrder::Id);
    let reversed = AxisInfo {
        axis: crate::views::ThreadAxis::from_order(n, (0..n).rev().map(ThreadIndex::from).collect()),
        clustering: None,
        cluster_starts: Vec::new(),
        label: "reversed".into(),
    };
    let mut out = Vec::new();
    for whole in [id, reversed] {
        out.push((whole.clone(), whole.clone()));
        for &t in tops {
            out.push((
                whole.clone(),
                subset_axis(p, &whole, AxisOrder::Id, AxisSubset::Top(t)),
            ));
        }
    }
    out
}

/// Checks every row spec of `values` on `axis` (cut from `whole`); returns how many pyramids
/// were cut (not built).
fn check(p: &Profile, values: Values, whole: &AxisInfo, axis: &AxisInfo, budget: usize) -> usize {
    let base_spec = RowSpec {
        values,
        rows: RowKind::Events,
        callpaths: false,
        order: RowOrder::Rank,
    }
    .shared()
    .unwrap();
    let base_rows = base_spec.build(p);
    let base = build_pyramid(p, values, &base_rows, whole, budget);
    let mut cut = 0;
    for callpaths in [false, true] {
        for order in [RowOrder::Rank, RowOrder::Name, RowOrder::File] {
            let spec = RowSpec {
                values,
                rows: RowKind::Events,
                callpaths,
                order,
            };
            assert_eq!(spec.shared(), Some(base_spec));
            let rows = spec.build(p);
            let direct = build_pyramid(p, values, &rows, axis, budget);
            let derived = cut_from(p, values, (&base_rows, whole, &base), (&rows, axis), budget);
            if let Some(derived) = derived {
                same_views(p, values, &rows, axis, &derived, &direct);
                cut += 1;
            }
        }
    }
    cut
}

#[test]
fn every_order_callpaths_and_first_threads_answer_as_built_directly() {
    let p = profile(37, 9);
    let mut cut = 0;
    for (whole, axis) in axes(&p, &[1, 2, 8, 13, 36, 37]) {
        for metric in 0..2 {
            for kind in ValueKind::ALL {
                let values = Values::new(p.metrics(), Some(metric), Some(kind)).unwrap();
                cut += check(&p, values, &whole, &axis, 1 << 20);
            }
        }
    }
    // Every pyramid of more than one thread is cut (a single thread stores no level).
    let per_axis = 2 * ValueKind::ALL.len() * 6;
    assert_eq!(cut, 2 * 6 * per_axis, "pyramids cut");
}

/// Planted: three events whose rows in `Rank` order are the reverse of file order; the row of
/// the largest total is first and carries its own values, not its neighbour's.
#[test]
fn planted_rank_order_reads_each_events_own_blocks() {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    for t in 0..4u32 {
        let mut d = ThreadData::new(1);
        for (e, scale) in [("a", 1.0), ("b", 10.0), ("c", 100.0)] {
            let v = scale * f64::from(t + 1);
            d.push_timer(e, "G", 1.0, 0.0, &[v], &[v]).unwrap();
        }
        b.add_thread(ThreadId::new(t, 0, 0), d).unwrap();
    }
    let p = b.finish().0;
    let values = Values::new(p.metrics(), Some(0), Some(ValueKind::Exclusive)).unwrap();
    let whole = order_axis(&p, AxisOrder::Id);
    let base_spec = RowSpec {
        values,
        rows: RowKind::Events,
        callpaths: true,
        order: RowOrder::File,
    };
    let base_rows = base_spec.build(&p);
    let base = build_pyramid(&p, values, &base_rows, &whole, 1 << 20);
    let spec = RowSpec {
        order: RowOrder::Rank,
        ..base_spec
    };
    let rows = spec.build(&p);
    let labels: Vec<&str> = rows.rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["c", "b", "a"]);
    let top2 = subset_axis(&p, &whole, AxisOrder::Id, AxisSubset::Top(2));
    for (axis, sums) in [(&whole, [1000.0, 100.0, 10.0]), (&top2, [300.0, 30.0, 3.0])] {
        let cut = cut_from(&p, values, (&base_rows, &whole, &base), (&rows, axis), 1 << 20).unwrap();
        let src = crate::answers::matrix::profile_matrix(&p, values, &rows, axis);
        // One bin per row over every thread: the sums of 1..=n times the event's scale.
        let g = cut.grid(&src, 0..3, 0..axis.axis.len(), 3, 1, Reduce::Sum);
        assert_eq!(g.values, sums.map(Some));
        // Row 0 (`c`) has its largest value on the last thread of the axis.
        let n = axis.axis.len();
        assert_eq!(cut.row_max(0), Some((n - 1, 100.0 * n as f64)));
    }
    // An axis that is not the first threads of the whole one is not cut.
    let other = subset_axis(&p, &whole, AxisOrder::Id, AxisSubset::Top(2));
    let reversed = AxisInfo {
        axis: crate::views::ThreadAxis::from_order(4, vec![ThreadIndex::from(1), ThreadIndex::from(0)]),
        ..other
    };
    assert!(
        cut_from(
            &p,
            values,
            (&base_rows, &whole, &base),
            (&rows, &reversed),
            1 << 20
        )
        .is_none()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any thread count, event count, first `n` threads, level budget, value kind and metric.
    #[test]
    fn cut_pyramids_answer_as_built_directly(
        threads in 2u32..70,
        events in 1usize..12,
        top in 1u32..80,
        budget in prop_oneof![Just(1usize), Just(16), Just(200), Just(1 << 20)],
        metric in 0u32..2,
        kind in 0usize..ValueKind::ALL.len(),
        reversed in any::<bool>(),
    ) {
        let p = profile(threads, events);
        let values = Values::new(p.metrics(), Some(metric), Some(ValueKind::ALL[kind])).unwrap();
        let pairs = axes(&p, &[top]);
        let (whole, axis) = &pairs[if reversed { 2 } else { 0 } + 1];
        check(&p, values, whole, axis, budget);
        check(&p, values, whole, whole, budget);
    }
}
