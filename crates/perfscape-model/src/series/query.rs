//! Reading a [`SampleSeries`]: one event at one sample for every thread (cumulative or
//! delta), single cells, and statistics across threads at every sample (trends).

use super::{
    ATOMIC_Q, AcrossThreads, AtomicKind, EventRows, SampleId, SampleMode, SampleSeries, SampleValues,
};
use crate::columns::ValueKind;
use crate::ids::{AtomicEventId, EventId, MetricId, ThreadIndex};
use std::borrow::Cow;

impl SampleSeries {
    pub(super) fn timer_q_index(kind: ValueKind, m: MetricId) -> usize {
        match kind {
            ValueKind::Calls => 0,
            ValueKind::Subcalls => 1,
            ValueKind::Exclusive => 2 + 2 * m.index(),
            ValueKind::Inclusive => 3 + 2 * m.index(),
        }
    }

    /// Quantity `q` of the row at position `r` (`None`: a thinned sample, empty).
    pub(super) fn row_slice(rows: &EventRows, r: Option<usize>, q: usize, nq: usize) -> &[f64] {
        let Some(row) = r.and_then(|r| rows.rows.get(r)) else {
            return &[];
        };
        let w = row.len() / nq.max(1);
        row.get(q * w..(q + 1) * w).unwrap_or(&[])
    }

    /// Cumulative values of timer `e`, `kind`, metric `m` at sample `s`, one per slot of
    /// [`SampleSeries::timer_threads`] (the first `len` slots): a borrowed, contiguous slice.
    /// Empty when out of range or thinned.
    pub fn timer_row(&self, e: EventId, s: SampleId, kind: ValueKind, m: MetricId) -> &[f64] {
        if m.index() >= self.metrics.len() && !kind.is_metric_independent() {
            return &[];
        }
        self.timers.get(e.index()).map_or(&[], |rows| {
            Self::row_slice(
                rows,
                self.row(s.index()),
                Self::timer_q_index(kind, m),
                self.timer_q(),
            )
        })
    }

    /// Cumulative values of user event `a`, `kind` at sample `s`, one per slot (empty when
    /// thinned).
    pub fn user_event_row(&self, a: AtomicEventId, s: SampleId, kind: AtomicKind) -> &[f64] {
        self.atomics.get(a.index()).map_or(&[], |rows| {
            Self::row_slice(rows, self.row(s.index()), kind.q(), ATOMIC_Q)
        })
    }

    /// The row position of the previous kept sample before the one at row `r` in which
    /// thread `t` is present.
    pub(super) fn previous_present(&self, r: usize, t: ThreadIndex) -> Option<usize> {
        (0..r)
            .rev()
            .find(|&p| self.samples[self.kept[p] as usize].is_present(t))
    }

    /// Cumulative value of cell (slot j, quantity q) at row position p: 0 beyond the row's
    /// width.
    pub(super) fn cell(rows: &EventRows, p: usize, j: usize, q: usize, nq: usize) -> f64 {
        let Some(row) = rows.rows.get(p) else {
            return 0.0;
        };
        let w = row.len() / nq.max(1);
        if j < w { row[q * w + j] } else { 0.0 }
    }

    /// Deltas of quantity `q` at row position `r`, one per slot.
    pub(super) fn delta_row(&self, rows: &EventRows, r: usize, q: usize, nq: usize) -> Vec<f64> {
        let cur = Self::row_slice(rows, Some(r), q, nq);
        cur.iter()
            .enumerate()
            .map(|(j, &v)| {
                if v.is_nan() {
                    return v;
                }
                let t = rows.slots[j];
                let prev = self
                    .previous_present(r, t)
                    .map_or(0.0, |p| Self::cell(rows, p, j, q, nq));
                v - prev
            })
            .collect()
    }

    /// Per-interval user-event values of slot j at row position r (count, max, min, mean,
    /// sumsqr).
    pub(super) fn atomic_delta_cell(&self, rows: &EventRows, r: usize, j: usize) -> [f64; ATOMIC_Q] {
        let cur: [f64; ATOMIC_Q] = std::array::from_fn(|q| Self::cell(rows, r, j, q, ATOMIC_Q));
        if cur[0].is_nan() {
            return cur;
        }
        let t = rows.slots[j];
        let prev: [f64; ATOMIC_Q] = match self.previous_present(r, t) {
            Some(p) => std::array::from_fn(|q| Self::cell(rows, p, j, q, ATOMIC_Q)),
            None => [0.0; ATOMIC_Q],
        };
        let n = cur[0] - prev[0];
        let sum = cur[0] * cur[3] - prev[0] * prev[3];
        let mean = if n != 0.0 { sum / n } else { 0.0 };
        [n, cur[1], cur[2], mean, cur[4] - prev[4]]
    }

