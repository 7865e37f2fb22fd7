//! The API's numbers equal the analysis crate's (and brute force over the raw cells), and the
//! HTTP layer behaves: assets only, 404s, token rules, a failed load explained.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use perfscape_analysis::{TopOptions, event_stats, run_total, thread_values_sorted, top_events};
use perfscape_formats::{OpenOptions, Opened, open};
use perfscape_model::{EventId, MetricId, Profile, ThreadIndex, ValueKind};
use perfscape_server::query::{self, ViewParams};
use perfscape_server::{AppState, ServerConfig, bind, router};
use std::path::{Path, PathBuf};
use tower::ServiceExt;

fn corpus() -> PathBuf {
    let p = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    assert!(p.is_dir(), "the shared corpus is expected at {}", p.display());
    p
}

fn example() -> Opened {
    open(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../examples/tau/mpi-stencil-np64-callpath-commmatrix"),
        &OpenOptions::default(),
    )
    .unwrap()
}

fn q() -> ViewParams {
    ViewParams::default()
}

/// All (row event, thread position) cells of flat events, as a dense matrix in the API's row
/// order (NaN = thread lacks the event).
fn dense(p: &Profile, rows: &[u32], kind: ValueKind) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|&e| {
            let mut v = vec![f64::NAN; p.threads().len()];
            let col = p.interval(EventId(e));
            for (t, x) in col.threads().iter().zip(col.values(kind, MetricId(0))) {
                v[t.index()] = *x;
            }
            v
        })
        .collect()
}

#[test]
fn events_equal_the_analysis() {
    let l = example();
    let p = &l.profile;
    let r = query::events(p, &q()).unwrap();
    let top = top_events(
        p,
        MetricId(0),
        TopOptions {
            n: 0,
            ..TopOptions::default()
        },
    );
    assert_eq!(r.rows.len(), top.len());
    assert_eq!(r.run_total, run_total(p, MetricId(0)));
    for (row, t) in r.rows.iter().zip(&top) {
        assert_eq!(row.id, t.event.0);
        let s = event_stats(p, t.event, MetricId(0)).exclusive;
        assert_eq!(
            (row.stats.total, row.stats.mean, row.stats.max, row.stats.stddev),
            (s.total, s.mean, s.max, s.stddev)
        );
        assert_eq!(
            row.stats.max_thread.as_deref(),
            s.max_thread.map(|t| p.thread(t).to_string()).as_deref()
        );
        assert!((row.percent - t.percent).abs() < 1e-12);
    }
    // Inclusive ranking puts the root first at 100%.
    let inc = query::events(
        p,
        &ViewParams {
            kind: Some("inclusive".into()),
            ..q()
        },
    )
    .unwrap();
    assert_eq!(inc.rows[0].name, ".TAU application");
    assert_eq!(inc.rows[0].percent, 100.0);
    // Bad parameters are 400s with a reason.
    let e = query::events(
        p,
        &ViewParams {
            kind: Some("bogus".into()),
            ..q()
        },
    )
    .unwrap_err();
    assert_eq!(e.status, 400);
    assert!(e.message.contains("bogus"));
    assert_eq!(
        query::events(
            p,
            &ViewParams {
                metric: Some(7),
                ..q()
            }
        )
        .unwrap_err()
        .status,
        400
    );
}

