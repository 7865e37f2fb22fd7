//! Reading a dashboard file: its panels one by one (a wrong panel is reported in its place,
//! the others are kept), its `include`d component libraries (relative to the including file,
//! never outside the dashboard file's directory), and panels made from named components
//! (`use = "NAME"`, `with = { param = "value" }`, `{{param}}` replaced in the component's text).

use super::spec::{Dashboard, DashboardPanel, PanelSpec, SpecError};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Includes nest at most this deep (a library may include another).
const MAX_INCLUDE_DEPTH: usize = 8;

/// A file as read first: the panels and components kept as TOML values with their places.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    title: Option<String>,
    columns: Option<Spanned<u32>>,
    #[serde(default)]
    widths: Option<Spanned<Vec<f64>>>,
    #[serde(default)]
    include: Vec<Spanned<String>>,
    #[serde(default)]
    derive: Vec<Spanned<String>>,
    #[serde(default)]
    panel: Vec<Spanned<toml::Value>>,
    #[serde(default)]
    component: BTreeMap<String, Spanned<toml::Value>>,
}

/// A file's text, kept to turn byte offsets into lines.
struct Source {
    file: String,
    text: String,
}

impl Source {
    /// Line and column (from 1, in characters) of byte `offset`.
    fn position(&self, offset: usize) -> (u32, u32) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line as u32, column as u32)
    }

    fn error(&self, offset: usize, message: impl Into<String>) -> SpecError {
        let (line, column) = self.position(offset);
        SpecError {
            file: self.file.clone(),
            line,
            column,
            message: message.into(),
        }
    }

    /// `file:line` of byte `offset`.
    fn place(&self, offset: usize) -> String {
        format!("{}:{}", self.file, self.position(offset).0)
    }

    /// The offset of the line where `key = ...` is written in the table at `span` (the start
    /// of the span when it is not found): where a field's error is shown. The span of a
    /// `[[panel]]` or `[component.NAME]` table is its header; its keys follow until the next
    /// header.
    fn key_offset(&self, span: &std::ops::Range<usize>, key: &str) -> usize {
        let start = span.start.min(self.text.len());
        let header = self.text[start..].starts_with('[');
        let end = if header {
            self.text.len()
        } else {
            span.end.min(self.text.len())
        };
        let mut offset = start;
        for (i, line) in self.text[start..end].split_inclusive('\n').enumerate() {
            let trimmed = line.trim_start();
            if header && i > 0 && trimmed.starts_with('[') {
                break;
            }
            if !key.is_empty()
                && let Some(rest) = trimmed.strip_prefix(key)
                && rest.trim_start().starts_with('=')
            {
                return offset + (line.len() - trimmed.len());
            }
            offset += line.len();
        }
        span.start
    }
}

/// A named component and where it is defined.
struct ComponentDef {
    source: usize,
    span: std::ops::Range<usize>,
    value: toml::Value,
}

/// What reading a dashboard gathers: the sources read, the components, the failed includes.
#[derive(Default)]
struct Reader {
    /// The dashboard file's directory, links resolved.
    root: PathBuf,
    /// The same as written (absolute, `..` resolved by its text): what includes are checked
    /// against before they are read.
    lexical_root: PathBuf,
    sources: Vec<Source>,
    components: BTreeMap<String, ComponentDef>,
    /// Errors that belong to no panel (an include): shown as panels of their own.
    errors: Vec<SpecError>,
    /// Every file read (the dashboard and its includes), for the watcher.
    files: Vec<PathBuf>,
}

/// The derived metrics the dashboard file at `path` declares (`derive = ["NAME = EXPRESSION"]`),
/// as written: `perfscape serve` adds them to the run when it starts.
///
/// # Errors
/// The file cannot be read or is not a dashboard file (file, line, what was expected).
pub fn derives(path: &Path) -> Result<Vec<String>, SpecError> {
    let mut reader = Reader::default();
    let raw = reader.read(path, path.display().to_string())?;
    Ok(raw.derive.into_iter().map(Spanned::into_inner).collect())
}

