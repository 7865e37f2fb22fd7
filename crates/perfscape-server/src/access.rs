//! Who may talk to the server: the `Host` each request names, the `Origin` of each WebSocket,
//! and the access token; and the security headers of every response.
//!
//! - **Host** (DNS rebinding): a request must name the server by the bound address,
//!   `localhost`, `127.0.0.1` or `[::1]` (or a name given with `--allow-host`), with the
//!   bound port; a server bound to all addresses (`0.0.0.0`, `::`) also answers any IP
//!   address. Anything else is a 403 saying which names are accepted.
//! - **Origin** (cross-site WebSockets): a WebSocket upgrade from a browser must come from a
//!   page of one of those hosts; clients that send no `Origin` (not browsers) pass on to the
//!   token check.
//! - **Token**: with a token every request — page, assets, API, WebSocket — carries it as
//!   `?token=`, `Authorization: Bearer`, or the cookie set on the first request with a valid
//!   `?token=` (HttpOnly, SameSite=Strict, named after the port so that two servers on one
//!   host keep their own). Compared in constant time (`subtle`). Else 403.
//! - **Headers** on every response: a `Content-Security-Policy` that lets the embedded front
//!   end run (its own scripts — `'unsafe-eval'` because echarts-gl's post-processing compiles
//!   its size expressions with `Function` —, inline styles as ECharts writes them, canvas and
//!   WebGL, blob workers, a WebSocket to this host) and nothing else: no inline or foreign
//!   script, no frame, object, form or base URI; `X-Content-Type-Options: nosniff`,
//!   `Referrer-Policy: no-referrer`.

use crate::api::ErrorResponse;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum_extra::extract::cookie::{Cookie, CookieJar, SameSite};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use subtle::ConstantTimeEq;

/// The names every server answers to, whatever its address.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The access rules of one server (see the module documentation).
#[derive(Clone, Debug)]
pub struct Access {
    token: Option<String>,
    /// Accepted host names (lower case; IPv6 addresses in brackets), without port.
    hosts: Vec<String>,
    /// The port a `Host` must name; none: any (a state not yet bound, e.g. in tests).
    port: Option<u16>,
    /// Any IP address is accepted as a host (bound to all addresses).
    any_ip: bool,
}

impl Default for Access {
    /// [`Access::local`].
    fn default() -> Self {
        Self::local()
    }
}

/// Writes an address as a URL host: IPv6 in brackets.
pub fn url_host(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

impl Access {
    /// No token; hosts: the loopback names on any port. For a state used without a listener
    /// (tests, embedding); [`Access::new`] for a server that listens.
    pub fn local() -> Self {
        Self {
            token: None,
            hosts: LOOPBACK_NAMES.iter().map(|s| s.to_string()).collect(),
            port: None,
            any_ip: false,
        }
    }

    /// The rules of a server listening on `addr`: hosts the loopback names, `addr`'s IP (any
    /// IP when `addr` is unspecified) and `allow_hosts`, each with `addr`'s port; `token`
    /// required when given.
    pub fn new(addr: SocketAddr, token: Option<String>, allow_hosts: &[String]) -> Self {
        let mut hosts: Vec<String> = LOOPBACK_NAMES.iter().map(|s| s.to_string()).collect();
        if !addr.ip().is_unspecified() {
            hosts.push(url_host(addr.ip()));
        }
        for h in allow_hosts {
            hosts.push(h.trim().to_ascii_lowercase());
        }
        let mut seen = std::collections::HashSet::new();
        hosts.retain(|h| seen.insert(h.clone()));
        Self {
            token,
            hosts,
            port: Some(addr.port()),
            any_ip: addr.ip().is_unspecified(),
        }
    }

    /// The same rules with `token` required (or none).
    pub fn with_token(self, token: Option<String>) -> Self {
        Self { token, ..self }
    }

    /// The token, if one is required.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// The name of the cookie that keeps the token.
    pub fn cookie_name(&self) -> String {
        match self.port {
            Some(p) => format!("perfscape_token_{p}"),
            None => "perfscape_token".into(),
        }
    }

    /// True when `host` (a `Host` header or an origin's `host[:port]`) names this server.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        let (name, port) = split_port(&host);
        if let (Some(want), Some(got)) = (self.port, port)
            && want != got
        {
            return false;
        }
        if self.port.is_some() && port.is_none() {
            // Browsers always send the port of a non-default one.
            return false;
        }
        self.hosts.iter().any(|h| h == name) || (self.any_ip && is_ip(name))
    }

    /// True when an `Origin` header (`http://host:port`) is a page of this server.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        let Some(rest) = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"))
        else {
            return false;
        };
        self.host_allowed(rest.trim_end_matches('/'))
    }

    /// The hosts accepted, for messages (`localhost:8000, 127.0.0.1:8000, ...`).
    fn hosts_text(&self) -> String {
        let port = self.port.map(|p| format!(":{p}")).unwrap_or_default();
        let mut v: Vec<String> = self.hosts.iter().map(|h| format!("{h}{port}")).collect();
        if self.any_ip {
            v.push(format!("any IP address{port}"));
        }
        v.join(", ")
    }

    fn token_ok(&self, given: Option<&str>) -> bool {
        match (&self.token, given) {
            (Some(t), Some(g)) => bool::from(t.as_bytes().ct_eq(g.as_bytes())),
            _ => false,
        }
    }
}

