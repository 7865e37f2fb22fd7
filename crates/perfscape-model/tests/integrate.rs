//! The integrator on synthetic samples: alignment by name and by position, waiting and
//! timeouts, late parts amending integrated samples, deltas, per-sample profiles.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use perfscape_model::{
    Alignment, AtomicKind, EventId, IntegrateError, Integrated, Integrator, IntegratorOptions, Metric,
    MetricId, SampleId, SampleMode, SampleSeries, ThreadId, ThreadIndex, TimerSample, ValueKind,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;
use common::Gen;

fn names(series: &SampleSeries) -> Vec<&str> {
    series.samples().iter().map(|s| s.name()).collect()
}

#[test]
fn by_name_orders_samples_of_different_thread_sets_like_tau_threads() {
    // pthread-heat: workers write iteration k then final; the main thread writes
    // after_join then final, later in time.
    let g = Gen::new();
    let now = Instant::now();
    let mut integ = Integrator::new(IntegratorOptions::default());
    // Thread 0's file is read first in a batch load.
    integ.push(g.sample(0, "after_join", 5, 500), now).unwrap();
    integ.push(g.sample(0, "final", 6, 600), now).unwrap();
    for t in 1..3 {
        for k in 1..=3 {
            integ
                .push(g.sample(t, &format!("iteration {k}"), k, 100 * i64::from(k)), now)
                .unwrap();
        }
        integ.push(g.sample(t, "final", 4, 590), now).unwrap();
    }
    let (series, report) = integ.finish();
    assert_eq!(
        names(&series),
        ["iteration 1", "iteration 2", "iteration 3", "after_join", "final"]
    );
    let t0 = ThreadIndex(0);
    assert_eq!(series.missing_threads(SampleId(0)), vec![t0]);
    assert_eq!(
        series.missing_threads(SampleId(3)),
        vec![ThreadIndex(1), ThreadIndex(2)]
    );
    assert!(series.samples()[4].is_complete());
    assert!(!series.samples()[0].is_complete());
    assert!(report.amended.is_empty());
    assert_eq!(series.samples()[4].timestamp_us(), 600);
}

#[test]
fn waits_for_threads_then_times_out_and_amends_late_parts() {
    let g = Gen::new();
    let t0 = Instant::now();
    let opts = IntegratorOptions {
        alignment: Alignment::ByName,
        max_wait: Some(Duration::from_secs(2)),
        window: None,
    };
    let mut integ = Integrator::new(opts);
    integ.expect_thread(ThreadId::new(0, 0, 0));
    integ.expect_thread(ThreadId::new(1, 0, 0));
    integ.push(g.sample(0, "iteration 1", 1, 100), t0).unwrap();
    assert!(integ.poll(t0).is_empty());
    assert!(integ.poll(t0 + Duration::from_secs(1)).is_empty());
    integ
        .push(g.sample(0, "iteration 2", 2, 200), t0 + Duration::from_secs(1))
        .unwrap();
    // After 2 s iteration 1 goes without rank 1; iteration 2 still waits.
    let done = integ.poll(t0 + Duration::from_secs(2));
    assert_eq!(done, vec![Integrated::Sample(SampleId(0))]);
    assert_eq!(integ.series().missing_threads(SampleId(0)), vec![ThreadIndex(1)]);
    // Rank 1 catches up: its iteration 1 amends sample 0, iteration 2 completes sample 1.
    integ.push(g.sample(1, "iteration 1", 1, 101), t0).unwrap();
    integ.push(g.sample(1, "iteration 2", 2, 201), t0).unwrap();
    let done = integ.poll(t0 + Duration::from_secs(2));
    assert_eq!(
        done,
        vec![
            Integrated::Amended {
                sample: SampleId(0),
                thread: ThreadIndex(1)
            },
            Integrated::Sample(SampleId(1))
        ]
    );
    let series = integ.series();
    assert!(series.samples()[0].is_complete());
    assert!(series.samples()[1].is_complete());
    let e = series.timer_by_name("work").unwrap();
    let v = series.timer_values(
        e,
        SampleId(0),
        ValueKind::Exclusive,
        MetricId(0),
        SampleMode::Cumulative,
    );
    assert_eq!(v.threads, &[ThreadIndex(0), ThreadIndex(1)]);
    assert_eq!(&v.values[..], &[10.0, 20.0]);
    let d = series.timer_values(
        e,
        SampleId(1),
        ValueKind::Exclusive,
        MetricId(0),
        SampleMode::Delta,
    );
    assert_eq!(&d.values[..], &[10.0, 20.0]);
}

