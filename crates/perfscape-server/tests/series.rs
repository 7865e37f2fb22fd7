//! Views of a run observed over time (TAU snapshots of `mpi-stencil-np8-snapshot`): the
//! sample list, the trend, the Kiviat tube, the point cloud and every view at a sample, in
//! cumulative and delta mode. The final sample equals ParaProf's per-thread values
//! (`oracle/paraprof.csv`); deltas summed over the samples give the final values; a view at
//! a sample equals the analysis of that sample's profile.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::http::StatusCode;
use perfscape_formats::{OpenOptions, Opened};
use perfscape_model::{SampleId, SampleMode, SampleSeries};
use perfscape_server::endpoints::events;
use perfscape_server::request::EventsRequest;
use perfscape_server::{AppState, StateOptions, router};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn run_dir() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p.join("tau-real/mpi-stencil-np8-snapshot")
}

fn series() -> SampleSeries {
    perfscape_formats::open(&run_dir(), &OpenOptions::default())
        .unwrap()
        .series
        .unwrap()
}

fn app(series: SampleSeries) -> axum::Router {
    let profile = series.final_profile().unwrap();
    let opened = Opened {
        profile,
        series: Some(series),
        trace: None,
        report: Default::default(),
    };
    router(AppState::new("np8-snapshot", Ok(opened), StateOptions::default()))
}

async fn get(app: &axum::Router, uri: &str) -> (StatusCode, serde_json::Value) {
    common::get_json(app, uri).await
}

/// `oracle/paraprof.csv`: (function, thread) -> (calls, inclusive, exclusive) of the final
/// state, as ParaProf shows the snapshots.
fn paraprof_final() -> HashMap<(String, String), (f64, f64, f64)> {
    let text = std::fs::read_to_string(run_dir().join("oracle/paraprof.csv")).unwrap();
    text.lines()
        .map(|l| l.split('\t').collect::<Vec<&str>>())
        .filter(|c| c.len() >= 9 && c[0] != "Node")
        .map(|c| {
            (
                (c[3].to_string(), format!("{}.{}.{}", c[0], c[1], c[2])),
                (
                    c[4].parse().unwrap(),
                    c[6].parse().unwrap(),
                    c[7].parse().unwrap(),
                ),
            )
        })
        .collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs())
}

#[tokio::test]
async fn the_sample_list_names_every_snapshot() {
    let app = app(series());
    let (s, j) = get(&app, "/api/series").await;
    assert_eq!(s, StatusCode::OK);
    let samples = j["samples"].as_array().unwrap();
    // 20 snapshots "iteration 20" .. "iteration 400" and TAU's "final" block (README).
    assert_eq!(samples.len(), 21);
    assert_eq!(samples[0]["name"], "iteration 20");
    assert_eq!(samples[19]["name"], "iteration 400");
    assert_eq!(j["threads"], 8);
    assert!(samples.iter().all(|s| s["complete"] == true && s["present"] == 8));
    let ts: Vec<f64> = samples
        .iter()
        .map(|s| s["timestamp_us"].as_f64().unwrap())
        .collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]), "timestamps ascend: {ts:?}");
    let (_, run) = get(&app, "/api/run").await;
    assert_eq!(run["samples"], 21);
    assert_eq!(run["live"], false);
}

#[tokio::test]
async fn the_final_trend_point_equals_paraprof() {
    let sr = series();
    let app = app(sr.clone());
    let oracle = paraprof_final();
    let mut checked = 0;
    for e in 0..sr.timer_count() {
        let name = sr.timer_name(perfscape_model::EventId(e as u32)).to_string();
        let (s, j) = get(&app, &format!("/api/trend?event={e}&kind=exclusive")).await;
        assert_eq!(s, StatusCode::OK, "{j}");
        let pts = j["points"].as_array().unwrap();
        assert_eq!(pts.len(), 21);
        let last = &pts[20];
        let vals: Vec<f64> = (0..8)
            .filter_map(|r| oracle.get(&(name.clone(), format!("{r}.0.0"))).map(|v| v.2))
            .collect();
        if vals.is_empty() {
            continue;
        }
        let sum: f64 = vals.iter().sum();
        let max = vals.iter().copied().fold(f64::MIN, f64::max);
        let min = vals.iter().copied().fold(f64::MAX, f64::min);
        assert_eq!(last["threads"].as_u64().unwrap() as usize, vals.len(), "{name}");
        assert!(
            close(last["sum"].as_f64().unwrap(), sum),
            "{name}: {last} vs {sum}"
        );
        assert!(close(last["max"].as_f64().unwrap(), max), "{name}");
        assert!(close(last["min"].as_f64().unwrap(), min), "{name}");
        assert!(
            close(last["mean"].as_f64().unwrap(), sum / vals.len() as f64),
            "{name}"
        );
        checked += 1;
    }
    assert!(checked >= 15, "only {checked} events compared");
}

