//! The dashboard file format (TOML; the JSON Schema [`schema`] is committed as
//! `examples/dashboards/dashboard.schema.json`) and the dashboard as the page receives it.
//!
//! A dashboard is a grid of panels; a panel is a data source (an SQL query over the tables of
//! TABLES.md, or a built-in view) and a component drawing it with its parameters. Named
//! components (one panel or a group of panels, with `{{parameters}}`) are defined under
//! `[component.NAME]`, in the file or in files it `include`s, and used with `use = "NAME"`.
//! This is the modern form of the seeds' user-composed visual objects (PG^RT's VOML, TAU's
//! SCIRun dataflow modules, PerfVisS's AVS networks): views declared in a file, not in code.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use ts_rs::TS;

/// Where a dashboard file is wrong: the file, the line and column (from 1) and what was
/// expected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
pub struct SpecError {
    /// The file, as given on the command line or resolved from an `include`.
    pub file: String,
    /// Line, from 1 (0 when the error is not at a place in the file, e.g. it cannot be read).
    pub line: u32,
    /// Column, from 1 (0 as for `line`).
    pub column: u32,
    /// What is wrong and what was expected.
    pub message: String,
}

impl std::fmt::Display for SpecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else {
            write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)
        }
    }
}

/// A component drawing the rows of a panel's SQL query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum Component {
    /// The rows as a table (columns `y`, all when empty).
    Table,
    /// Bars: categories from `x`, one series per `y` column (`horizontal`, `stacked`, `log`).
    Bars,
    /// Lines: x axis from `x`, one line per `y` column, a band from `low` to `high`.
    Lines,
    /// A histogram of the column `value` in `bins` bins.
    Histogram,
    /// Points: x from `x`, y from the first `y` column.
    Scatter,
    /// A pie (or a `donut`): slices named by `x`, sized by `value`.
    Pie,
    /// A heat map: cells at (`x`, first `y`) coloured by `value`.
    Heatmap,
}

impl Component {
    /// What the component needs: (`x`, at least one `y`, `value`).
    fn needs(self) -> (bool, bool, bool) {
        match self {
            Component::Table => (false, false, false),
            Component::Bars | Component::Lines | Component::Scatter => (true, true, false),
            Component::Histogram => (false, false, true),
            Component::Pie => (true, false, true),
            Component::Heatmap => (true, true, true),
        }
    }
}

/// The name a file writes for `x` (its serde name: `"bars"`, `"trend"`, ...).
fn name_of<T: Serialize>(x: &T) -> String {
    serde_json::to_value(x)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// A built-in view shown in a panel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum View {
    /// The ranked event table.
    Ranked,
    /// The heat map of events × threads.
    Heatmap,
    /// The overview of the whole run.
    Overview,
    /// One event across threads.
    Event,
    /// The call tree.
    Calltree,
    /// The 3-D terrain.
    Terrain,
    /// The run's information.
    Runinfo,
    /// The selected event over the samples (min–mean–max across threads).
    Trend,
    /// The Kiviat tube.
    Kiviat,
    /// Threads as points in the space of three events.
    Pointcloud,
    /// The timeline of a trace.
    Timeline,
    /// Runs side by side.
    Compare,
    /// The scaling study of the served runs.
    Scaling,
    /// The user (atomic) events.
    Userevents,
    /// The findings: what is wrong with the run.
    Findings,
    /// The processes and the channels between them.
    Architecture,
    /// The communication matrix (senders × receivers) of a TAU_COMM_MATRIX run.
    Comm,
    /// Time per category (donuts, stacked bars across threads) and POP's efficiency metrics.
    Categories,
    /// A source file with the heat and statistics of its lines (runs with sampled lines).
    Source,
}

impl View {
    /// Its id in the page (the panel id of the view, as a file writes it).
    pub fn id(self) -> String {
        name_of(&self)
    }
}

/// What the tables' queries read: the served runs or the served store (as `POST /api/sql`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export, rename = "DashboardOver")]
pub enum Over {
    /// The served run (`run` 0) and the runs compared with it.
    Runs,
    /// The runs of the store served with `--store DIR`.
    Store,
}

/// A key of the page's selection a click on a datum can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SelectKey {
    /// The selected event (an event id: the `event` column).
    Event,
    /// The selected thread (its label `N.C.T`: the `label` column of `threads`).
    Thread,
    /// The selected sample (a sample number).
    Sample,
    /// The metric shown (a metric id: the `metric` column).
    Metric,
}

