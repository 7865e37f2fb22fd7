//! `perfscape report`: one self-contained HTML file of a run's dashboards — the page's own code
//! and style inlined, and the answers its panels ask for recorded in it — that opens from
//! `file://` with no server, to attach to a ticket or a paper's artifact.
//!
//! The answers are asked of the same router `perfscape serve` runs, so a report shows exactly
//! what the page would. Recorded: the run (`run`), its samples (`series`), every dashboard,
//! the ranked event table of every metric (`events`), the trend of every event of a run over
//! time (`trend`), and each SQL panel's answer for every selection its placeholders can take
//! (each event, thread, sample and metric; at most [`MAX_ANSWERS_PER_PANEL`] per panel, the
//! largest domains cut first). What was not recorded shows in its panel as "not in this
//! report". The page reads the answers by the same keys (`web/src/report.ts`): a GET by its
//! path and query after `/api/` (`events?metric=0&...`), an SQL query by [`sql_key`].

use crate::dashboard::spec::Dashboard;
use crate::state::AppState;
use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use std::collections::BTreeMap;
use std::sync::Arc;
use tower::ServiceExt;

/// SQL answers recorded per panel at most (the product of its placeholders' domains).
pub const MAX_ANSWERS_PER_PANEL: usize = 3000;

/// One recorded answer: its HTTP status and JSON body.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Recorded {
    /// The HTTP status.
    pub status: u16,
    /// The JSON body (an error's `{"error": ...}` too).
    pub body: serde_json::Value,
}

/// What a report holds, besides the page.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ReportData {
    /// The run's path as given.
    pub source: String,
    /// When it was made (UTC, `YYYY-MM-DD HH:MM`).
    pub generated: String,
    /// The answers, by key (a GET's path and query after `/api/`, or [`sql_key`]).
    pub answers: BTreeMap<String, Recorded>,
    /// What was not all recorded (too many selections): `what: how much was`.
    pub cut: Vec<String>,
}

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// The front end is not in this build.
    #[error("the page is not embedded in this build: {0}")]
    Page(String),
    /// An answer could not be asked (an internal error of the router).
    #[error("asking {0}: {1}")]
    Ask(String, String),
}

/// The placeholders of an SQL panel, in the order of [`sql_key`] (`PARAM_KEYS` in
/// `web/src/placeholders.ts`).
const PARAMS: [&str; 5] = ["event", "thread", "sample", "metric", "run"];

