//! The HTTP layer: only embedded assets, 404s, typed parameters refused with a 400 that names
//! them, a failed load explained, and the access rules (token, Host, Origin, security
//! headers); the shared session's WebSocket hub.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::http::{StatusCode, header};
use common::{example_state, request};
use perfscape_server::{Access, AppState, ServerConfig, StateOptions, bind, router};

#[tokio::test]
async fn serves_the_page_and_only_embedded_assets() {
    let app = router(example_state(StateOptions::default()));
    let (s, h, body) = request(&app, "/", &[]).await;
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
    let (s, h, _) = request(&app, &asset, &[]).await;
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
        let (s, _, _) = request(&app, bad, &[]).await;
        assert_eq!(s, StatusCode::NOT_FOUND, "{bad}");
    }
    let (s, _, body) = request(&app, "/api/events?kind=inclusive", &[]).await;
    assert_eq!(s, StatusCode::OK);
    let j: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(j["rows"][0]["name"], ".TAU application");
    let (s, _, body) = request(&app, "/api/matrix?reduce=avg", &[]).await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(body.contains("reduce `avg`"));
}

/// Every kind of parameter refuses an unknown value with a 400 that names the parameter and
/// what it accepts: never a silent default.
#[tokio::test]
async fn bad_values_are_refused_naming_the_parameter_and_the_allowed_values() {
    let app = router(example_state(StateOptions::default()));
    for (uri, want) in [
        (
            "/api/events?kind=bogus",
            "kind `bogus`: expected one of exclusive, inclusive, calls, subcalls",
        ),
        (
            "/api/rows?rows=columns",
            "rows `columns`: expected events or lines",
        ),
        (
            "/api/rows?order=size",
            "order `size`: expected one of rank, file, name",
        ),
        ("/api/matrix?reduce=avg", "reduce `avg`: expected max or sum"),
        (
            "/api/matrix?threads=random",
            "threads `random`: expected one of id, value, cluster",
        ),
        (
            "/api/overview?subset=some",
            "subset `some`: expected one of all, top, reps",
        ),
        (
            "/api/events?mode=sideways",
            "mode `sideways`: expected cumulative or delta",
        ),
        (
            "/api/calltree?scope=median",
            "scope `median`: expected total, mean, mean_all or a thread N.C.T",
        ),
        ("/api/matrix?thread=3.0", "thread `3.0`: expected a thread N.C.T"),
        (
            "/api/kiviat?threads_list=1.0.0,x",
            "threads_list `x`: expected threads N.C.T,N.C.T,...",
        ),
        (
            "/api/pointcloud?events=1,two,3",
            "events `two` is not an event id",
        ),
        ("/api/events?callpaths=yes", "callpaths `yes`: "),
        ("/api/matrix?h=-1", "h `-1`: "),
        ("/api/timeline?from_ns=soon", "from_ns `soon`: "),
    ] {
        let (s, _, body) = request(&app, uri, &[]).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{uri}: {body}");
        let j: serde_json::Value = serde_json::from_str(&body).unwrap();
        let msg = j["error"].as_str().unwrap();
        assert!(msg.starts_with(want), "{uri}: {msg}");
    }
}

#[tokio::test]
async fn a_token_guards_every_request() {
    let app = router(example_state(StateOptions {
        access: Access::local().with_token(Some("s3cret".into())),
        ..Default::default()
    }));
    for uri in ["/", "/api/run", "/nope"] {
        let (s, _, _) = request(&app, uri, &[]).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{uri}");
    }
    let (s, _, _) = request(&app, "/api/run?token=wrong", &[]).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, h, _) = request(&app, "/?token=s3cret", &[]).await;
    assert_eq!(s, StatusCode::OK);
    let cookie = h[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let (s, _, _) = request(&app, "/api/run", &[("cookie", &cookie)]).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _, _) = request(&app, "/api/run", &[("authorization", "Bearer s3cret")]).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _, _) = request(&app, "/api/run", &[("authorization", "Bearer s3cre")]).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
    let (s, _, _) = request(&app, "/api/run", &[("cookie", "perfscape_token=s3cre")]).await;
    assert_eq!(s, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn non_loopback_needs_a_token_and_loopback_is_the_default() {
    let cfg = ServerConfig {
        bind: "0.0.0.0".parse().unwrap(),
        port: 0,
        token: None,
        allow_hosts: vec![],
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
        Err("cannot load /no/run: No such file or directory (os error 2)".into()),
        StateOptions::default(),
    ));
    let (s, _, body) = request(&app, "/api/run", &[]).await;
    assert_eq!(s, StatusCode::OK);
    let j: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(j["status"], "error");
    assert!(j["error"].as_str().unwrap().contains("No such file"));
    let (s, _, body) = request(&app, "/api/events", &[]).await;
    assert_eq!(s, StatusCode::SERVICE_UNAVAILABLE);
    assert!(body.contains("did not load"));
}

#[tokio::test]
async fn the_server_opens_a_run_itself() {
    let state = AppState::open(
        &common::example_dir(),
        &perfscape_formats::OpenOptions::default(),
        StateOptions::default(),
    );
    let app = router(state.clone());
    let (s, _, body) = request(&app, "/api/run", &[]).await;
    assert_eq!(s, StatusCode::OK);
    let j: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (j["status"].as_str(), j["threads"].as_u64()),
        (Some("ok"), Some(64))
    );
    let missing = AppState::open(
        std::path::Path::new("/no/such/run"),
        &perfscape_formats::OpenOptions::default(),
        StateOptions::default(),
    );
    assert!(missing.run().err().unwrap().contains("/no/such/run"));
}

