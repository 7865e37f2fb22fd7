//! `GET /api/run`: what was loaded, or why not.

use crate::api::{MetadataItem, MetricInfo, RunInfo, VaryingMetadata};
use perfscape_formats::LoadReport;
use perfscape_model::{EventKind, Profile};

/// Thread addresses listed in [`RunInfo::thread_ids`].
const THREAD_IDS_LISTED: usize = 10_000;

/// The answer for a run that did not load (`status` `error`, `error` saying why).
pub fn failed(path: &str, error: &str) -> RunInfo {
    RunInfo {
        status: "error".into(),
        error: Some(error.to_string()),
        path: path.to_string(),
        format: String::new(),
        files_read: 0,
        bytes_read: 0.0,
        threads: 0,
        nodes: 0,
        metrics: vec![],
        flat_events: 0,
        callpath_events: 0,
        sample_events: 0,
        source_files: 0,
        user_events: 0,
        has_callpaths: false,
        metadata: vec![],
        varying_metadata: vec![],
        bad_files: vec![],
        warnings: vec![],
        notes: vec![],
        thread_ids: vec![],
        shared: false,
        samples: 0,
        live: false,
        replay: false,
        timeline: false,
        comm: false,
        compared: Vec::new(),
        scaling: false,
        store: None,
        dashboards: Vec::new(),
        layout: None,
        filter: None,
    }
}

/// The answer for profile `p` loaded from `path` with `report`.
pub fn loaded(path: &str, p: &Profile, r: &LoadReport) -> RunInfo {
    let with_data = |f: &dyn Fn(&perfscape_model::Event) -> bool| {
        p.event_ids()
            .filter(|&e| f(p.event(e)) && !p.interval(e).is_empty())
            .count() as u32
    };
    let mut nodes: Vec<u32> = p.threads().iter().map(|t| t.node).collect();
    nodes.dedup();
    RunInfo {
        status: "ok".into(),
        error: None,
        format: r.format.to_string(),
        files_read: r.files_read as u32,
        bytes_read: r.bytes_read as f64,
        threads: p.threads().len() as u32,
        nodes: nodes.len() as u32,
        metrics: p
            .metrics()
            .iter()
            .map(|m| MetricInfo {
                name: m.name.clone(),
                unit: m.unit.symbol().to_string(),
                is_time: m.unit.is_time(),
                combine: m.combine,
            })
            .collect(),
        flat_events: with_data(&|e| !e.is_callpath()),
        callpath_events: with_data(&|e| e.is_callpath()),
        sample_events: with_data(&|e| !e.is_callpath() && e.kind == EventKind::Sample),
        source_files: perfscape_analysis::lines::LineTable::new(p).files.len() as u32,
        user_events: p.atomic_events().len() as u32,
        has_callpaths: !p.call_tree().is_empty(),
        comm: perfscape_analysis::comm::has_comm_events(p),
        metadata: p
            .metadata()
            .common()
            .iter()
            .map(|(k, v)| MetadataItem {
                name: k.clone(),
                value: v.clone(),
            })
            .collect(),
        varying_metadata: p
            .metadata()
            .varying()
            .iter()
            .filter_map(|(k, vals)| {
                vals.first().map(|(t, v)| VaryingMetadata {
                    name: k.clone(),
                    first_value: v.clone(),
                    first_thread: p.thread(*t).to_string(),
                    threads: vals.len() as u32,
                })
            })
            .collect(),
        bad_files: r.bad_files.iter().map(ToString::to_string).collect(),
        warnings: r.warnings.iter().map(ToString::to_string).collect(),
        notes: r.notes.clone(),
        thread_ids: p
            .threads()
            .iter()
            .take(THREAD_IDS_LISTED)
            .map(ToString::to_string)
            .collect(),
        ..failed(path, "")
    }
}
