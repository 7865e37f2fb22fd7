//! A series kept within a window of samples (`IntegratorOptions::window`): the same samples
//! integrated with and without a window, the windowed series checked against the whole one.
//! Kept samples hold the same cumulative values; a kept sample's delta equals the sum of the
//! whole series' deltas since the thread's previous kept sample; the final state is the same;
//! memory stays flat.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use perfscape_model::{
    Alignment, Integrator, IntegratorOptions, MetricId, SampleId, SampleMode, SampleSeries, ThreadId,
    ThreadIndex, ValueKind,
};
use std::time::Instant;

mod common;
use common::Gen;

/// Threads 0 and 1 write `iteration 1..=n`; thread 2 writes `iteration 1..=ends_at` and ends.
fn integrate(
    n: u32,
    ends_at: u32,
    window: Option<usize>,
) -> (SampleSeries, perfscape_model::IntegrationReport) {
    let g = Gen::new();
    let now = Instant::now();
    let mut integ = Integrator::new(IntegratorOptions {
        alignment: Alignment::ByName,
        max_wait: None,
        window,
    });
    for t in 0..3 {
        integ.expect_thread(ThreadId::new(t, 0, 0));
    }
    let mut kept_max = 0;
    for k in 1..=n {
        for t in 0..3 {
            if t == 2 && k > ends_at {
                continue;
            }
            let s = g.sample(
                t,
                &format!("iteration {k}"),
                k,
                1_000 * i64::from(k) + i64::from(t),
            );
            integ.push(s, now).unwrap();
        }
        if k == ends_at {
            integ.end_thread(ThreadId::new(2, 0, 0));
        }
        integ.poll(now);
        kept_max = kept_max.max(integ.series().kept_samples().len());
    }
    if let Some(w) = window {
        assert!(
            kept_max <= w.max(4),
            "kept {kept_max} samples with a window of {w}"
        );
    }
    integ.finish()
}

/// Values as bits, so that NaN (a missing thread) compares equal to NaN.
fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn a_windowed_series_agrees_with_the_whole_one() {
    let (whole, _) = integrate(60, 13, None);
    let (win, report) = integrate(60, 13, Some(10));
    assert_eq!(whole.len(), 60);
    assert_eq!(win.len(), 60, "thinned samples keep their ids, names and times");
    assert!(win.kept_samples().len() <= 10);
    assert_eq!(report.thinned, 60 - win.kept_samples().len());
    assert_eq!(win.thinned_count(), report.thinned);
    let kept: Vec<SampleId> = win.kept_samples().collect();
    assert_eq!(kept[0], SampleId(0), "the first sample is kept");
    // The newest half of the window is kept whole.
    assert!(kept.ends_with(&(55..60).map(SampleId).collect::<Vec<_>>()));
    // Thread 2's last sample (iteration 13) is kept: its final state.
    assert!(kept.contains(&SampleId(12)));
    // The older part is spread evenly over the whole history: every multiple of one stride
    // (a power of two) before the newest samples, and nothing else but thread 2's last.
    let recent = kept.iter().position(|s| s.0 >= 55).unwrap();
    let old: Vec<u32> = kept[..recent].iter().map(|s| s.0).filter(|&x| x != 12).collect();
    let stride = old[1] - old[0];
    assert!(stride.is_power_of_two() && stride > 1, "{old:?}");
    assert_eq!(
        old,
        (0..55).step_by(stride as usize).collect::<Vec<u32>>(),
        "stride {stride}"
    );
    for (i, info) in win.samples().iter().enumerate() {
        assert_eq!(info.name(), whole.samples()[i].name());
        assert_eq!(info.timestamp_us(), whole.samples()[i].timestamp_us());
        assert_eq!(info.is_thinned(), !kept.contains(&SampleId(i as u32)));
    }
    let e = whole.timer_by_name("work").unwrap();
    let m = MetricId(0);
    for (r, &s) in kept.iter().enumerate() {
        for kind in [ValueKind::Exclusive, ValueKind::Inclusive, ValueKind::Calls] {
            let a = win.timer_values(e, s, kind, m, SampleMode::Cumulative);
            let b = whole.timer_values(e, s, kind, m, SampleMode::Cumulative);
            assert_eq!(a.threads, b.threads);
            assert_eq!(bits(&a.values), bits(&b.values), "cumulative {kind:?} at {s:?}");
            // Delta: the whole series' deltas summed over the samples since each thread's
            // previous kept sample it is present in.
            let d = win.timer_values(e, s, kind, m, SampleMode::Delta);
            for (j, &t) in d.threads.iter().enumerate() {
                if d.values[j].is_nan() {
                    assert!(!whole.sample(s).unwrap().is_present(t));
                    continue;
                }
                let since = kept[..r]
                    .iter()
                    .rev()
                    .find(|p| whole.sample(**p).unwrap().is_present(t))
                    .map_or(0, |p| p.0 + 1);
                let want: f64 = (since..=s.0)
                    .filter_map(|x| whole.timer_value(e, t, SampleId(x), kind, m, SampleMode::Delta))
                    .sum();
                assert!(
                    (d.values[j] - want).abs() < 1e-9,
                    "delta {kind:?} at {s:?} thread {t:?}"
                );
            }
        }
    }
    // A thinned sample has no values; asking for it gives nothing rather than a guess.
    let thinned = (0..60).map(SampleId).find(|s| !kept.contains(s)).unwrap();
    assert!(
        win.timer_values(e, thinned, ValueKind::Exclusive, m, SampleMode::Delta)
            .values
            .is_empty()
    );
    assert_eq!(
        win.timer_value(
            e,
            ThreadIndex(0),
            thinned,
            ValueKind::Exclusive,
            m,
            SampleMode::Cumulative
        ),
        None
    );
    assert_eq!(
        win.profile_at(thinned, SampleMode::Cumulative)
            .unwrap()
            .threads()
            .len(),
        0
    );
    // The final state (every thread's last sample, thread 2's from iteration 13) is unchanged.
    let (fw, fa) = (win.final_profile().unwrap(), whole.final_profile().unwrap());
    assert_eq!(fw.threads().len(), 3);
    for kind in [ValueKind::Exclusive, ValueKind::Inclusive] {
        let ew = fw.event_by_name("work").unwrap();
        let ea = fa.event_by_name("work").unwrap();
        assert_eq!(
            bits(fw.interval(ew).values(kind, m)),
            bits(fa.interval(ea).values(kind, m))
        );
    }
    // The trend has one point per kept sample, each the whole series' point at that id.
    let tw = win.timer_trend(e, ValueKind::Exclusive, m, SampleMode::Cumulative);
    let ta = whole.timer_trend(e, ValueKind::Exclusive, m, SampleMode::Cumulative);
    assert_eq!(tw.len(), kept.len());
    for (s, a) in &tw {
        let b = ta.iter().find(|(x, _)| x == s).map(|(_, b)| b).unwrap();
        assert_eq!(
            (a.threads, a.sum.to_bits(), a.max_thread),
            (b.threads, b.sum.to_bits(), b.max_thread)
        );
    }
}

#[test]
fn memory_stays_flat_with_a_window() {
    let (s200, _) = integrate(200, 200, Some(16));
    let (s2000, _) = integrate(2_000, 2_000, Some(16));
    let (whole, _) = integrate(200, 200, None);
    // What remains of a thinned sample: its name, time and counts (under 128 bytes here).
    let per_sample = (s2000.heap_bytes() - s200.heap_bytes()) / 1_800;
    assert!(per_sample < 128, "{per_sample} bytes per thinned sample");
    assert!(s200.heap_bytes() * 4 < whole.heap_bytes());
}