    /// Values of timer `e` at sample `s` for every slot thread, cumulative or delta.
    pub fn timer_values(
        &self,
        e: EventId,
        s: SampleId,
        kind: ValueKind,
        m: MetricId,
        mode: SampleMode,
    ) -> SampleValues<'_> {
        let Some(rows) = self.timers.get(e.index()) else {
            return SampleValues {
                threads: &[],
                values: Cow::Borrowed(&[]),
            };
        };
        let cum = self.timer_row(e, s, kind, m);
        let threads = &rows.slots[..cum.len()];
        let values = match (mode, self.row(s.index())) {
            (SampleMode::Delta, Some(r)) => {
                Cow::Owned(self.delta_row(rows, r, Self::timer_q_index(kind, m), self.timer_q()))
            }
            _ => Cow::Borrowed(cum),
        };
        SampleValues { threads, values }
    }

    /// Values of user event `a` at sample `s` for every slot thread, cumulative or delta.
    pub fn user_event_values(
        &self,
        a: AtomicEventId,
        s: SampleId,
        kind: AtomicKind,
        mode: SampleMode,
    ) -> SampleValues<'_> {
        let Some(rows) = self.atomics.get(a.index()) else {
            return SampleValues {
                threads: &[],
                values: Cow::Borrowed(&[]),
            };
        };
        let cum = self.user_event_row(a, s, kind);
        let threads = &rows.slots[..cum.len()];
        let values = match (mode, self.row(s.index())) {
            (SampleMode::Delta, Some(r)) => Cow::Owned(
                (0..cum.len())
                    .map(|j| self.atomic_delta_cell(rows, r, j)[kind.q()])
                    .collect(),
            ),
            _ => Cow::Borrowed(cum),
        };
        SampleValues { threads, values }
    }

    /// The value of one timer cell, if thread `t` wrote sample `s` (0 when it had not
    /// called the event yet); `None` for a thinned sample.
    pub fn timer_value(
        &self,
        e: EventId,
        t: ThreadIndex,
        s: SampleId,
        kind: ValueKind,
        m: MetricId,
        mode: SampleMode,
    ) -> Option<f64> {
        let info = self.sample(s)?;
        if !info.is_present(t) || (m.index() >= self.metrics.len() && !kind.is_metric_independent()) {
            return None;
        }
        let r = self.row(s.index())?;
        let rows = self.timers.get(e.index())?;
        let Some(&j) = rows.slot_of.get(&t.0) else {
            return Some(0.0);
        };
        let (q, nq) = (Self::timer_q_index(kind, m), self.timer_q());
        let cur = Self::cell(rows, r, j as usize, q, nq);
        Some(match mode {
            SampleMode::Cumulative => cur,
            SampleMode::Delta => {
                cur - self
                    .previous_present(r, t)
                    .map_or(0.0, |p| Self::cell(rows, p, j as usize, q, nq))
            }
        })
    }

    /// Statistics of timer `e` across threads at every kept sample
    /// ([`SampleSeries::kept_samples`]), in sequence order: the data of a min / mean / max
    /// line plot. One pass over the event's rows (plus the previous rows for deltas).
    pub fn timer_trend(
        &self,
        e: EventId,
        kind: ValueKind,
        m: MetricId,
        mode: SampleMode,
    ) -> Vec<(SampleId, AcrossThreads)> {
        self.kept_samples()
            .map(|s| {
                let v = self.timer_values(e, s, kind, m, mode);
                let calls = self.timer_row(e, s, ValueKind::Calls, m);
                (s, self.across(s, v.threads, &v.values, calls))
            })
            .collect()
    }

    /// Statistics of user event `a` across threads at every kept sample, in sequence order.
    pub fn user_event_trend(
        &self,
        a: AtomicEventId,
        kind: AtomicKind,
        mode: SampleMode,
    ) -> Vec<(SampleId, AcrossThreads)> {
        self.kept_samples()
            .map(|s| {
                let v = self.user_event_values(a, s, kind, mode);
                let counts = self.user_event_row(a, s, AtomicKind::Count);
                (s, self.across(s, v.threads, &v.values, counts))
            })
            .collect()
    }

    pub(super) fn across(
        &self,
        s: SampleId,
        threads: &[ThreadIndex],
        values: &[f64],
        has: &[f64],
    ) -> AcrossThreads {
        let present = self.sample(s).map_or(0, |i| i.present);
        let mut out = AcrossThreads {
            threads: 0,
            present,
            sum: 0.0,
            min: f64::NAN,
            min_thread: None,
            max: f64::NAN,
            max_thread: None,
            mean: f64::NAN,
            mean_all: f64::NAN,
            stddev: f64::NAN,
        };
        // Threads in id order, so that sums and ties do not depend on the order in which
        // threads first had the event (a live run and a batch load give the same numbers).
        let w = threads.len().min(values.len()).min(has.len());
        let mut order: Vec<usize> = (0..w).collect();
        order.sort_unstable_by_key(|&j| self.threads[threads[j].index()]);
        let mut n = 0u32;
        for &j in &order {
            let (t, v, h) = (threads[j], values[j], has[j]);
            if v.is_nan() || h.is_nan() || h <= 0.0 {
                continue;
            }
            n += 1;
            out.sum += v;
            if out.min_thread.is_none() || v < out.min {
                out.min = v;
                out.min_thread = Some(t);
            }
            if out.max_thread.is_none() || v > out.max {
                out.max = v;
                out.max_thread = Some(t);
            }
        }
        out.threads = n;
        if n > 0 {
            let mean = out.sum / f64::from(n);
            out.mean = mean;
            let ss: f64 = order
                .iter()
                .map(|&j| (values[j], has[j]))
                .filter(|(v, h)| !v.is_nan() && !h.is_nan() && *h > 0.0)
                .map(|(v, _)| (v - mean) * (v - mean))
                .sum();
            out.stddev = (ss / f64::from(n)).sqrt();
        }
        if present > 0 {
            out.mean_all = out.sum / f64::from(present);
        }
        out
    }
}