#[test]
fn matrix_at_full_and_reduced_resolution_equals_brute_force() {
    let l = example();
    let p = &l.profile;
    let rows = query::rows(p, &query::ViewCache::default(), &q()).unwrap();
    let ids: Vec<u32> = rows.rows.iter().map(|r| r.events[0]).collect();
    let m = dense(p, &ids, ValueKind::Exclusive);
    let n_threads = p.threads().len();
    // Full resolution: every cell as stored.
    let full = query::matrix(
        p,
        &query::ViewCache::default(),
        &ViewParams {
            h: Some(4096),
            w: Some(4096),
            ..q()
        },
    )
    .unwrap();
    assert_eq!((full.rows.len(), full.cols.len()), (ids.len(), n_threads));
    for (r, row) in m.iter().enumerate() {
        for (c, &v) in row.iter().enumerate() {
            let got = full.values[r * n_threads + c];
            if v.is_nan() {
                assert_eq!(got, None)
            } else {
                assert_eq!(got, Some(v))
            }
        }
    }
    // Reduced: 5 x 7 bins over a sub-region, MAX and SUM.
    for reduce in ["max", "sum"] {
        let g = query::matrix(
            p,
            &query::ViewCache::default(),
            &ViewParams {
                h: Some(5),
                w: Some(7),
                r0: Some(2),
                r1: Some(17),
                t0: Some(3),
                t1: Some(60),
                reduce: Some(reduce.into()),
                ..q()
            },
        )
        .unwrap();
        for (ri, rb) in g.rows.iter().enumerate() {
            for (ci, cb) in g.cols.iter().enumerate() {
                let mut acc: Option<f64> = None;
                for row in &m[rb.first as usize..=rb.last as usize] {
                    for &v in &row[cb.first as usize..=cb.last as usize] {
                        if !v.is_nan() {
                            acc = Some(match (reduce, acc) {
                                (_, None) => v,
                                ("max", Some(a)) => a.max(v),
                                (_, Some(a)) => a + v,
                            });
                        }
                    }
                }
                let got = g.values[ri * g.cols.len() + ci];
                match (acc, got) {
                    (None, None) => {}
                    (Some(a), Some(b)) => {
                        assert!((a - b).abs() <= 1e-9 * a.abs(), "{reduce} {ri},{ci}: {a} vs {b}")
                    }
                    other => panic!("{reduce} {ri},{ci}: {other:?}"),
                }
            }
        }
        assert_eq!(g.rows.first().unwrap().first, 2);
        assert_eq!(g.rows.last().unwrap().last, 16);
        assert_eq!(g.cols.first().unwrap().first, 3);
        assert_eq!(g.cols.last().unwrap().last, 59);
    }
}

#[test]
fn event_detail_matches_sorted_values_and_downsamples_by_max() {
    let l = example();
    let p = &l.profile;
    let e = p.event_by_name("MPI_Allreduce()").unwrap();
    let d = query::event(p, e.0, &q()).unwrap();
    let sorted = thread_values_sorted(p, e, ValueKind::Exclusive, MetricId(0));
    assert!(!d.downsampled);
    assert_eq!(d.values.len(), 64);
    for (v, (t, x)) in d.values.iter().zip(&sorted) {
        assert_eq!(
            (v.thread.as_str(), v.value),
            (p.thread(*t).to_string().as_str(), *x)
        );
    }
    assert_eq!(d.histogram.counts.iter().sum::<u32>(), 64);
    let s = event_stats(p, e, MetricId(0)).exclusive;
    assert_eq!((d.stats.min, d.stats.max, d.stats.mean), (s.min, s.max, s.mean));
    // With fewer points than threads each point is its rank bucket's maximum.
    let small = query::event(
        p,
        e.0,
        &ViewParams {
            points: Some(16),
            ..q()
        },
    )
    .unwrap();
    assert!(small.downsampled);
    assert_eq!(small.values.len(), 16);
    for (i, v) in small.values.iter().enumerate() {
        let bucket = &sorted[i * 4..(i + 1) * 4];
        assert_eq!(v.value, bucket.iter().map(|x| x.1).fold(f64::MIN, f64::max));
    }
    assert_eq!(query::event(p, 9999, &q()).unwrap_err().status, 404);
}

