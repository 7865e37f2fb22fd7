//! Threads that will never write their `final` snapshot: a rank whose snapshot file was
//! removed while the run was watched, and ranks still silent [`LiveOptions::max_wait`] after
//! the run's `final` sample went out (a rank that crashed or hangs). Both are ended, with an
//! error naming the file, so that the run finishes instead of waiting for a sample that can
//! never complete; what they wrote stays in the series, and should a late part still arrive
//! it is added to its sample (the integrator amends, [`perfscape_model::Integrated::Amended`]).
//!
//! [`LiveOptions::max_wait`]: crate::LiveOptions::max_wait

use super::{Engine, Mode};
use crate::event::LiveEvent;
use perfscape_formats::FileError;
use perfscape_model::ThreadId;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

impl Engine {
    /// The snapshot file of thread `t` (the directory when it has none).
    fn file_of(&self, t: ThreadId) -> PathBuf {
        self.snaps
            .values()
            .find(|f| f.thread == t)
            .map_or_else(|| self.dir.clone(), |f| f.path.clone())
    }

    /// Ends thread `t` (not by a `final` block) and reports why.
    fn end_without_final(&mut self, t: ThreadId, error: FileError, out: &mut Vec<LiveEvent>) {
        self.series.write().end_thread(t);
        if self.mark_ended(t, false) {
            out.push(LiveEvent::FileError(error));
            out.push(LiveEvent::ThreadEnded { thread: t });
        }
    }

    /// The snapshot file at `path` of thread `t` is gone: unless the thread already ended,
    /// it writes no more samples there and is no longer waited for.
    pub(super) fn snapshot_removed(
        &mut self,
        path: &Path,
        t: ThreadId,
        read: usize,
        out: &mut Vec<LiveEvent>,
    ) {
        if self.ended.contains_key(&t) {
            return;
        }
        let error = FileError::whole(
            path,
            format!(
                "removed while the run was watched: thread {t} writes no more samples and is no longer waited for \
                 (the {read} snapshot(s) read from it are kept; its later samples are missing)"
            ),
        );
        self.end_without_final(t, error, out);
    }

    /// Remembers when the `final` sample was announced (among the events of this round).
    pub(super) fn note_final_announced(&mut self, out: &[LiveEvent], now: Instant) {
        if self.final_announced.is_none()
            && self.mode == Some(Mode::Snapshots)
            && out
                .iter()
                .any(|e| matches!(e, LiveEvent::Sample(s) if s.name == "final"))
        {
            self.final_announced = Some(now);
        }
    }

    /// How long until threads still running are given up (see [`Engine::end_stalled`]); None
    /// when that does not apply (yet).
    pub(super) fn stall_deadline(&self, now: Instant) -> Option<Duration> {
        let (announced, wait) = (self.final_announced?, self.opts.max_wait?);
        if self.all_ended() {
            return None;
        }
        let since = announced.max(self.last_change);
        Some(wait.saturating_sub(now.saturating_duration_since(since)))
    }

    /// With [`crate::LiveOptions::max_wait`]: once the `final` sample went out, threads that
    /// have not ended after another `max_wait` without any change in the directory are ended
    /// (each reported), so that the run finishes.
    pub(super) fn end_stalled(&mut self, now: Instant, out: &mut Vec<LiveEvent>) {
        if self.stall_deadline(now) != Some(Duration::ZERO) {
            return;
        }
        let wait = self.opts.max_wait.unwrap_or_default();
        let stalled: Vec<ThreadId> = self
            .known
            .iter()
            .filter(|t| !self.ended.contains_key(t))
            .copied()
            .collect();
        for t in stalled {
            let error = FileError::whole(
                self.file_of(t),
                format!(
                    "thread {t} wrote no `final` snapshot: nothing changed for {wait:?} (--max-wait) after the \
                     run's final sample went out; it is no longer waited for and the run finishes without its \
                     last samples"
                ),
            );
            self.end_without_final(t, error, out);
        }
    }
}