#[tokio::test]
async fn deltas_sum_to_the_final_values_and_views_follow_the_sample() {
    let sr = series();
    let app = app(sr.clone());
    let e = sr.timer_by_name("MPI_Allreduce()").unwrap();
    let (_, cum) = get(&app, &format!("/api/trend?event={}", e.0)).await;
    let (_, delta) = get(&app, &format!("/api/trend?event={}&mode=delta", e.0)).await;
    assert_eq!(delta["mode"], "delta");
    let sum_of = |j: &serde_json::Value, i: usize| j["points"][i]["sum"].as_f64().unwrap();
    let total: f64 = (0..21).map(|i| sum_of(&delta, i)).sum();
    assert!(close(total, sum_of(&cum, 20)), "{total} vs {}", sum_of(&cum, 20));
    for i in 1..21 {
        assert!(close(sum_of(&delta, i), sum_of(&cum, i) - sum_of(&cum, i - 1)));
    }
    // The ranked view at sample 7, delta mode: the event's total is the trend's sum there.
    let (s, ev) = get(&app, "/api/events?sample=7&mode=delta&callpaths=true").await;
    assert_eq!(s, StatusCode::OK, "{ev}");
    let row = ev["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == e.0)
        .unwrap();
    assert!(close(row["stats"]["total"].as_f64().unwrap(), sum_of(&delta, 7)));
    // ... and equals the analysis of that sample's profile.
    let p = sr.profile_at(SampleId(7), SampleMode::Delta).unwrap();
    let cache = common::cache();
    let direct = events::get(
        common::view(&p, &cache),
        &EventsRequest {
            callpaths: Some(true),
            ..Default::default()
        },
    )
    .unwrap();
    let direct = serde_json::to_value(&*direct).unwrap();
    // serde_json's default float parsing is not round-trip exact: compare within 1e-9.
    let (a, b) = (direct["rows"].as_array().unwrap(), ev["rows"].as_array().unwrap());
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_eq!(
            x["id"], y["id"],
            "the view at a sample is the analysis of the sample's profile"
        );
        for k in ["total", "min", "max", "mean", "stddev"] {
            assert!(close(
                x["stats"][k].as_f64().unwrap(),
                y["stats"][k].as_f64().unwrap()
            ));
        }
    }
    // Heat map and event detail at a sample answer too.
    let (s, m) = get(&app, "/api/matrix?sample=3").await;
    assert_eq!(s, StatusCode::OK, "{m}");
    let (s, d) = get(&app, &format!("/api/event/{}?sample=0", e.0)).await;
    assert_eq!(s, StatusCode::OK);
    assert!(close(d["stats"]["total"].as_f64().unwrap(), sum_of(&cum, 0)));
}

