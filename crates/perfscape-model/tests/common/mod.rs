//! A generator of synthetic thread samples shared by the integrator tests.

use perfscape_model::{Metric, ThreadId, ThreadSample, TimerDef, TimerSample, UserEventDef, UserEventSample};
use std::sync::Arc;

/// Three timers, two metrics, one user event; values grow with the step and the thread.
pub struct Gen {
    pub metrics: Arc<Vec<Metric>>,
    pub defs: Vec<Arc<TimerDef>>,
    pub user: Arc<UserEventDef>,
}

impl Gen {
    pub fn new() -> Self {
        let defs = ["main", "main => work", "work", "late"]
            .iter()
            .enumerate()
            .map(|(i, n)| {
                Arc::new(TimerDef {
                    id: i as u32,
                    name: format!("{n} "),
                    groups: "TAU_USER".into(),
                })
            })
            .collect();
        Self {
            metrics: Arc::new(vec![Metric::tau("TIME"), Metric::tau("CPU_TIME")]),
            defs,
            user: Arc::new(UserEventDef {
                id: 0,
                name: "bytes".into(),
            }),
        }
    }

    /// A sample where every value grows with `step` and depends on the thread.
    pub fn sample(&self, thread: u32, name: &str, step: u32, ts: i64) -> ThreadSample {
        let k = f64::from(step);
        let r = f64::from(thread + 1);
        let mut timers = Vec::new();
        let mut values = Vec::new();
        for (i, d) in self.defs.iter().enumerate().take(3) {
            timers.push(TimerSample {
                def: d.clone(),
                calls: k * (i as f64 + 1.0),
                subcalls: k,
            });
            values.extend([10.0 * k * r, 20.0 * k * r, 1.0 * k, 2.0 * k]);
        }
        ThreadSample {
            thread: ThreadId::new(thread, 0, 0),
            name: name.into(),
            timestamp_us: ts,
            metrics: self.metrics.clone(),
            metadata: Some(Arc::new(vec![("rank".into(), thread.to_string())])),
            timers,
            timer_values: values,
            user_events: vec![UserEventSample {
                def: self.user.clone(),
                count: k,
                max: 8.0 * r,
                min: 1.0,
                mean: 4.0,
                sum_squares: 20.0 * k,
            }],
        }
    }
}