/// DNS rebinding: a page of another site that resolves its name to 127.0.0.1 sends its own
/// name as Host.
#[tokio::test]
async fn a_foreign_host_is_refused() {
    let addr: std::net::SocketAddr = "127.0.0.1:4321".parse().unwrap();
    let app = router(example_state(StateOptions {
        access: Access::new(addr, None, &["perfbox.lan".into()]),
        ..Default::default()
    }));
    for host in [
        "127.0.0.1:4321",
        "localhost:4321",
        "[::1]:4321",
        "perfbox.lan:4321",
    ] {
        let (s, _, _) = request(&app, "/api/run", &[("host", host)]).await;
        assert_eq!(s, StatusCode::OK, "{host}");
    }
    for host in ["evil.example:4321", "evil.example", "localhost:80", "127.0.0.1"] {
        let (s, _, body) = request(&app, "/api/run", &[("host", host)]).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{host}");
        assert!(body.contains("is not this server's name"), "{body}");
        assert!(body.contains("--allow-host"), "{body}");
    }
}

#[tokio::test]
async fn every_response_carries_the_security_headers() {
    let app = router(example_state(StateOptions {
        access: Access::local().with_token(Some("t".into())),
        ..Default::default()
    }));
    for (uri, status) in [
        ("/?token=t", StatusCode::OK),
        ("/api/run?token=t", StatusCode::OK),
        ("/api/nope?token=t", StatusCode::NOT_FOUND),
        ("/api/matrix?token=t&reduce=avg", StatusCode::BAD_REQUEST),
        ("/api/run", StatusCode::FORBIDDEN),
    ] {
        let (s, h, _) = request(&app, uri, &[("host", "localhost:8000")]).await;
        assert_eq!(s, status, "{uri}");
        let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
        assert!(
            csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"),
            "{csp}"
        );
        assert!(csp.contains("connect-src 'self' ws://localhost:8000"), "{csp}");
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(h[header::REFERRER_POLICY], "no-referrer");
    }
}

mod session {
    use super::*;
    use futures_util::{SinkExt, StreamExt};
    use std::time::{Duration, Instant};
    use tokio_tungstenite::tungstenite::Message;

    async fn start(token: Option<&str>) -> std::net::SocketAddr {
        let cfg = ServerConfig {
            token: token.map(str::to_string),
            ..ServerConfig::default()
        };
        let listener = bind(&cfg).await.unwrap();
        let addr = listener.local_addr().unwrap();
        let state = example_state(StateOptions {
            shared: true,
            access: cfg.access(addr),
            ..Default::default()
        });
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
        let app = router(example_state(StateOptions {
            shared: true,
            access: Access::local().with_token(Some("tok".into())),
            ..Default::default()
        }));
        let http = request(&app, "/api/run?token=tok", &[]).await;
        assert!(http.2.contains("\"shared\":true"));
    }

    /// A page of another site opening a WebSocket to the local server: refused whatever the
    /// token, before the upgrade.
    #[tokio::test]
    async fn a_websocket_from_a_foreign_origin_is_refused() {
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        let addr = start(None).await;
        let connect = |origin: &str| {
            let mut req = format!("ws://{addr}/api/ws").into_client_request().unwrap();
            req.headers_mut().insert("origin", origin.parse().unwrap());
            tokio_tungstenite::connect_async(req)
        };
        match connect("http://evil.example").await {
            Err(tokio_tungstenite::tungstenite::Error::Http(resp)) => {
                assert_eq!(resp.status(), 403);
                let body = String::from_utf8_lossy(resp.body().as_deref().unwrap_or_default()).to_string();
                assert!(body.contains("evil.example"), "{body}");
            }
            other => panic!("expected 403, got {other:?}"),
        }
        let (mut ws, _) = connect(&format!("http://{addr}")).await.unwrap();
        next_of(&mut ws, "welcome").await;
    }
}

/// A metric that does not add up (CUBE `min_time`): the run says how each metric combines, the
/// ranked table has no percentages, and `reduce=sum` over it is a 400 naming the metric.
#[tokio::test]
async fn metrics_that_do_not_add_up_say_so_and_are_never_summed() {
    let path = common::corpus().join("cube/pycubexr-kripke-p8/profile.cubex");
    let opened = perfscape_formats::open(&path, &perfscape_formats::OpenOptions::default());
    let app = router(AppState::new(
        "kripke",
        Ok(opened.unwrap()),
        StateOptions::default(),
    ));
    let (s, run) = common::get_json(&app, "/api/run").await;
    assert_eq!(s, StatusCode::OK);
    let combine: Vec<(&str, &str)> = run["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["name"].as_str().unwrap(), m["combine"].as_str().unwrap()))
        .collect();
    assert_eq!(
        &combine[..4],
        [
            ("time", "sum"),
            ("visits", "sum"),
            ("min_time", "min"),
            ("max_time", "max")
        ]
    );
    let (s, ev) = common::get_json(&app, "/api/events?metric=2").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        (ev["combine"].as_str(), ev["run_total"].is_null()),
        (Some("min"), true)
    );
    assert!(
        ev["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["percent"].is_null())
    );
    for uri in [
        "/api/matrix?metric=2&reduce=sum",
        "/api/overview?metric=3&reduce=sum",
    ] {
        let (s, _, body) = request(&app, uri, &[]).await;
        assert_eq!(s, StatusCode::BAD_REQUEST, "{uri}");
        assert!(
            body.contains("does not add up") && body.contains("reduce=max"),
            "{uri}: {body}"
        );
    }
    for uri in [
        "/api/matrix?metric=2&reduce=max",
        "/api/matrix?metric=0&reduce=sum",
        "/api/matrix?metric=2&kind=calls&reduce=sum",
    ] {
        let (s, _, body) = request(&app, uri, &[]).await;
        assert_eq!(s, StatusCode::OK, "{uri}: {body}");
    }
}