#[tokio::test]
async fn kiviat_values_scale_back_to_the_series() {
    let sr = series();
    let app = app(sr.clone());
    let (s, k) = get(&app, "/api/kiviat?mode=delta").await;
    assert_eq!(s, StatusCode::OK, "{k}");
    let events: Vec<String> = k["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap().to_string())
        .collect();
    assert_eq!(events.len(), 6);
    assert!(events.iter().all(|e| !e.contains("=>")));
    let scale: Vec<f64> = k["scale"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let samples = k["samples"].as_array().unwrap();
    assert_eq!(samples.len(), 21);
    let threads = k["threads"].as_array().unwrap();
    assert!((2..=8).contains(&threads.len()));
    let mut reached_one = vec![false; events.len()];
    for t in threads {
        let tid = sr
            .thread_index(t["thread"].as_str().unwrap().parse().unwrap())
            .unwrap();
        for (si, row) in t["values"].as_array().unwrap().iter().enumerate() {
            for (k, v) in row.as_array().unwrap().iter().enumerate() {
                let v = v.as_f64().unwrap();
                assert!((-1.0..=1.0).contains(&v));
                reached_one[k] |= (v - 1.0).abs() < 1e-12;
                let e = sr.timer_by_name(&events[k]).unwrap();
                let want = sr
                    .timer_value(
                        e,
                        tid,
                        SampleId(si as u32),
                        perfscape_model::ValueKind::Exclusive,
                        perfscape_model::MetricId(0),
                        SampleMode::Delta,
                    )
                    .unwrap();
                assert!(close(v * scale[k], want) || (want == 0.0 && v == 0.0));
            }
        }
    }
    assert!(reached_one.iter().all(|&r| r), "each axis reaches its scale");
    // Chosen threads and events.
    let (s, k) = get(&app, "/api/kiviat?events=0,1,2&threads_list=3.0.0,5.0.0").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(k["threads"][1]["thread"], "5.0.0");
    assert_eq!(k["events"].as_array().unwrap().len(), 3);
    // The selected thread joins the default tubes.
    let (_, k) = get(&app, "/api/kiviat?thread=2.0.0").await;
    let tubes: Vec<&str> = k["threads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["thread"].as_str().unwrap())
        .collect();
    assert!(tubes.contains(&"2.0.0"), "{tubes:?}");
    assert_eq!(
        get(&app, "/api/kiviat?threads_list=99.0.0").await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(get(&app, "/api/kiviat?events=a").await.0, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_point_cloud_places_every_thread() {
    let sr = series();
    let app = app(sr.clone());
    let p = sr.final_profile().unwrap();
    let ids: Vec<u32> = ["MPI_Allreduce()", "MPI_Waitall()", "MPI_Init()"]
        .iter()
        .map(|n| p.event_by_name(n).unwrap().0)
        .collect();
    let (s, c) = get(
        &app,
        &format!("/api/pointcloud?events={},{},{}", ids[0], ids[1], ids[2]),
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{c}");
    assert_eq!(c["total_threads"], 8);
    assert_eq!(c["axes"][3], "x + y + z");
    let oracle = paraprof_final();
    for (i, t) in c["threads"].as_array().unwrap().iter().enumerate() {
        let t = t.as_str().unwrap();
        let pt = &c["points"][i];
        for (k, n) in ["MPI_Allreduce()", "MPI_Waitall()", "MPI_Init()"]
            .iter()
            .enumerate()
        {
            let want = oracle[&(n.to_string(), t.to_string())].2;
            assert!(close(pt[k].as_f64().unwrap(), want), "{t} {n}");
        }
    }
    // Thinned: every other thread.
    let (_, c) = get(&app, "/api/pointcloud?points_max=4").await;
    assert_eq!(c["points"].as_array().unwrap().len(), 4);
    assert_eq!(c["threads"][0], "0.0.0");
    assert_eq!(c["threads"][3], "7.0.0");
    assert_eq!(
        get(&app, "/api/pointcloud?events=0,1").await.0,
        StatusCode::BAD_REQUEST
    );
    // At a sample, in delta mode.
    let (s, c) = get(
        &app,
        &format!(
            "/api/pointcloud?sample=5&mode=delta&events={},{},{}",
            ids[0], ids[1], ids[2]
        ),
    )
    .await;
    assert_eq!(s, StatusCode::OK);
    let e = perfscape_model::EventId(ids[0]);
    let v = sr.timer_values(
        e,
        SampleId(5),
        perfscape_model::ValueKind::Exclusive,
        perfscape_model::MetricId(0),
        SampleMode::Delta,
    );
    let by_thread: HashMap<String, f64> = v
        .threads
        .iter()
        .zip(v.values.iter())
        .map(|(t, x)| (sr.threads()[t.index()].to_string(), *x))
        .collect();
    for (i, t) in c["threads"].as_array().unwrap().iter().enumerate() {
        assert!(close(
            c["points"][i][0].as_f64().unwrap(),
            by_thread[t.as_str().unwrap()]
        ));
    }
}

#[tokio::test]
async fn bad_samples_and_modes_are_refused() {
    let app = app(series());
    assert_eq!(get(&app, "/api/events?sample=21").await.0, StatusCode::NOT_FOUND);
    let (s, j) = get(&app, "/api/matrix?mode=sideways").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(j["error"].as_str().unwrap().contains("cumulative or delta"));
    assert_eq!(get(&app, "/api/trend").await.0, StatusCode::BAD_REQUEST);
    assert_eq!(get(&app, "/api/trend?event=9999").await.0, StatusCode::NOT_FOUND);
    // Without a series: sample views are refused with a reason, the rest answers.
    let plain = router(common::example_state(StateOptions::default()));
    let (s, j) = get(&plain, "/api/events?sample=0").await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(j["error"].as_str().unwrap().contains("no samples"));
    let (_, j) = get(&plain, "/api/series").await;
    assert_eq!(j["samples"].as_array().unwrap().len(), 0);
    assert_eq!(get(&plain, "/api/pointcloud").await.0, StatusCode::OK);
}
