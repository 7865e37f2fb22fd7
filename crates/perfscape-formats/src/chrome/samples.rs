//! The `samples` and `stackFrames` of a trace's object form (Linux perf samples in catapult
//! traces, Hermes): each sample's stack resolved through its frame's parents.

use super::json::{Key, Tally, text_of};
use crate::problem::Problem;
use rustc_hash::FxHashMap as HashMap;
use serde_json::value::RawValue;

/// One sample of the object form's `samples` array, with its stack resolved (leaf first).
pub(super) struct Sample {
    /// Process, when the sample names one.
    pub(super) pid: Option<Key>,
    /// Thread.
    pub(super) tid: Key,
    /// `weight`, when given.
    pub(super) weight: Option<f64>,
    /// Frames (name, category), leaf first.
    pub(super) frames: Vec<(String, String)>,
}

#[derive(serde::Deserialize)]
struct RawSample<'a> {
    #[serde(borrow, default)]
    pid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tid: Option<&'a RawValue>,
    #[serde(borrow, default)]
    sf: Option<&'a RawValue>,
    #[serde(borrow, default)]
    weight: Option<&'a RawValue>,
}

#[derive(serde::Deserialize)]
struct RawFrame<'a> {
    #[serde(borrow, default)]
    name: Option<&'a RawValue>,
    #[serde(borrow, default)]
    category: Option<&'a RawValue>,
    #[serde(borrow, default)]
    parent: Option<&'a RawValue>,
}

/// Reads the samples and resolves their stacks; problems go to `warnings`.
pub(super) fn read_samples(
    samples: &RawValue,
    stack_frames: Option<&RawValue>,
    warnings: &mut Vec<Problem>,
) -> Vec<Sample> {
    let list: Vec<RawSample<'_>> = match serde_json::from_str(samples.get()) {
        Ok(l) => l,
        Err(e) => {
            warnings.push(Problem::whole(format!(
                "`samples` is not an array of sample objects ({e}); samples were not read"
            )));
            return Vec::new();
        }
    };
    let frames: HashMap<String, RawFrame<'_>> = match stack_frames.map(|s| serde_json::from_str(s.get())) {
        Some(Ok(f)) => f,
        Some(Err(e)) => {
            warnings.push(Problem::whole(format!(
                "`stackFrames` is not an object of frames ({e}); samples have no stacks"
            )));
            HashMap::default()
        }
        None => HashMap::default(),
    };
    let mut missing = Tally::default();
    let mut out = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let mut stack = Vec::new();
        let mut next = s.sf.map(|v| text_of(v).into_owned());
        let mut guard = 0;
        while let Some(id) = next.take() {
            if id.is_empty() {
                break;
            }
            guard += 1;
            if guard > 100_000 {
                missing.add(0, || {
                    format!("sample {i}: the stack frames form a cycle; the stack was cut")
                });
                break;
            }
            match frames.get(&id) {
                Some(f) => {
                    stack.push((
                        f.name.map(text_of).unwrap_or_default().into_owned(),
                        f.category.map(text_of).unwrap_or_default().into_owned(),
                    ));
                    next = f.parent.map(|p| text_of(p).into_owned());
                }
                None => {
                    missing.add(0, || format!("sample {i} refers to stack frame `{id}`, which `stackFrames` does not define; its stack is cut there"));
                    break;
                }
            }
        }
        out.push(Sample {
            pid: s.pid.map(|p| Key::of(Some(p))),
            tid: Key::of(s.tid),
            weight: s.weight.and_then(|w| text_of(w).trim().parse::<f64>().ok()),
            frames: stack,
        });
    }
    if let Some((_, msg)) = &missing.first {
        warnings.push(Problem::whole(if missing.count > 1 {
            format!("{msg} ({} samples with broken stacks in all)", missing.count)
        } else {
            msg.clone()
        }));
    }
    out
}