#[test]
fn call_tree_scopes() {
    let l = example();
    let p = &l.profile;
    let total = query::calltree(p, &q()).unwrap();
    assert!(total.has_callpaths);
    let root = &total.nodes[0];
    assert_eq!(root.name, ".TAU application");
    let root_id = p.event_by_name(".TAU application").unwrap();
    let s = event_stats(p, root_id, MetricId(0));
    assert_eq!(root.inclusive, s.inclusive.total);
    // Children of a node follow it, largest inclusive first.
    let kids: Vec<&perfscape_server::api::TreeNodeJson> =
        total.nodes.iter().filter(|n| n.parent == Some(root.id)).collect();
    assert!(kids.windows(2).all(|w| w[0].inclusive >= w[1].inclusive));
    let mean = query::calltree(
        p,
        &ViewParams {
            scope: Some("mean".into()),
            ..q()
        },
    )
    .unwrap();
    assert_eq!(mean.nodes[0].inclusive, s.inclusive.mean);
    let t = query::calltree(
        p,
        &ViewParams {
            scope: Some("5.0.0".into()),
            ..q()
        },
    )
    .unwrap();
    let t5 = p.thread_index("5.0.0".parse().unwrap()).unwrap();
    assert_eq!(
        t.nodes[0].inclusive,
        p.value(root_id, t5, ValueKind::Inclusive, MetricId(0)).unwrap()
    );
    assert_eq!(
        query::calltree(
            p,
            &ViewParams {
                scope: Some("99.0.0".into()),
                ..q()
            }
        )
        .unwrap_err()
        .status,
        404
    );
}

#[test]
fn terrain_peaks_are_the_largest_cells_of_distinct_events() {
    let l = example();
    let p = &l.profile;
    let t = query::terrain(
        p,
        &query::ViewCache::default(),
        &ViewParams {
            peaks: Some(3),
            ..q()
        },
    )
    .unwrap();
    assert_eq!(t.peaks.len(), 3);
    let mut best: Vec<(f64, u32)> = p
        .event_ids()
        .filter(|&e| !p.event(e).is_callpath() && !p.interval(e).is_empty())
        .map(|e| {
            (
                p.interval(e)
                    .exclusive(MetricId(0))
                    .iter()
                    .copied()
                    .fold(f64::MIN, f64::max),
                e.0,
            )
        })
        .collect();
    best.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (pk, (v, e)) in t.peaks.iter().zip(&best) {
        assert_eq!((pk.value, pk.event), (*v, *e));
    }
    assert_eq!(t.grid.reduce, "max");
}

#[test]
fn overview_of_source_lines_skips_unsampled_runs() {
    let run = corpus().join("tau/taucmdr-mm-ebs-sampling");
    let l = open(&run, &OpenOptions::default()).unwrap();
    let p = &l.profile;
    let rows = query::rows(
        p,
        &query::ViewCache::default(),
        &ViewParams {
            rows: Some("lines".into()),
            ..q()
        },
    )
    .unwrap();
    // matmult.c sampled at lines 59..=122: 64 rows, 7 of them sampled.
    assert_eq!(rows.rows.len(), 122 - 59 + 1);
    assert_eq!(rows.rows.iter().filter(|r| !r.events.is_empty()).count(), 7);
    let ov = query::overview(
        p,
        &query::ViewCache::default(),
        &ViewParams {
            rows: Some("lines".into()),
            skip: Some(5),
            ..q()
        },
    )
    .unwrap();
    let kept: Vec<u32> = ov.strips.iter().flatten().map(|r| r.first).collect();
    // Sampled lines 59 60 61 | 99 101 | 120 122: gaps of 37, 18 are skipped; 1-line gaps kept.
    assert_eq!(ov.skipped_rows, 37 + 18);
    assert!(kept.contains(&0) && kept.contains(&(99 - 59)) && kept.contains(&(122 - 59)));
    let sampled_max = p
        .event_ids()
        .filter(|&e| p.event(e).kind == perfscape_model::EventKind::Sample && !p.event(e).is_callpath())
        .map(|e| p.interval(e).exclusive(MetricId(0))[0])
        .fold(f64::MIN, f64::max);
    assert_eq!(ov.max, Some(sampled_max));
}