/// A panel as a dashboard file writes it (`[[panel]]`), or a named component
/// (`[component.NAME]`): the fields of a panel, plus `use`/`with` (a panel made from a
/// component) or `params`/`panels` (a component's parameters and its group of panels).
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PanelSpec {
    /// Title shown in the panel's head (a built-in view's own title when not given).
    pub title: Option<String>,
    /// A built-in view to show (instead of `sql` and `component`).
    pub view: Option<View>,
    /// An SQL query over the tables (TABLES.md); `$event`, `$thread`, `$sample` and `$metric`
    /// are the page's selection (NULL when nothing is selected), `$run` the run compared with
    /// run 0 (the compare panel's B; NULL when one run is served).
    pub sql: Option<String>,
    /// What the query reads: `runs` (default) or `store`.
    pub over: Option<Over>,
    /// The component drawing the query's rows.
    pub component: Option<Component>,
    /// The column of categories (bars, pie) or of the x axis (lines, scatter, heat map).
    pub x: Option<String>,
    /// The value columns (bars, lines: a series each; scatter, heat map: the y axis; table:
    /// the columns shown, all when empty).
    #[serde(default)]
    pub y: Vec<String>,
    /// Lines: the band's lower edge (e.g. the minimum across threads).
    pub low: Option<String>,
    /// Lines: the band's upper edge (e.g. the maximum across threads).
    pub high: Option<String>,
    /// The value column of a histogram, a pie or a heat map's cells.
    pub value: Option<String>,
    /// A histogram's number of bins (1 to 1000; default 20).
    pub bins: Option<u32>,
    /// Bars: stacked.
    #[serde(default)]
    pub stacked: bool,
    /// Bars: horizontal.
    #[serde(default)]
    pub horizontal: bool,
    /// Pie: a donut.
    #[serde(default)]
    pub donut: bool,
    /// A logarithmic value axis.
    #[serde(default)]
    pub log: bool,
    /// A click on a datum sets these selection keys to the clicked row's value in the named
    /// column, e.g. `{ event = "event" }`.
    #[serde(default)]
    pub select: BTreeMap<SelectKey, String>,
    /// Grid columns the panel spans (1 to the dashboard's `columns`; default 1).
    pub span: Option<u32>,
    /// Height in pixels (120 to 2000; default 300).
    pub height: Option<u32>,
    /// Height in percent of the window's height (10 to 100), instead of `height`: the panel
    /// grows and shrinks with the window.
    pub height_vh: Option<u32>,
    /// A built-in `view` with nothing to show for the run (`compare` without compared runs,
    /// `scaling` without a scaling study, `timeline` without a trace, `comm` without a communication matrix, `trend` and `kiviat`
    /// without samples) is left out, instead of saying so in its place.
    #[serde(default)]
    pub optional: bool,
    /// The panel spans the rest of its row (at least `span` columns): it takes the place of an
    /// `optional` panel left out before it.
    #[serde(default)]
    pub fill: bool,
    /// In a panel: the name of a component to make it from (its fields, then this panel's).
    #[serde(rename = "use")]
    pub use_: Option<String>,
    /// In a panel with `use`: the component's parameters (`{{name}}` in its text).
    #[serde(default)]
    pub with: BTreeMap<String, String>,
    /// In a component: its parameters and their default values.
    #[serde(default)]
    pub params: BTreeMap<String, String>,
    /// In a component: a group of panels (instead of one).
    pub panels: Option<Vec<PanelSpec>>,
}

/// A dashboard file (TOML). Only for the JSON Schema: files are read by [`super::load`], which
/// reads each panel on its own so that one wrong panel does not hide the others.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DashboardFile {
    /// The dashboard's title (shown in the page's dashboard menu; default the file name).
    pub title: Option<String>,
    /// Grid columns (1 to 4; default 2).
    pub columns: Option<u32>,
    /// The columns' relative widths, one per column (each above 0 and at most 100; default
    /// equal widths), e.g. `[1.25, 1.45, 0.7]`.
    #[serde(default)]
    pub widths: Vec<f64>,
    /// Files defining components, relative to this file and inside its directory.
    #[serde(default)]
    pub include: Vec<String>,
    /// Derived metrics, `NAME = EXPRESSION` over the measured metrics (as `--derive`), added
    /// to the served run when `perfscape serve` starts: then metrics like any other in every
    /// view and table.
    #[serde(default)]
    pub derive: Vec<String>,
    /// The panels, in order (left to right, top to bottom).
    #[serde(default)]
    pub panel: Vec<PanelSpec>,
    /// Named components, used by panels with `use = "NAME"`.
    #[serde(default)]
    pub component: BTreeMap<String, PanelSpec>,
}

