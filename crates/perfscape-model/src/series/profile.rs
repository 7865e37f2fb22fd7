//! A [`SampleSeries`] seen as [`Profile`]s: one sample (cumulative or delta), or the final
//! state, so every analysis of a profile works on samples.

use super::{ATOMIC_Q, SampleId, SampleMode, SampleSeries};
use crate::builder::ProfileBuilder;
use crate::ids::{ThreadId, ThreadIndex};
use crate::profile::Profile;
use crate::thread_data::BuildError;
use crate::thread_data::ThreadData;

impl SampleSeries {
    /// A [`Profile`] of sample `s`: the threads present in it, their cumulative values or
    /// their deltas, so every analysis of a profile works on one sample. Every timer of the
    /// series is declared, so the profile's [`crate::EventId`]s equal the series'. A thread has a
    /// timer (user event) when its cumulative calls (count) at `s` are non-zero, in both
    /// modes; in delta mode its values may be 0 for the interval (since the thread's previous
    /// kept sample). A thinned or unknown sample gives a profile without threads. Errors only
    /// if the series is inconsistent (a bug), never for data.
    pub fn profile_at(&self, s: SampleId, mode: SampleMode) -> Result<Profile, BuildError> {
        let (Some(info), Some(r)) = (self.sample(s), self.row(s.index())) else {
            return self.build_profile(|_| None, mode);
        };
        self.build_profile(|t| info.is_present(t).then_some(r), mode)
    }

    /// The final state of the run: every thread's last sample (cumulative), as ParaProf shows
    /// a snapshot profile. Threads that wrote no sample are left out.
    pub fn final_profile(&self) -> Result<Profile, BuildError> {
        let mut last = vec![None; self.threads.len()];
        for (r, &s) in self.kept.iter().enumerate() {
            for t in self.samples[s as usize].present_threads() {
                if let Some(slot) = last.get_mut(t.index()) {
                    *slot = Some(r);
                }
            }
        }
        self.build_profile(|t| last.get(t.index()).copied().flatten(), SampleMode::Cumulative)
    }

    /// The sample each thread's final state comes from (its last present sample).
    pub fn last_sample_of(&self, t: ThreadIndex) -> Option<SampleId> {
        self.samples
            .iter()
            .rposition(|i| i.is_present(t))
            .map(SampleId::from)
    }

    /// A profile of the threads `pick` gives a row position (see [`SampleSeries::row`]) for,
    /// each with its values at that row.
    fn build_profile(
        &self,
        pick: impl Fn(ThreadIndex) -> Option<usize>,
        mode: SampleMode,
    ) -> Result<Profile, BuildError> {
        let mut order: Vec<(ThreadId, ThreadIndex, usize)> = (0..self.threads.len())
            .map(ThreadIndex::from)
            .filter_map(|t| pick(t).map(|s| (self.threads[t.index()], t, s)))
            .collect();
        order.sort_unstable_by_key(|(id, _, _)| *id);
        let mut b = ProfileBuilder::new(self.metrics.clone());
        for (name, groups) in self.timer_names.iter().zip(&self.timer_groups) {
            b.declare_event(name, groups);
        }
        let nq = self.timer_q();
        let n_metrics = self.metrics.len();
        let mut excl = vec![0.0; n_metrics];
        let mut incl = vec![0.0; n_metrics];
        for (id, t, s) in order {
            let mut data = ThreadData::new(n_metrics);
            for (k, v) in self.thread_metadata(t) {
                data.push_metadata(k, v);
            }
            for (e, rows) in self.timers.iter().enumerate() {
                let Some(&j) = rows.slot_of.get(&t.0) else {
                    continue;
                };
                let j = j as usize;
                let calls = Self::cell(rows, s, j, 0, nq);
                if calls.is_nan() || calls == 0.0 {
                    continue;
                }
                let prev = match mode {
                    SampleMode::Cumulative => None,
                    SampleMode::Delta => self.previous_present(s, t),
                };
                let value = |q: usize| {
                    Self::cell(rows, s, j, q, nq) - prev.map_or(0.0, |p| Self::cell(rows, p, j, q, nq))
                };
                let value = |q: usize| match mode {
                    SampleMode::Cumulative => Self::cell(rows, s, j, q, nq),
                    SampleMode::Delta => value(q),
                };
                for m in 0..n_metrics {
                    excl[m] = value(2 + 2 * m);
                    incl[m] = value(3 + 2 * m);
                }
                data.push_timer(
                    &self.timer_names[e],
                    &self.timer_groups[e],
                    value(0),
                    value(1),
                    &excl,
                    &incl,
                )?;
            }
            for (a, rows) in self.atomics.iter().enumerate() {
                let Some(&j) = rows.slot_of.get(&t.0) else {
                    continue;
                };
                let j = j as usize;
                let count = Self::cell(rows, s, j, 0, ATOMIC_Q);
                if count.is_nan() || count == 0.0 {
                    continue;
                }
                let v = match mode {
                    SampleMode::Cumulative => std::array::from_fn(|q| Self::cell(rows, s, j, q, ATOMIC_Q)),
                    SampleMode::Delta => self.atomic_delta_cell(rows, s, j),
                };
                data.push_atomic(&self.atomic_names[a], v[0], v[1], v[2], v[3], v[4]);
            }
            b.add_thread(id, data)?;
        }
        Ok(b.finish().0)
    }
}