/// The page's built-in layout, a dashboard file shipped in the binary: every built-in view is a
/// panel of it (`GET /api/layout` when `serve --layout FILE` does not replace it).
pub const BUILTIN_LAYOUT: &str = include_str!("builtin.toml");

/// The name the built-in layout's errors and panels give as their file.
pub const BUILTIN_NAME: &str = "(built-in) dashboard/builtin.toml";

/// The built-in layout ([`BUILTIN_LAYOUT`]) read as `GET /api/layout` answers it (index
/// `null`, revision 1).
pub fn builtin() -> Dashboard {
    let mut dashboard = empty(None, BUILTIN_NAME.into(), "Built-in views".into(), 1);
    let mut reader = Reader::default();
    match reader.parse(BUILTIN_NAME.into(), BUILTIN_LAYOUT.into()) {
        Ok(raw) => {
            finish(reader, raw, &mut dashboard, None, &[], &[]);
        }
        Err(e) => dashboard.error = Some(e),
    }
    dashboard
}

/// A dashboard with nothing read yet.
fn empty(index: Option<u32>, path: String, title: String, revision: u64) -> Dashboard {
    Dashboard {
        index,
        title,
        path,
        revision,
        columns: 2,
        widths: Vec::new(),
        panels: Vec::new(),
        error: None,
    }
}

/// The dashboard file at `path` read now, as `GET /api/dashboard/{index}` answers it (and
/// `GET /api/layout`, index `None`, for `serve --layout FILE`), and every file it read (itself
/// and its includes). Never fails: what is wrong is in the answer.
///
/// `applied`: the derived metrics of the served run; one the file declares that is not among
/// them is a panel of its own saying why: its reason in `underived` (it does not fit the run),
/// else it was added since the server started.
pub fn load(
    path: &Path,
    index: Option<u32>,
    revision: u64,
    applied: &[String],
    underived: &[(String, String)],
) -> (Dashboard, Vec<PathBuf>) {
    let file = path.display().to_string();
    let fallback_title = path
        .file_stem()
        .map_or(file.clone(), |s| s.to_string_lossy().into_owned());
    let mut dashboard = empty(index, file.clone(), fallback_title, revision);
    let root = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .canonicalize()
        .unwrap_or_default();
    let lexical_root = std::path::absolute(path)
        .map(|p| normalize(&p))
        .ok()
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_default();
    let mut reader = Reader {
        root,
        lexical_root,
        ..Default::default()
    };
    reader.files.push(path.to_path_buf());
    match reader.read(path, file) {
        Ok(raw) => {
            let files = finish(reader, raw, &mut dashboard, Some(path), applied, underived);
            (dashboard, files)
        }
        Err(e) => {
            dashboard.error = Some(e);
            (dashboard, reader.files)
        }
    }
}

/// Fills `dashboard` from its file `raw` (source 0 of `reader`): its layout, components,
/// includes (relative to `path`; none without one), derived metrics and panels. Returns the
/// files read.
fn finish(
    mut reader: Reader,
    raw: RawFile,
    dashboard: &mut Dashboard,
    path: Option<&Path>,
    applied: &[String],
    underived: &[(String, String)],
) -> Vec<PathBuf> {
    if let Some(t) = raw.title {
        dashboard.title = t;
    }
    if let Some(c) = &raw.columns {
        if !(1..=4).contains(c.get_ref()) {
            let e = reader.sources[0].error(
                c.span().start,
                format!("`columns` is {}: expected 1 to 4", c.get_ref()),
            );
            dashboard.error = Some(e);
            return reader.files;
        }
        dashboard.columns = *c.get_ref();
    }
    if let Some(w) = &raw.widths {
        let bad = if w.get_ref().len() != dashboard.columns as usize {
            Some(format!(
                "`widths` has {} values: expected one per column ({})",
                w.get_ref().len(),
                dashboard.columns
            ))
        } else {
            w.get_ref()
                .iter()
                .find(|x| !(x.is_finite() && **x > 0.0 && **x <= 100.0))
                .map(|x| format!("`widths` has {x}: expected relative widths above 0 and at most 100"))
        };
        if let Some(message) = bad {
            dashboard.error = Some(reader.sources[0].error(w.span().start, message));
            return reader.files;
        }
        dashboard.widths = w.get_ref().clone();
    }
    reader.components(0, raw.component);
    match path {
        Some(path) => reader.includes(0, &raw.include, path, 1),
        None => {
            if let Some(inc) = raw.include.first() {
                let e = reader.sources[0].error(inc.span().start, "the built-in layout includes no file");
                reader.errors.push(e);
            }
        }
    }
    for d in &raw.derive {
        let same = |a: &str| a.trim() == d.get_ref().trim();
        if !applied.iter().any(|a| same(a)) {
            let message = match underived.iter().find(|(a, _)| same(a)) {
                Some((_, why)) => format!("not computed for this run: {why}"),
                None => format!(
                    "derived metric `{}` is not computed: derived metrics are added when `perfscape serve` starts (restart it)",
                    d.get_ref()
                ),
            };
            let e = reader.sources[0].error(d.span().start, message);
            reader.errors.push(e);
        }
    }
    let mut panels = Vec::new();
    for e in std::mem::take(&mut reader.errors) {
        let source = format!("{}:{}", e.file, e.line);
        panels.push(DashboardPanel::failed(0, source, e));
    }
    for p in raw.panel {
        reader.panel(p, dashboard.columns, &mut panels);
    }
    for (i, p) in panels.iter_mut().enumerate() {
        p.index = i as u32;
        if p.title.is_empty() {
            p.title = format!("panel {} (not drawn: see its error)", i + 1);
        }
    }
    dashboard.panels = panels;
    reader.files
}