/// The JSON Schema of dashboard files (draft 2020-12), as committed in
/// `examples/dashboards/dashboard.schema.json` (editors complete and check files with it).
pub fn schema() -> serde_json::Value {
    let mut s = serde_json::to_value(schemars::schema_for!(DashboardFile)).unwrap_or_default();
    if let Some(o) = s.as_object_mut() {
        o.insert(
            "$id".into(),
            "https://perfscape.invalid/dashboard.schema.json".into(),
        );
    }
    s
}

/// One panel of a dashboard: a data source (an SQL query, or a built-in view) and a component
/// with its parameters, as the dashboard file gives them (components and includes resolved).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct DashboardPanel {
    /// Its place in the dashboard, from 0.
    pub index: u32,
    /// Title shown in the panel's head.
    pub title: String,
    /// A built-in view drawn in the panel (`ranked`, `heatmap`, `overview`, `event`, `calltree`, `categories`,
    /// `terrain`, `runinfo`, `trend`, `kiviat`, `pointcloud`, `timeline`, `compare`, `scaling`, `comm`,
    /// `findings`, `architecture`, `userevents`);
    /// `null` for an SQL panel.
    pub view: Option<String>,
    /// The SQL query of an SQL panel (TABLES.md); its placeholders `$event`, `$thread`,
    /// `$sample`, `$metric`, `$run` are bound to the selection by `POST /api/sql`'s `params`.
    pub sql: Option<String>,
    /// What the query reads: the served runs (default) or the served store.
    pub over: Option<Over>,
    /// The component drawing the query's rows (`null` for a built-in view).
    pub component: Option<Component>,
    /// The column of categories (bars, pie labels) or of the x axis (lines, scatter, heat map).
    pub x: Option<String>,
    /// The value columns (bars, lines: one series each; scatter and heat map: the first is the y
    /// axis; table: the columns shown, all when empty).
    pub y: Vec<String>,
    /// Lines: the column of the band's lower edge (e.g. the minimum across threads).
    pub low: Option<String>,
    /// Lines: the column of the band's upper edge (e.g. the maximum across threads).
    pub high: Option<String>,
    /// The value column of a histogram, a pie or a heat map's cells.
    pub value: Option<String>,
    /// A histogram's number of bins.
    pub bins: Option<u32>,
    /// Bars: stacked instead of side by side.
    pub stacked: bool,
    /// Bars: horizontal.
    pub horizontal: bool,
    /// Pie: a donut.
    pub donut: bool,
    /// A logarithmic value axis.
    pub log: bool,
    /// Clicking a row, bar, point or slice sets these keys of the selection (`event`, `thread`,
    /// `sample`, `metric`) to the clicked row's value in the named column.
    #[ts(type = "{ [key in string]?: string }")]
    pub select: BTreeMap<SelectKey, String>,
    /// Grid columns the panel spans (1 to the dashboard's `columns`).
    pub span: u32,
    /// Height in pixels.
    pub height: u32,
    /// Height in percent of the window's height, in place of `height` (`null`: `height`).
    pub height_vh: Option<u32>,
    /// Left out when its built-in view has nothing to show for the run.
    pub optional: bool,
    /// Spans the rest of its row (at least `span` columns).
    pub fill: bool,
    /// Where the panel is defined (file and line), for its error and its tooltip.
    pub source: String,
    /// What is wrong with this panel (`null` when nothing is): the page shows it in the panel's
    /// place, and draws the others.
    pub error: Option<SpecError>,
}

impl DashboardPanel {
    /// A panel that could not be read: its place, where it is defined and why (its title is
    /// left empty for the loader to name it by its place).
    pub fn failed(index: u32, source: String, error: SpecError) -> Self {
        DashboardPanel {
            index,
            title: String::new(),
            view: None,
            sql: None,
            over: None,
            component: None,
            x: None,
            y: Vec::new(),
            low: None,
            high: None,
            value: None,
            bins: None,
            stacked: false,
            horizontal: false,
            donut: false,
            log: false,
            select: BTreeMap::new(),
            span: 1,
            height: 300,
            height_vh: None,
            optional: false,
            fill: false,
            source,
            error: Some(error),
        }
    }