async fn get(
    app: axum::Router,
    uri: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, axum::http::HeaderMap, String) {
    let mut req = Request::builder().uri(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = app.oneshot(req.body(Body::empty()).unwrap()).await.unwrap();
    let status = resp.status();
    let h = resp.headers().clone();
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    (status, h, String::from_utf8_lossy(&body).to_string())
}

#[tokio::test]
async fn serves_the_page_and_only_embedded_assets() {
    let app = router(AppState::new("example", Ok(example()), None));
    let (s, h, body) = get(app.clone(), "/", &[]).await;
    assert_eq!(s, StatusCode::OK);
    assert!(h[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
    let asset = body
        .split("src=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .to_string();
    let (s, h, _) = get(app.clone(), &asset, &[]).await;
    assert_eq!(s, StatusCode::OK, "{asset}");
    assert!(h[header::CONTENT_TYPE].to_str().unwrap().contains("javascript"));
    for bad in [
        "/nope",
        "/assets/nope.js",
        "/assets/../../Cargo.toml",
        "/..%2F..%2FCargo.toml",
        "/api/nope",
        "/etc/passwd",
    ] {
        let (s, _, _) = get(app.clone(), bad, &[]).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{bad}");
    }
    let (s, _, body) = get(app.clone(), "/api/events?kind=inclusive", &[]).await;
    assert_eq!(s, StatusCode::OK);
    let j: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(j["rows"][0]["name"], ".TAU application");
    let (s, _, body) = get(app, "/api/matrix?reduce=avg", &[]).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(body.contains("reduce `avg`"));
}

#[tokio::test]
async fn a_token_guards_every_request() {
    let app = router(AppState::new("example", Ok(example()), Some("s3cret".into())));
    for uri in ["/", "/api/run", "/nope"] {
        let (s, _, _) = get(app.clone(), uri, &[]).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{uri}");
    }
    let (s, _, _) = get(app.clone(), "/api/run?token=wrong", &[]).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, h, _) = get(app.clone(), "/?token=s3cret", &[]).await;
    assert_eq!(s, StatusCode::OK);
    let cookie = h[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let (s, _, _) = get(app.clone(), "/api/run", &[("cookie", &cookie)]).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _, _) = get(app.clone(), "/api/run", &[("authorization", "Bearer s3cret")]).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _, _) = get(app, "/api/run", &[("authorization", "Bearer s3cre")]).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn non_loopback_needs_a_token_and_loopback_is_the_default() {
    let cfg = ServerConfig {
        bind: "0.0.0.0".parse().unwrap(),
        port: 0,
        token: None,
    };
    let err = bind(&cfg).await.unwrap_err().to_string();
    assert!(err.contains("without an access token"), "{err}");
    let l = bind(&ServerConfig::default()).await.unwrap();
    assert!(l.local_addr().unwrap().ip().is_loopback());
    let l = bind(&ServerConfig {
        token: Some("t".into()),
        ..cfg
    })
    .await
    .unwrap();
    assert!(l.local_addr().unwrap().ip().is_unspecified());
}

#[tokio::test]
async fn a_run_that_failed_to_load_is_explained_not_blank() {
    let app = router(AppState::new(
        "/no/run",
        Err("cannot load /no/run: No such file or directory".into()),
        None,
    ));
    let (s, _, body) = get(app.clone(), "/api/run", &[]).await;
    assert_eq!(s, StatusCode::OK);
    let j: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(j["status"], "error");
    assert!(j["error"].as_str().unwrap().contains("No such file"));
    let (s, _, body) = get(app, "/api/events", &[]).await;
    assert_eq!(s, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body.contains("did not load"));
}

#[test]
fn thread_positions_follow_id_order() {
    let l = example();
    let p = &l.profile;
    let full = query::matrix(
        p,
        &query::ViewCache::default(),
        &ViewParams {
            h: Some(1),
            w: Some(4096),
            ..q()
        },
    )
    .unwrap();
    let labels: Vec<&str> = full.cols.iter().map(|c| c.label.as_str()).collect();
    let expect: Vec<String> = (0..p.threads().len())
        .map(|t| p.thread(ThreadIndex::from(t)).to_string())
        .collect();
    assert_eq!(labels, expect.iter().map(String::as_str).collect::<Vec<_>>());
}

#[test]
fn thread_axis_orders_and_subsets() {
    let l = example();
    let p = &l.profile;
    let cache = query::ViewCache::default();
    let wait = p.event_by_name("MPI_Waitall()").unwrap();
    // By value: the full-resolution row of MPI_Waitall() descends.
    let by = ViewParams {
        threads: Some("value".into()),
        by_event: Some(wait.0),
        h: Some(4096),
        w: Some(4096),
        thread: Some("7.0.0".into()),
        ..q()
    };
    let m = query::matrix(p, &cache, &by).unwrap();
    let row = m.rows.iter().position(|b| b.event == Some(wait.0)).unwrap();
    let vals: Vec<f64> = m.values[row * m.cols.len()..(row + 1) * m.cols.len()]
        .iter()
        .map(|v| v.unwrap())
        .collect();
    assert!(vals.windows(2).all(|w| w[0] >= w[1]), "{vals:?}");
    let sorted = thread_values_sorted(p, wait, ValueKind::Exclusive, MetricId(0));
    assert_eq!(
        m.cols[0].thread.as_deref(),
        Some(p.thread(sorted[0].0).to_string().as_str())
    );
    let pos7 = sorted
        .iter()
        .position(|(t, _)| p.thread(*t).to_string() == "7.0.0")
        .unwrap();
    assert_eq!(m.thread_position, Some(pos7 as u32));
    // The first 8 threads of that order.
    let top = query::matrix(
        p,
        &cache,
        &ViewParams {
            subset: Some("top".into()),
            top: Some(8),
            ..by.clone()
        },
    )
    .unwrap();
    assert_eq!(top.thread_count, 8);
    assert_eq!(top.cols.len(), 8);
    // Clusters: sizes add up, the order groups them, and the answer is deterministic.
    let cl = ViewParams {
        threads: Some("cluster".into()),
        clusters: Some(4),
        ..q()
    };
    let t = query::threads(p, &cache, &cl).unwrap();
    assert_eq!(t.clusters.iter().map(|c| c.size).sum::<u32>(), 64);
    assert!(t.clusters.windows(2).all(|w| w[0].size >= w[1].size));
    assert!(!t.features.is_empty());
    let again = query::threads(p, &query::ViewCache::default(), &cl).unwrap();
    assert_eq!(t.threads, again.threads);
    let m = query::matrix(
        p,
        &cache,
        &ViewParams {
            h: Some(4096),
            w: Some(4096),
            ..cl.clone()
        },
    )
    .unwrap();
    assert_eq!(m.cluster_starts.len(), t.clusters.len());
    assert_eq!(m.cluster_starts[0], 0);
    let mut expect = vec![0u32];
    for c in &t.clusters[..t.clusters.len() - 1] {
        expect.push(expect.last().unwrap() + c.size);
    }
    assert_eq!(m.cluster_starts, expect);
    // Representatives: at most 3 per cluster, the min/median/max of each.
    let reps = query::threads(
        p,
        &cache,
        &ViewParams {
            subset: Some("reps".into()),
            ..cl.clone()
        },
    )
    .unwrap();
    assert!(reps.count as usize <= 3 * t.clusters.len() && reps.count as usize >= t.clusters.len());
    // Bad combinations are 400s.
    assert_eq!(
        query::matrix(
            p,
            &cache,
            &ViewParams {
                threads: Some("value".into()),
                ..q()
            }
        )
        .unwrap_err()
        .status,
        400
    );
    assert_eq!(
        query::matrix(
            p,
            &cache,
            &ViewParams {
                subset: Some("reps".into()),
                ..q()
            }
        )
        .unwrap_err()
        .status,
        400
    );
    assert_eq!(
        query::matrix(
            p,
            &cache,
            &ViewParams {
                threads: Some("random".into()),
                ..q()
            }
        )
        .unwrap_err()
        .status,
        400
    );
}

#[test]
fn overview_and_terrain_follow_the_thread_axis() {
    let l = example();
    let p = &l.profile;
    let cache = query::ViewCache::default();
    let ov = query::overview(
        p,
        &cache,
        &ViewParams {
            threads: Some("cluster".into()),
            clusters: Some(3),
            w: Some(64),
            ..q()
        },
    )
    .unwrap();
    assert_eq!(ov.thread_count, 64);
    assert!(!ov.cluster_starts.is_empty());
    let t = query::terrain(
        p,
        &cache,
        &ViewParams {
            subset: Some("top".into()),
            top: Some(16),
            ..q()
        },
    )
    .unwrap();
    assert_eq!(t.grid.thread_count, 16);
}

mod session {
    use super::*;
    use futures_util::{SinkExt, StreamExt};
    use std::time::{Duration, Instant};
    use tokio_tungstenite::tungstenite::Message;

    async fn start(token: Option<&str>) -> std::net::SocketAddr {
        let state = AppState::new_shared("example", Ok(example()), token.map(str::to_string));
        let listener = bind(&ServerConfig {
            token: token.map(str::to_string),
            ..ServerConfig::default()
        })
        .await
        .unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, router(state)).await.unwrap() });
        addr
    }

    type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

    async fn next_of(ws: &mut Ws, kind: &str) -> serde_json::Value {
        loop {
            let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            if let Message::Text(t) = msg {
                let v: serde_json::Value = serde_json::from_str(&t).unwrap();
                if v["type"] == kind {
                    return v;
                }
            }
        }
    }

    #[tokio::test]
    async fn a_selection_by_one_browser_reaches_the_other_fast() {
        let addr = start(Some("tok")).await;
        let url = format!("ws://{addr}/api/ws?token=tok");
        let (mut a, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        let wa = next_of(&mut a, "welcome").await;
        let (mut b, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        let wb = next_of(&mut b, "welcome").await;
        assert_ne!(wa["id"], wb["id"]);
        assert_eq!(wb["peers"].as_array().unwrap().len(), 2);
        // A renames itself; B sees the presence change.
        a.send(Message::Text(r#"{"type":"hello","name":"Ada"}"#.into()))
            .await
            .unwrap();
        loop {
            let p = next_of(&mut b, "presence").await;
            if p["peers"].as_array().unwrap().iter().any(|x| x["name"] == "Ada") {
                break;
            }
        }
        // A selects; B receives it within 100 ms.
        let t0 = Instant::now();
        a.send(Message::Text(
            r#"{"type":"selection","state":{"event":3,"thread":"5.0.0"}}"#.into(),
        ))
        .await
        .unwrap();
        let sel = next_of(&mut b, "selection").await;
        let latency = t0.elapsed();
        assert_eq!(sel["from"], wa["id"]);
        assert_eq!(sel["state"]["event"], 3);
        assert!(latency < Duration::from_millis(100), "{latency:?}");
        // Cursor moves are relayed too.
        a.send(Message::Text(
            r#"{"type":"cursor","view":"heatmap","x":0.25,"y":0.5}"#.into(),
        ))
        .await
        .unwrap();
        let c = next_of(&mut b, "cursor").await;
        assert_eq!(
            (c["view"].as_str(), c["x"].as_f64()),
            (Some("heatmap"), Some(0.25))
        );
        // A newcomer gets the session's current selection in its welcome.
        let (mut c2, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        let w = next_of(&mut c2, "welcome").await;
        assert_eq!(w["selection"]["thread"], "5.0.0");
        // Garbage does not break the session.
        a.send(Message::Text("not json".into())).await.unwrap();
        a.send(Message::Text(
            r#"{"type":"selection","state":{"event":4}}"#.into(),
        ))
        .await
        .unwrap();
        assert_eq!(next_of(&mut b, "selection").await["state"]["event"], 4);
        // B leaves: A sees two peers left (A and C).
        drop(b);
        loop {
            let p = next_of(&mut a, "presence").await;
            if p["peers"].as_array().unwrap().len() == 2 {
                break;
            }
        }
    }

    #[tokio::test]
    async fn a_wrong_or_missing_token_is_refused() {
        let addr = start(Some("tok")).await;
        for url in [
            format!("ws://{addr}/api/ws"),
            format!("ws://{addr}/api/ws?token=nope"),
        ] {
            match tokio_tungstenite::connect_async(&url).await {
                Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), 403),
                other => panic!("{url}: expected 403, got {other:?}"),
            }
        }
        let http = get(
            router(AppState::new_shared("example", Ok(example()), Some("tok".into()))),
            "/api/run?token=tok",
            &[],
        )
        .await;
        assert!(http.2.contains("\"shared\":true"));
    }
}