impl Reader {
    /// Reads and parses one file; its source is kept (index `self.sources.len()` before).
    fn read(&mut self, path: &Path, file: String) -> Result<RawFile, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| SpecError {
            file: file.clone(),
            line: 0,
            column: 0,
            message: format!("cannot read the dashboard file: {e}"),
        })?;
        self.parse(file, text)
    }

    /// Parses the text of file `file`; its source is kept (index `self.sources.len()` before).
    fn parse(&mut self, file: String, text: String) -> Result<RawFile, SpecError> {
        self.sources.push(Source { file, text });
        let source = self.sources.last().unwrap_or_else(|| unreachable!());
        toml::from_str::<RawFile>(&source.text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            let message = e.message().trim().to_string();
            let message = if message.contains("unknown field") {
                format!("{message} (a dashboard file has `title`, `columns`, `widths`, `include`, `derive`, `[[panel]]` and `[component.NAME]`)")
            } else {
                message
            };
            source.error(offset, message)
        })
    }

    /// Keeps the components of source `s` (a later definition of a name replaces an earlier).
    fn components(&mut self, s: usize, defs: BTreeMap<String, Spanned<toml::Value>>) {
        for (name, def) in defs {
            let span = def.span();
            self.components.insert(
                name,
                ComponentDef {
                    source: s,
                    span,
                    value: def.into_inner(),
                },
            );
        }
    }

    /// Reads the files source `s` includes (paths relative to `from`), at nesting `depth`.
    fn includes(&mut self, s: usize, includes: &[Spanned<String>], from: &Path, depth: usize) {
        for inc in includes {
            let at = inc.span().start;
            let fail = |this: &mut Self, message: String| {
                let e = this.sources[s].error(at, message);
                this.errors.push(e);
            };
            if depth > MAX_INCLUDE_DEPTH {
                fail(
                    self,
                    format!("`include` nested more than {MAX_INCLUDE_DEPTH} deep"),
                );
                continue;
            }
            let dir = from.parent().unwrap_or(Path::new("."));
            let path = dir.join(inc.get_ref());
            // Refused by its text before anything outside is touched (so nothing tells whether
            // a file outside exists), then again once links are resolved.
            let outside = |this: &mut Self| {
                let message = format!(
                    "include `{}` is outside the dashboard's directory {}: includes must stay inside it",
                    inc.get_ref(),
                    this.root.display()
                );
                fail(this, message);
            };
            let lexical = std::path::absolute(&path).map(|p| normalize(&p));
            if !lexical.is_ok_and(|p| p.starts_with(&self.lexical_root)) {
                outside(self);
                continue;
            }
            let resolved = match path.canonicalize() {
                Ok(p) => p,
                Err(e) => {
                    fail(
                        self,
                        format!("include `{}`: cannot read {}: {e}", inc.get_ref(), path.display()),
                    );
                    continue;
                }
            };
            if !resolved.starts_with(&self.root) {
                outside(self);
                continue;
            }
            if self
                .files
                .iter()
                .any(|f| f.canonicalize().is_ok_and(|c| c == resolved))
            {
                continue; // already read (a cycle, or included twice)
            }
            self.files.push(path.clone());
            let raw = match self.read(&path, path.display().to_string()) {
                Ok(r) => r,
                Err(e) => {
                    self.errors.push(e);
                    continue;
                }
            };
            let here = self.sources.len() - 1;
            if let Some(p) = raw.panel.first() {
                let e = self.sources[here].error(
                    p.span().start,
                    "a file given in `include` defines components (`[component.NAME]`), not panels",
                );
                self.errors.push(e);
            }
            self.components(here, raw.component);
            self.includes(here, &raw.include, &path, depth + 1);
        }
    }

    /// The panels one `[[panel]]` entry of the dashboard file makes (several for a component
    /// that is a group), or its error in its place.
    fn panel(&mut self, entry: Spanned<toml::Value>, columns: u32, out: &mut Vec<DashboardPanel>) {
        let span = entry.span();
        let main = &self.sources[0];
        let source = main.place(span.start);
        // A failed panel keeps the title it was given, when it has one.
        let title = entry
            .get_ref()
            .get("title")
            .and_then(|t| t.as_str())
            .unwrap_or("")
            .to_string();
        let failed = |e: SpecError| DashboardPanel {
            title: title.clone(),
            ..DashboardPanel::failed(0, source.clone(), e)
        };
        let spec: PanelSpec = match deserialize(entry.get_ref().clone()) {
            Ok(s) => s,
            Err((key, message)) => {
                let offset = main.key_offset(&span, &key);
                out.push(failed(main.error(offset, message)));
                return;
            }
        };
        let Some(name) = spec.use_.clone() else {
            match DashboardPanel::from_spec(0, spec, columns, source.clone()) {
                Ok(p) => out.push(p),
                Err(message) => out.push(failed(main.error(span.start, message))),
            }
            return;
        };
        match self.expand(&name, entry.into_inner(), &span, columns) {
            Ok(panels) => out.extend(panels),
            Err(e) => out.push(failed(e)),
        }
    }

    /// The panels component `name` makes for a panel entry `entry` (its `with`, and fields that
    /// override the component's).
    fn expand(
        &self,
        name: &str,
        entry: toml::Value,
        span: &std::ops::Range<usize>,
        columns: u32,
    ) -> Result<Vec<DashboardPanel>, SpecError> {
        let main = &self.sources[0];
        let here = |key: &str, message: String| main.error(main.key_offset(span, key), message);
        let Some(def) = self.components.get(name) else {
            let known: Vec<&str> = self.components.keys().map(String::as_str).collect();
            let known = if known.is_empty() {
                "none is defined here or in an `include`".to_string()
            } else {
                format!("defined: {}", known.join(", "))
            };
            return Err(here("use", format!("no component `{name}` ({known})")));
        };
        let src = &self.sources[def.source];
        let at = |key: &str| src.error(src.key_offset(&def.span, key), "");
        let toml::Value::Table(mut body) = def.value.clone() else {
            return Err(src.error(def.span.start, format!("component `{name}` must be a table")));
        };
        let mut params: BTreeMap<String, String> = BTreeMap::new();
        if let Some(p) = body.remove("params") {
            params = deserialize::<BTreeMap<String, String>>(p).map_err(|(_, m)| SpecError {
                message: format!("component `{name}`: `params`: {m}"),
                ..at("params")
            })?;
        }
        let toml::Value::Table(mut own) = entry else {
            return Err(here("", "a panel must be a table".into()));
        };
        own.remove("use");
        if let Some(w) = own.remove("with") {
            let with: BTreeMap<String, String> =
                deserialize(w).map_err(|(_, m)| here("with", format!("`with`: {m}")))?;
            for (k, v) in with {
                if !params.contains_key(&k) {
                    let known: Vec<&str> = params.keys().map(String::as_str).collect();
                    return Err(here(
                        "with",
                        format!(
                            "component `{name}` has no parameter `{k}` (its parameters: {})",
                            known.join(", ")
                        ),
                    ));
                }
                params.insert(k, v);
            }
        }
        let substituted = substitute(toml::Value::Table(body), &params).map_err(|p| SpecError {
            message: format!("component `{name}`: `{{{{{p}}}}}` is not one of its `params`"),
            ..src.error(def.span.start, "")
        })?;
        let toml::Value::Table(mut body) = substituted else {
            unreachable!("substitution keeps tables")
        };
        let group = body.remove("panels");
        let place = src.place(def.span.start);
        let one = |table: toml::Table, key_span: &str| -> Result<DashboardPanel, SpecError> {
            let spec: PanelSpec =
                deserialize(toml::Value::Table(table)).map_err(|(key, message)| SpecError {
                    message: format!("component `{name}`: {message}"),
                    ..at(if key.is_empty() { key_span } else { &key })
                })?;
            if spec.use_.is_some() {
                return Err(SpecError {
                    message: format!("component `{name}`: a component cannot `use` another"),
                    ..at("use")
                });
            }
            DashboardPanel::from_spec(0, spec, columns, place.clone()).map_err(|m| SpecError {
                message: format!("component `{name}`: {m}"),
                ..src.error(def.span.start, "")
            })
        };
        match group {
            None => {
                for (k, v) in own {
                    body.insert(k, v);
                }
                Ok(vec![one(body, "")?])
            }
            Some(toml::Value::Array(items)) => {
                if !body.is_empty() {
                    let k = body.keys().next().cloned().unwrap_or_default();
                    return Err(SpecError {
                        message: format!(
                            "component `{name}` has `panels`, so its panel fields go in each of them (found `{k}`)"
                        ),
                        ..at(&k)
                    });
                }
                items
                    .into_iter()
                    .map(|item| match item {
                        toml::Value::Table(t) => one(t, "panels"),
                        _ => Err(SpecError {
                            message: format!("component `{name}`: `panels` must be a list of tables"),
                            ..at("panels")
                        }),
                    })
                    .collect()
            }
            Some(_) => Err(SpecError {
                message: format!("component `{name}`: `panels` must be a list of tables"),
                ..at("panels")
            }),
        }
    }
}