    /// The panel `spec` describes (a resolved one: no `use`), or what is wrong with it (a
    /// message; the caller knows the place).
    pub fn from_spec(index: u32, spec: PanelSpec, columns: u32, source: String) -> Result<Self, String> {
        if spec.params.len() + spec.panels.as_ref().map_or(0, Vec::len) > 0 {
            return Err("`params` and `panels` belong in a `[component.NAME]`, not in a panel".into());
        }
        let title = match (&spec.title, spec.view) {
            (Some(t), _) => t.clone(),
            (None, Some(v)) => v.id(),
            (None, None) => return Err("a panel needs a `title`".into()),
        };
        match (spec.view, &spec.sql, spec.component) {
            (Some(_), None, None) => {}
            (Some(_), _, _) => {
                return Err(
                    "a panel shows either a built-in `view` or an `sql` query with a `component`, not both"
                        .into(),
                );
            }
            (None, Some(q), Some(c)) => {
                if q.trim().is_empty() {
                    return Err("`sql` is empty: expected a query over the tables of TABLES.md".into());
                }
                let (x, y, value) = c.needs();
                let name = name_of(&c);
                if x && spec.x.is_none() {
                    return Err(format!(
                        "component `{name}` needs `x`, the column of its x axis or categories"
                    ));
                }
                if y && spec.y.is_empty() {
                    return Err(format!("component `{name}` needs `y`, a list of value columns"));
                }
                if value && spec.value.is_none() {
                    return Err(format!(
                        "component `{name}` needs `value`, the column of its values"
                    ));
                }
            }
            (None, Some(_), None) => {
                return Err("an `sql` panel needs a `component`: table, bars, lines, histogram, scatter, pie or heatmap".into());
            }
            (None, None, Some(_)) => return Err("a `component` needs an `sql` query to draw".into()),
            (None, None, None) => {
                return Err("a panel needs a data source: `view = \"trend\"` (a built-in view) or `sql = \"SELECT ...\"` with a `component`".into());
            }
        }
        let span = spec.span.unwrap_or(1);
        if span == 0 || span > columns {
            return Err(format!(
                "`span` is {span}: expected 1 to {columns} (the dashboard's columns)"
            ));
        }
        let height = spec.height.unwrap_or(300);
        if !(120..=2000).contains(&height) {
            return Err(format!("`height` is {height}: expected 120 to 2000 pixels"));
        }
        if let Some(vh) = spec.height_vh
            && !(10..=100).contains(&vh)
        {
            return Err(format!(
                "`height_vh` is {vh}: expected 10 to 100 (percent of the window's height)"
            ));
        }
        if spec.optional && spec.view.is_none() {
            return Err("`optional` is for a built-in `view` (left out when it has nothing to show)".into());
        }
        if let Some(b) = spec.bins
            && !(1..=1000).contains(&b)
        {
            return Err(format!("`bins` is {b}: expected 1 to 1000"));
        }
        Ok(DashboardPanel {
            index,
            title,
            view: spec.view.map(View::id),
            sql: spec.sql,
            over: spec.over,
            component: spec.component,
            x: spec.x,
            y: spec.y,
            low: spec.low,
            high: spec.high,
            value: spec.value,
            bins: spec.bins,
            stacked: spec.stacked,
            horizontal: spec.horizontal,
            donut: spec.donut,
            log: spec.log,
            select: spec.select,
            span,
            height,
            height_vh: spec.height_vh,
            optional: spec.optional,
            fill: spec.fill,
            source,
            error: None,
        })
    }
}

/// `GET /api/dashboard/{index}`: a dashboard file as read now.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct Dashboard {
    /// Its place in `serve --dashboard` order, from 0; `null` for the page's layout
    /// (`GET /api/layout`: the built-in views, or `serve --layout FILE`).
    pub index: Option<u32>,
    /// Its title (the file's `title`, else its file name).
    pub title: String,
    /// The file.
    pub path: String,
    /// Increases each time the file or one it includes changes.
    #[ts(type = "number")]
    pub revision: u64,
    /// Grid columns of the layout (1 to 4).
    pub columns: u32,
    /// The columns' relative widths (`columns` of them), or empty for equal widths.
    pub widths: Vec<f64>,
    /// Its panels, in order.
    pub panels: Vec<DashboardPanel>,
    /// What is wrong with the file as a whole (it cannot be read or parsed): `null` when its
    /// panels could be read; a panel's own error is in the panel.
    pub error: Option<SpecError>,
}

/// A served dashboard, as listed in `RunInfo.dashboards`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct DashboardInfo {
    /// Its place in `serve --dashboard` order, from 0: `GET /api/dashboard/{index}`.
    pub index: u32,
    /// Its title.
    pub title: String,
    /// The file.
    pub path: String,
    /// Increases each time the file or one it includes changes.
    #[ts(type = "number")]
    pub revision: u64,
}
