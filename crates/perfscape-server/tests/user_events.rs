//! `/api/userevents` and `/api/userevent/{id}` on the 64-rank example against the `userevents`
//! sections of its profile files, read here line by line: the pooled count, min, max, mean and
//! standard deviation of every user event, one rank's own values, and the per-thread list.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::http::StatusCode;
use common::{example_dir, example_state, get_json};
use perfscape_server::{StateOptions, router};
use std::collections::BTreeMap;

/// Per user event name (runs of spaces collapsed, as ParaProf names them), per rank:
/// `[count, max, min, mean, sumsqr]` from the files.
fn from_files() -> BTreeMap<String, BTreeMap<u32, [f64; 5]>> {
    let mut out: BTreeMap<String, BTreeMap<u32, [f64; 5]>> = BTreeMap::new();
    for rank in 0..64u32 {
        let text = std::fs::read_to_string(example_dir().join(format!("profile.{rank}.0.0"))).unwrap();
        let section = text.split_once(" userevents\n").unwrap().1;
        for line in section.lines().skip(1).filter(|l| l.starts_with('"')) {
            let (name, rest) = line[1..].split_once('"').unwrap();
            let v: Vec<f64> = rest.split_whitespace().map(|x| x.parse().unwrap()).collect();
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            out.entry(name)
                .or_default()
                .insert(rank, [v[0], v[1], v[2], v[3], v[4]]);
        }
    }
    out
}

#[tokio::test]
async fn user_events_pool_the_values_of_every_rank() {
    let files = from_files();
    let app = router(example_state(StateOptions::default()));
    let (s, body) = get_json(&app, "/api/userevents?thread=5.0.0").await;
    assert_eq!(s, StatusCode::OK, "{body}");
    let rows = body["rows"].as_array().unwrap();
    assert_eq!(rows.len(), files.len());
    for row in rows {
        let name = row["name"].as_str().unwrap();
        let ranks = &files[name];
        let n: f64 = ranks.values().map(|v| v[0]).sum();
        let mean = ranks.values().map(|v| v[0] * v[3]).sum::<f64>() / n;
        let sd = (ranks.values().map(|v| v[4]).sum::<f64>() / n - mean * mean)
            .max(0.0)
            .sqrt();
        let all = &row["all"];
        assert_eq!(row["threads"].as_u64().unwrap() as usize, ranks.len(), "{name}");
        assert_eq!(all["count"].as_f64().unwrap(), n, "{name}");
        let max = ranks.values().map(|v| v[1]).fold(f64::MIN, f64::max);
        let min = ranks.values().map(|v| v[2]).fold(f64::MAX, f64::min);
        assert_eq!(
            (all["max"].as_f64().unwrap(), all["min"].as_f64().unwrap()),
            (max, min),
            "{name}"
        );
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(close(all["mean"].as_f64().unwrap(), mean), "{name}");
        assert!(
            close(all["stddev"].as_f64().unwrap(), sd),
            "{name}: {} vs {sd}",
            all["stddev"]
        );
        match ranks.get(&5) {
            Some(v) => assert_eq!(row["thread"]["count"].as_f64().unwrap(), v[0], "{name}"),
            None => assert!(row["thread"].is_null(), "{name}"),
        }
    }

    let id = rows
        .iter()
        .find(|r| r["name"] == "Message size for all-reduce")
        .unwrap()["id"]
        .as_u64()
        .unwrap();
    let (s, d) = get_json(&app, &format!("/api/userevent/{id}?points=16")).await;
    assert_eq!(s, StatusCode::OK, "{d}");
    assert_eq!(d["threads"].as_array().unwrap().len(), 16);
    assert_eq!(d["downsampled"], true);
    assert_eq!(d["threads"][1]["thread"], "4.0.0");
    assert_eq!(
        d["threads"][1]["stats"]["count"].as_f64().unwrap(),
        files["Message size for all-reduce"][&4][0]
    );
    let (s, _) = get_json(&app, "/api/userevent/100000").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    let (s, _) = get_json(&app, "/api/userevents?thread=99.0.0").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
}