/// `host[:port]` split; IPv6 addresses keep their brackets.
fn split_port(host: &str) -> (&str, Option<u16>) {
    let cut = if host.starts_with('[') {
        host.find("]:").map(|i| i + 1)
    } else {
        host.rfind(':')
    };
    match cut {
        Some(i) => match host[i + 1..].parse() {
            Ok(p) => (&host[..i], Some(p)),
            Err(_) => (host, None),
        },
        None => (host, None),
    }
}

fn is_ip(name: &str) -> bool {
    name.trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .is_ok()
}

fn forbidden(message: String) -> Response {
    (
        StatusCode::FORBIDDEN,
        axum::Json(ErrorResponse { error: message }),
    )
        .into_response()
}

/// The host a request names: its `Host` header, else its URI's authority (HTTP/2).
fn request_host(req: &Request) -> Option<String> {
    req.headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| req.uri().authority().map(|a| a.to_string()))
}

fn query_token(req: &Request) -> Option<String> {
    let q = req.uri().query()?;
    form_urlencoded::parse(q.as_bytes())
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v.into_owned())
}

fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Middleware: the Host, Origin and token checks (see the module documentation).
pub async fn guard(State(access): State<Arc<Access>>, req: Request, next: Next) -> Response {
    let host = request_host(&req);
    match &host {
        Some(h) if access.host_allowed(h) => {}
        Some(h) => {
            return forbidden(format!(
                "Host `{h}` is not this server's name: perfscape answers requests for {} \
                 (perfscape serve --allow-host NAME accepts another)",
                access.hosts_text()
            ));
        }
        None => return forbidden("a request without a Host header".into()),
    }
    if req.headers().contains_key(header::UPGRADE)
        && let Some(origin) = req.headers().get(header::ORIGIN)
    {
        let origin = origin.to_str().unwrap_or("");
        if !access.origin_allowed(origin) {
            return forbidden(format!(
                "a WebSocket from the page of `{origin}`, which is not this server (accepted: {})",
                access.hosts_text()
            ));
        }
    }
    if access.token().is_none() {
        return next.run(req).await;
    }
    let name = access.cookie_name();
    let from_query = query_token(&req);
    if access.token_ok(from_query.as_deref()) {
        let mut resp = next.run(req).await;
        let cookie = Cookie::build((name, from_query.unwrap_or_default()))
            .http_only(true)
            .same_site(SameSite::Strict)
            .path("/")
            .build();
        if let Ok(v) = HeaderValue::from_str(&cookie.to_string()) {
            resp.headers_mut().append(header::SET_COOKIE, v);
        }
        return resp;
    }
    let jar = CookieJar::from_headers(req.headers());
    if access.token_ok(bearer_token(req.headers())) || access.token_ok(jar.get(&name).map(Cookie::value)) {
        return next.run(req).await;
    }
    forbidden("access token required: open the URL perfscape serve printed (it carries ?token=)".into())
}

/// Middleware: the security headers of every response (see the module documentation).
pub async fn security_headers(req: Request, next: Next) -> Response {
    let host = request_host(&req).unwrap_or_default();
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    // The WebSocket of shared and live sessions goes to this host; `'self'` covers ws: only
    // in recent browsers.
    let ws = if host.is_empty() || host.contains(|c: char| c.is_whitespace() || c == ';' || c == '\'') {
        String::new()
    } else {
        format!(" ws://{host} wss://{host}")
    };
    let csp = format!(
        "default-src 'self'; script-src 'self' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'{ws}; \
         worker-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'none'; \
         frame-ancestors 'none'"
    );
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_with_the_port() {
        let a = Access::new("127.0.0.1:8000".parse().unwrap(), None, &["Box.lan".into()]);
        for ok in [
            "127.0.0.1:8000",
            "localhost:8000",
            "[::1]:8000",
            "box.lan:8000",
            "LOCALHOST:8000",
        ] {
            assert!(a.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example:8000",
            "localhost:8001",
            "localhost",
            "10.0.0.1:8000",
            "[::1]",
        ] {
            assert!(!a.host_allowed(bad), "{bad}");
        }
        assert!(a.origin_allowed("http://localhost:8000"));
        assert!(!a.origin_allowed("http://evil.example:8000"));
        assert!(!a.origin_allowed("null"));
        let any = Access::new("0.0.0.0:9000".parse().unwrap(), Some("t".into()), &[]);
        assert!(any.host_allowed("10.1.2.3:9000") && any.host_allowed("[fe80::1]:9000"));
        assert!(!any.host_allowed("evil.example:9000"));
        let v6 = Access::new("[::1]:7000".parse().unwrap(), None, &[]);
        assert!(v6.host_allowed("[::1]:7000"));
        let local = Access::local();
        assert!(local.host_allowed("127.0.0.1:1234") && local.host_allowed("localhost"));
        assert!(!local.host_allowed("evil.example"));
    }

    #[test]
    fn tokens_compare_whole() {
        let a = Access::local().with_token(Some("s3cret".into()));
        assert!(a.token_ok(Some("s3cret")));
        assert!(!a.token_ok(Some("s3cre")) && !a.token_ok(Some("s3cret!")) && !a.token_ok(None));
    }
}