/// True when `query` uses the placeholder `$name` (not as the start of a longer name), as the
/// page decides (`web/src/dashboard/sqlpanel.ts`).
fn uses(query: &str, name: &str) -> bool {
    let needle = format!("${name}");
    query.match_indices(&needle).any(|(i, _)| {
        query[i + needle.len()..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'))
    })
}

/// The key of an SQL answer: `sql`, the query, then for `$event`, `$thread`, `$sample`,
/// `$metric`, `$run` in that order a line with the value bound (JSON) when the query uses it,
/// else an empty line (`sqlKey` in `web/src/report.ts`).
pub fn sql_key(query: &str, values: &[serde_json::Value; 5]) -> String {
    let mut key = format!("sql\n{query}\n");
    for (name, v) in PARAMS.iter().zip(values) {
        if uses(query, name) {
            key.push_str(&v.to_string());
        }
        key.push('\n');
    }
    key
}

/// Every choice of one value per placeholder from `domains` (one list per [`PARAMS`] entry,
/// none empty), the last placeholder varying fastest.
fn selections(domains: &[Vec<serde_json::Value>]) -> Vec<[serde_json::Value; 5]> {
    let mut out = vec![std::array::from_fn(|_| serde_json::Value::Null)];
    for (i, domain) in domains.iter().enumerate().take(PARAMS.len()) {
        out = out
            .into_iter()
            .flat_map(|partial: [serde_json::Value; 5]| {
                domain.iter().map(move |v| {
                    let mut next = partial.clone();
                    next[i] = v.clone();
                    next
                })
            })
            .collect();
    }
    out
}

async fn ask(app: &axum::Router, req: Request<Body>, what: &str) -> Result<Recorded, ReportError> {
    let resp = app
        .clone()
        .oneshot(req)
        .await
        .map_err(|e| ReportError::Ask(what.into(), e.to_string()))?;
    let status = resp.status().as_u16();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map_err(|e| ReportError::Ask(what.into(), e.to_string()))?
        .to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    Ok(Recorded { status, body })
}

async fn get(app: &axum::Router, key: &str) -> Result<Recorded, ReportError> {
    let req = Request::builder()
        .uri(format!("/api/{key}"))
        .header("host", "localhost")
        .body(Body::empty())
        .map_err(|e| ReportError::Ask(key.into(), e.to_string()))?;
    ask(app, req, key).await
}

/// Records the answers of the page over `state` (a state made for the report: default access,
/// not shared, not live) and its dashboards, asked of `app`, the state's router
/// (`perfscape_server::router(state.clone())`).
///
/// # Errors
/// [`ReportError::Ask`] when the router fails internally or its run information cannot be
/// read.
pub async fn record(
    state: &Arc<AppState>,
    app: axum::Router,
    source: &str,
    generated: String,
) -> Result<ReportData, ReportError> {
    let app = &app;
    let mut answers = BTreeMap::new();
    let mut cut = Vec::new();
    let info = get(app, "run").await?;
    let run: crate::api::RunInfoSummary = serde_json::from_value(info.body.clone())
        .map_err(|e| ReportError::Ask("run".into(), e.to_string()))?;
    answers.insert("run".to_string(), info);
    if run.samples > 0 {
        answers.insert("series".into(), get(app, "series").await?);
    }
    let metrics = run.metrics.min(16);
    for m in 0..metrics {
        for callpaths in [false, true] {
            let key = format!("events?metric={m}&kind=exclusive&callpaths={callpaths}");
            answers.insert(key.clone(), get(app, &key).await?);
        }
    }
    let profile = state.run().ok().map(|r| &r.profile);
    let events: Vec<u32> = profile.map_or(Vec::new(), |p| p.event_ids().take(300).map(|e| e.0).collect());
    let threads: Vec<String> = profile.map_or(Vec::new(), |p| {
        p.threads().iter().take(256).map(|t| t.to_string()).collect()
    });
    // How many values each placeholder can take in all (the lists above are the first of them).
    let event_count = profile.map_or(0, |p| p.events().len());
    let thread_count = profile.map_or(0, |p| p.threads().len());
    let all = [
        event_count + 1,
        thread_count + 1,
        run.samples as usize + 1,
        run.metrics,
        // `$run`: a report holds one run (the page binds null).
        1,
    ];
    if run.samples > 0 {
        for e in &events {
            let key = format!("trend?event={e}&metric=0&kind=exclusive&mode=cumulative");
            answers.insert(key.clone(), get(app, &key).await?);
        }
        if events.len() < event_count {
            cut.push(format!(
                "trend: the first {} of {event_count} events recorded",
                events.len()
            ));
        }
    }
    let dashboards: Vec<(u32, Dashboard)> = (0..state.dashboards.len() as u32)
        .filter_map(|i| state.dashboards.get(i).map(|d| (i, d)))
        .collect();
    for (i, d) in &dashboards {
        answers.insert(
            format!("dashboard/{i}"),
            Recorded {
                status: 200,
                body: serde_json::to_value(d).unwrap_or_default(),
            },
        );
        for p in d.panels.iter().filter(|p| p.error.is_none()) {
            let Some(query) = &p.sql else { continue };
            // The values each placeholder the query uses can take, as the page sends them.
            let json = |x: u32| serde_json::Value::from(x);
            let mut domains: Vec<Vec<serde_json::Value>> = vec![
                std::iter::once(serde_json::Value::Null)
                    .chain(events.iter().map(|&e| json(e)))
                    .collect(),
                std::iter::once(serde_json::Value::Null)
                    .chain(threads.iter().map(|t| serde_json::Value::from(t.as_str())))
                    .collect(),
                std::iter::once(serde_json::Value::Null)
                    .chain((0..run.samples.min(200)).map(json))
                    .collect(),
                (0..metrics as u32).map(json).collect(),
                vec![serde_json::Value::Null],
            ];
            let mut full = 1usize;
            for (i, name) in PARAMS.iter().enumerate() {
                if uses(query, name) {
                    full = full.saturating_mul(all[i]);
                } else {
                    domains[i] = vec![serde_json::Value::Null];
                }
            }
            while domains.iter().map(Vec::len).product::<usize>() > MAX_ANSWERS_PER_PANEL {
                let widest = (0..domains.len()).max_by_key(|&i| domains[i].len()).unwrap_or(0);
                let keep = domains[widest].len() / 2;
                domains[widest].truncate(keep.max(1));
            }
            let kept: usize = domains.iter().map(Vec::len).product();
            if kept < full {
                cut.push(format!(
                    "{}: {kept} of {full} selections recorded (the first events, threads and samples)",
                    p.title
                ));
            }
            for values in selections(&domains) {
                let params: serde_json::Map<String, serde_json::Value> = PARAMS
                    .iter()
                    .map(|n| n.to_string())
                    .zip(values.iter().cloned())
                    .collect();
                let body = serde_json::json!({ "query": query, "over": p.over, "params": params });
                let req = Request::builder()
                    .method("POST")
                    .uri("/api/sql")
                    .header("host", "localhost")
                    .header("content-type", "application/json")
                    .body(Body::from(body.to_string()))
                    .map_err(|e| ReportError::Ask("sql".into(), e.to_string()))?;
                answers.insert(sql_key(query, &values), ask(app, req, "sql").await?);
            }
        }
    }
    Ok(ReportData {
        source: source.to_string(),
        generated,
        answers,
        cut,
    })
}

/// The self-contained page: the embedded `index.html` with its script and style inlined and
/// `data` as a JSON script element (`#perfscape-report`) the page reads instead of the server.
///
/// # Errors
/// [`ReportError::Page`] when the build has no front end.
pub fn html(data: &ReportData) -> Result<String, ReportError> {
    let text =
        |name: &str| crate::assets::text(name).ok_or_else(|| ReportError::Page(format!("{name} is missing")));
    let index = text("index.html")?;
    let mut page = String::with_capacity(index.len() + 4_000_000);
    let mut script = String::new();
    let mut style = String::new();
    for line in index.lines() {
        let t = line.trim();
        if let Some(src) = attr(t, "<script", "src") {
            script = text(src.trim_start_matches('/'))?;
        } else if let Some(href) = attr(t, "<link rel=\"stylesheet\"", "href") {
            style = text(href.trim_start_matches('/'))?;
        } else if t.starts_with("<title>") {
            page.push_str(&format!(
                "    <title>perfscape report: {}</title>\n",
                escape_html(&data.source)
            ));
        } else if t == "</head>" {
            page.push_str("    <style>\n");
            page.push_str(&style.replace("</style", "<\\/style"));
            page.push_str("\n    </style>\n    <script type=\"application/json\" id=\"perfscape-report\">");
            let json = serde_json::to_string(data).unwrap_or_default();
            // `</` cannot end the element early: JSON reads `<\/` as `</`.
            page.push_str(&json.replace("</", "<\\/"));
            page.push_str("</script>\n    <script type=\"module\">\n");
            page.push_str(&script.replace("</script", "<\\/script"));
            page.push_str("\n    </script>\n  </head>\n");
        } else {
            page.push_str(line);
            page.push('\n');
        }
    }
    if script.is_empty() {
        return Err(ReportError::Page("index.html names no script".into()));
    }
    Ok(page)
}

/// The value of attribute `name` of a tag line starting with `tag`.
fn attr<'a>(line: &'a str, tag: &str, name: &str) -> Option<&'a str> {
    if !line.starts_with(tag) {
        return None;
    }
    let start = line.find(&format!("{name}=\""))? + name.len() + 2;
    let end = line[start..].find('"')? + start;
    Some(&line[start..end])
}

fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_found_as_the_page_finds_them() {
        assert!(uses("WHERE e.event = $event", "event"));
        assert!(uses("$event)", "event"));
        assert!(!uses("$events", "event"));
        assert!(!uses("$event_x", "event"));
        let v = [
            serde_json::json!(3),
            serde_json::json!("1.0.0"),
            serde_json::Value::Null,
            serde_json::json!(0),
            serde_json::json!(1),
        ];
        assert_eq!(
            sql_key("SELECT $event, $metric", &v),
            "sql\nSELECT $event, $metric\n3\n\n\n0\n\n"
        );
        assert_eq!(sql_key("SELECT $run", &v), "sql\nSELECT $run\n\n\n\n\n1\n");
    }

    #[test]
    fn every_selection_of_the_domains_is_asked_once() {
        let d = |xs: &[i64]| xs.iter().map(|&x| serde_json::json!(x)).collect::<Vec<_>>();
        let all = selections(&[d(&[1, 2]), d(&[3]), d(&[4, 5, 6]), d(&[7]), d(&[8])]);
        assert_eq!(all.len(), 6);
        let keys: std::collections::BTreeSet<String> =
            all.iter().map(|v| serde_json::to_string(v).unwrap()).collect();
        assert_eq!(keys.len(), 6);
        assert_eq!(serde_json::to_string(&all[0]).unwrap(), "[1,3,4,7,8]");
        assert_eq!(serde_json::to_string(&all[5]).unwrap(), "[2,3,6,7,8]");
    }
}