#[test]
fn deltas_sum_back_to_cumulative_and_profiles_keep_event_ids() {
    let g = Gen::new();
    let now = Instant::now();
    let mut integ = Integrator::new(IntegratorOptions {
        alignment: Alignment::ByPosition,
        max_wait: None,
        window: None,
    });
    for t in 0..3 {
        for k in 1..=4 {
            // Thread 2 skips its second sample's name but not its position.
            integ
                .push(g.sample(t, &format!("dump {k}"), k * k, i64::from(k)), now)
                .unwrap();
        }
    }
    let (series, _) = integ.finish();
    assert_eq!(series.len(), 4);
    for e in 0..series.timer_count() {
        let e = EventId::from(e);
        for kind in ValueKind::ALL {
            for m in [MetricId(0), MetricId(1)] {
                let last = series.timer_row(e, SampleId(3), kind, m).to_vec();
                let mut sum = vec![0.0; last.len()];
                for s in 0..4 {
                    let d = series.timer_values(e, SampleId(s), kind, m, SampleMode::Delta);
                    for (acc, v) in sum.iter_mut().zip(d.values.iter()) {
                        *acc += v;
                    }
                }
                assert_eq!(sum, last, "{} {kind:?}", series.timer_name(e));
            }
        }
    }
    let p = series.profile_at(SampleId(2), SampleMode::Cumulative).unwrap();
    for e in 0..series.timer_count() {
        let e = EventId::from(e);
        assert_eq!(p.event_name(e), series.timer_name(e));
    }
    let work = p.event_by_name("work").unwrap();
    assert_eq!(
        p.interval(work).exclusive(MetricId(1)),
        &[9.0, 9.0, 9.0],
        "cumulative CPU_TIME at the third dump"
    );
    let d = series.profile_at(SampleId(2), SampleMode::Delta).unwrap();
    assert_eq!(d.interval(work).exclusive(MetricId(0)), &[50.0, 100.0, 150.0]);
    let a = d.atomic_event_by_name("bytes").unwrap();
    assert_eq!(d.atomic(a).count(), &[5.0, 5.0, 5.0]);
    assert_eq!(d.atomic(a).mean(), &[4.0, 4.0, 4.0]);
    assert_eq!(d.atomic(a).sum_squares(), &[100.0; 3]);
    assert_eq!(p.metadata().get(ThreadIndex(1), "rank"), Some("1"));
    let f = series.final_profile().unwrap();
    assert_eq!(f.interval(work).calls(), &[48.0, 48.0, 48.0]);
    let trend = series.timer_trend(work, ValueKind::Exclusive, MetricId(0), SampleMode::Cumulative);
    assert_eq!(trend.len(), 4);
    assert_eq!(trend[3].0, SampleId(3));
    let t3 = trend[3].1;
    assert_eq!((t3.min, t3.max, t3.mean), (160.0, 480.0, 320.0));
    assert_eq!(t3.min_thread, Some(ThreadIndex(0)));
    let ut = series.user_event_trend(
        series.user_event_by_name("bytes").unwrap(),
        AtomicKind::Max,
        SampleMode::Cumulative,
    );
    assert_eq!(ut[0].1.max, 24.0);
}