/// `path` with `.` and `..` resolved by its text (no file system access).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// `value` as a `T`, or the first key of the path to what is wrong and the message.
fn deserialize<T: serde::de::DeserializeOwned>(value: toml::Value) -> Result<T, (String, String)> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let key = path
            .split(['.', '['])
            .next()
            .filter(|k| *k != "?")
            .unwrap_or("")
            .to_string();
        let inner = e.into_inner().to_string();
        // toml's messages end with `in `key``, which the path already says.
        let inner = inner.lines().next().unwrap_or("").trim().to_string();
        let message = if path == "." || path.is_empty() {
            inner
        } else {
            format!("`{path}`: {inner}")
        };
        (key, message)
    })
}

/// `value` with every `{{param}}` in its strings replaced; the name of an unknown parameter as
/// the error.
fn substitute(value: toml::Value, params: &BTreeMap<String, String>) -> Result<toml::Value, String> {
    Ok(match value {
        toml::Value::String(s) => {
            let mut out = String::with_capacity(s.len());
            let mut rest = s.as_str();
            while let Some(start) = rest.find("{{") {
                out.push_str(&rest[..start]);
                let after = &rest[start + 2..];
                let Some(end) = after.find("}}") else {
                    out.push_str(&rest[start..]);
                    rest = "";
                    break;
                };
                let name = after[..end].trim();
                out.push_str(params.get(name).ok_or_else(|| name.to_string())?);
                rest = &after[end + 2..];
            }
            out.push_str(rest);
            toml::Value::String(out)
        }
        toml::Value::Array(a) => toml::Value::Array(
            a.into_iter()
                .map(|v| substitute(v, params))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Table(t) => toml::Value::Table(
            t.into_iter()
                .map(|(k, v)| Ok((k, substitute(v, params)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other,
    })
}