#[test]
fn refuses_other_metrics_and_bad_shapes() {
    let g = Gen::new();
    let now = Instant::now();
    let mut integ = Integrator::new(IntegratorOptions::default());
    integ.push(g.sample(0, "a", 1, 1), now).unwrap();
    let mut other = g.sample(1, "a", 1, 1);
    other.metrics = Arc::new(vec![Metric::tau("TIME")]);
    other.timer_values.truncate(6);
    assert!(matches!(
        integ.push(other, now),
        Err(IntegrateError::Metrics { .. })
    ));
    let mut bad = g.sample(1, "a", 1, 1);
    bad.timer_values.pop();
    assert!(matches!(integ.push(bad, now), Err(IntegrateError::Shape { .. })));
}

#[test]
fn a_thread_that_never_writes_is_missing_not_waited_for_after_it_ends() {
    let g = Gen::new();
    let now = Instant::now();
    let mut integ = Integrator::new(IntegratorOptions::default());
    integ.expect_thread(ThreadId::new(0, 0, 0));
    integ.expect_thread(ThreadId::new(5, 0, 0));
    integ.push(g.sample(0, "iteration 1", 1, 1), now).unwrap();
    assert!(integ.poll(now).is_empty());
    integ.end_thread(ThreadId::new(5, 0, 0));
    assert_eq!(integ.poll(now).len(), 1);
    assert_eq!(integ.series().missing_threads(SampleId(0)), vec![ThreadIndex(1)]);
    let p = integ
        .series()
        .profile_at(SampleId(0), SampleMode::Cumulative)
        .unwrap();
    assert_eq!(p.threads(), &[ThreadId::new(0, 0, 0)]);
}

#[test]
fn a_new_slot_in_a_late_part_widens_the_old_row() {
    let g = Gen::new();
    let now = Instant::now();
    let opts = IntegratorOptions {
        alignment: Alignment::ByName,
        max_wait: Some(Duration::ZERO),
        window: None,
    };
    let mut integ = Integrator::new(opts);
    integ.expect_thread(ThreadId::new(0, 0, 0));
    integ.expect_thread(ThreadId::new(1, 0, 0));
    integ.push(g.sample(0, "s", 1, 1), now).unwrap();
    integ.push(g.sample(0, "t", 2, 2), now).unwrap();
    assert_eq!(integ.poll(now).len(), 2);
    // Thread 1 brings a timer no thread had: it gets a slot, row 0 widens.
    let mut late = g.sample(1, "s", 1, 1);
    late.timers.push(TimerSample {
        def: g.defs[3].clone(),
        calls: 1.0,
        subcalls: 0.0,
    });
    late.timer_values.extend([5.0, 6.0, 7.0, 8.0]);
    integ.push(late, now).unwrap();
    assert_eq!(integ.poll(now).len(), 1);
    let s = integ.series();
    let e = s.timer_by_name("late").unwrap();
    let v = s.timer_values(
        e,
        SampleId(0),
        ValueKind::Inclusive,
        MetricId(1),
        SampleMode::Cumulative,
    );
    assert_eq!(v.threads, &[ThreadIndex(1)]);
    assert_eq!(&v.values[..], &[8.0]);
    let work = s.timer_by_name("work").unwrap();
    let row = s.timer_row(work, SampleId(1), ValueKind::Calls, MetricId(0));
    assert_eq!(row, &[6.0], "thread 1's slot came after sample 1: not in its row");
    let t1 = ThreadIndex(1);
    assert_eq!(
        s.timer_value(
            work,
            t1,
            SampleId(1),
            ValueKind::Calls,
            MetricId(0),
            SampleMode::Cumulative
        ),
        None,
        "thread 1 is still missing from sample 1"
    );
    assert_eq!(
        s.timer_value(
            work,
            t1,
            SampleId(0),
            ValueKind::Calls,
            MetricId(0),
            SampleMode::Cumulative
        ),
        Some(3.0)
    );
}
