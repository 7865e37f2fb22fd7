//! Dashboard files: every error reported in its place (file, line, what was expected) while
//! the other panels are kept; components with parameters and groups; includes kept inside the
//! dashboard's directory; the committed JSON Schema current and checked against every example;
//! an edit noticed by the watcher; `GET /api/dashboard/{i}` and the SQL placeholders bound to
//! the selection.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::example_state;
use perfscape_server::StateOptions;
use perfscape_server::dashboard::spec::{Dashboard, DashboardPanel};
use perfscape_server::dashboard::{Dashboards, load::load, spec};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

/// The line of the first line of `text` containing `needle` (from 1).
fn line_of(text: &str, needle: &str) -> u32 {
    text.lines().position(|l| l.contains(needle)).unwrap() as u32 + 1
}

fn error(p: &DashboardPanel) -> (u32, String) {
    let e = p
        .error
        .as_ref()
        .unwrap_or_else(|| panic!("panel {} has no error", p.title));
    (e.line, e.message.clone())
}

const GOOD: &str = r#"
[[panel]]
title = "good"
component = "bars"
sql = "SELECT 1 AS a, 2 AS b"
x = "a"
y = ["b"]
"#;

#[test]
fn each_wrong_panel_says_where_and_what_and_the_others_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        r#"title = "errors"
columns = 3
include = ["../outside.toml", "lib.toml", "../../no/such/file.toml"]
{GOOD}
[[panel]]
title = "wrong type"
component = "table"
sql = "SELECT 1"
height = "tall"

[[panel]]
title = "unknown component"
component = "sparkline"
sql = "SELECT 1"

[[panel]]
title = "unknown field"
view = "trend"
colour = "red"

[[panel]]
title = "x missing"
component = "lines"
sql = "SELECT 1 AS a"
y = ["a"]

[[panel]]
title = "too wide"
view = "heatmap"
span = 4

[[panel]]
use = "missing"

[[panel]]
view = "trend"
"#
    );
    std::fs::write(
        dir.path().join("../outside.toml"),
        "[component.x]\nview = \"trend\"\n",
    )
    .ok();
    write(dir.path(), "lib.toml", "[component.unused]\nview = \"event\"\n");
    let file = write(dir.path(), "d.toml", &text);
    let (d, files) = load(&file, Some(0), 7, &[], &[]);
    assert_eq!(
        (d.title.as_str(), d.columns, d.revision, d.error.as_ref()),
        ("errors", 3, 7, None)
    );
    assert_eq!(files.len(), 2, "{files:?}"); // the file and lib.toml; not the one outside
    let p = &d.panels;
    assert_eq!(p.len(), 10, "{p:#?}");
    // The include outside the directory: its own panel, at the include line.
    let (line, m) = error(&p[0]);
    assert_eq!(line, line_of(&text, "include ="));
    assert!(
        m.contains("`../outside.toml` is outside the dashboard's directory"),
        "{m}"
    );
    // A path outside is refused before it is read: nothing tells whether it exists.
    let (line, m) = error(&p[1]);
    assert_eq!(line, line_of(&text, "include ="));
    assert!(
        m.contains("`../../no/such/file.toml` is outside the dashboard's directory"),
        "{m}"
    );
    assert!(p[2].error.is_none() && p[2].title == "good" && p[2].x.as_deref() == Some("a"));
    let (line, m) = error(&p[3]);
    assert_eq!(line, line_of(&text, "\"tall\""));
    assert_eq!(m, "`height`: invalid type: string \"tall\", expected u32");
    let (line, m) = error(&p[4]);
    assert_eq!(line, line_of(&text, "sparkline"));
    assert!(
        m.starts_with("`component`: unknown variant `sparkline`, expected one of `table`, `bars`"),
        "{m}"
    );
    let (line, m) = error(&p[5]);
    assert_eq!(line, line_of(&text, "colour"));
    assert!(m.contains("unknown field `colour`"), "{m}");
    let (_, m) = error(&p[6]);
    assert!(m.contains("component `lines` needs `x`"), "{m}");
    let (_, m) = error(&p[7]);
    assert!(m.contains("`span` is 4: expected 1 to 3"), "{m}");
    let (line, m) = error(&p[8]);
    assert_eq!(line, line_of(&text, "use = \"missing\""));
    assert_eq!(m, "no component `missing` (defined: unused)");
    assert_eq!(
        (p[9].view.as_deref(), p[9].title.as_str(), &p[9].error),
        (Some("trend"), "trend", &None)
    );
    // Every panel knows its place; failed ones are named by it.
    assert!(p.iter().enumerate().all(|(i, x)| x.index == i as u32));
    assert_eq!(p[3].title, "wrong type"); // a failed panel keeps its title, else is named by its place
    assert_eq!(p[8].title, "panel 9 (not drawn: see its error)");
    assert_eq!(
        p[2].source,
        format!("{}:{}", file.display(), line_of(&text, "[[panel]]"))
    );
}

#[test]
fn a_file_that_is_not_toml_or_not_there_is_one_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "d.toml",
        "title = \"x\"\n\n[[panel]\nview = \"trend\"\n",
    );
    let (d, _) = load(&file, Some(0), 1, &[], &[]);
    let e = d.error.unwrap();
    assert_eq!((e.line, e.file.as_str()), (3, file.to_str().unwrap()));
    assert!(d.panels.is_empty());
    let file = write(dir.path(), "c.toml", "columns = 9\n");
    let e = load(&file, Some(0), 1, &[], &[]).0.error.unwrap();
    assert_eq!(
        (e.line, e.message.as_str()),
        (1, "`columns` is 9: expected 1 to 4")
    );
    let (d, _) = load(&dir.path().join("none.toml"), Some(0), 1, &[], &[]);
    let e = d.error.unwrap();
    assert_eq!(e.line, 0);
    assert!(
        e.message.starts_with("cannot read the dashboard file"),
        "{}",
        e.message
    );
    let file = write(dir.path(), "u.toml", "titel = \"x\"\n");
    let e = load(&file, Some(0), 1, &[], &[]).0.error.unwrap();
    assert!(
        e.message.contains("unknown field `titel`") && e.message.contains("`[[panel]]`"),
        "{}",
        e.message
    );
}

#[test]
fn components_take_parameters_and_may_be_groups() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "lib/a.toml",
        r#"include = ["b.toml"]

[component.share]
params = { group = "MPI", limit = "10" }
title = "Share of {{group}}"
component = "pie"
sql = "SELECT name AS x, 1 AS v FROM events WHERE groups LIKE '%{{group}}%' LIMIT {{ limit }}"
x = "x"
value = "v"

[component.pair]
params = { what = "TIME" }
panels = [
  { title = "{{what}} A", view = "trend" },
  { title = "{{what}} B", component = "table", sql = "SELECT '{{what}}' AS m" },
]

[component.typo]
params = { a = "1" }
title = "{{b}}"
view = "event"
"#,
    );
    write(
        dir.path(),
        "lib/b.toml",
        "[component.deep]\nview = \"calltree\"\ntitle = \"from b\"\n",
    );
    let text = r#"include = ["lib/a.toml"]

[[panel]]
use = "share"
with = { group = "I/O" }
span = 2

[[panel]]
use = "pair"

[[panel]]
use = "share"
with = { grup = "MPI" }

[[panel]]
use = "typo"

[[panel]]
use = "deep"
"#;
    let file = write(dir.path(), "d.toml", text);
    let (d, files) = load(&file, Some(0), 1, &[], &[]);
    assert_eq!(files.len(), 3);
    let p = &d.panels;
    assert_eq!(p.len(), 6, "{p:#?}");
    assert_eq!(p[0].title, "Share of I/O");
    assert_eq!(
        p[0].sql.as_deref(),
        Some("SELECT name AS x, 1 AS v FROM events WHERE groups LIKE '%I/O%' LIMIT 10")
    );
    assert_eq!((p[0].span, p[0].error.as_ref()), (2, None)); // the panel's own field wins
    assert!(p[0].source.ends_with("a.toml:3"), "{}", p[0].source);
    assert_eq!(
        (p[1].title.as_str(), p[1].view.as_deref()),
        ("TIME A", Some("trend"))
    );
    assert_eq!(p[2].sql.as_deref(), Some("SELECT 'TIME' AS m"));
    let (line, m) = error(&p[3]);
    assert_eq!(line, line_of(text, "grup"));
    assert_eq!(
        m,
        "component `share` has no parameter `grup` (its parameters: group, limit)"
    );
    let e = p[4].error.as_ref().unwrap();
    assert!(
        e.file.ends_with("a.toml") && e.message.contains("`{{b}}` is not one of its `params`"),
        "{e:?}"
    );
    assert_eq!(
        (p[5].title.as_str(), p[5].view.as_deref()),
        ("from b", Some("calltree"))
    );
}

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/dashboards")
}

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

#[test]
fn the_committed_schema_is_current_and_every_example_follows_it() {
    let committed = examples().join("dashboard.schema.json");
    let current = serde_json::to_string_pretty(&spec::schema()).unwrap() + "\n";
    if std::env::var_os("PERFSCAPE_UPDATE_SCHEMA").is_some() {
        std::fs::write(&committed, &current).unwrap();
    }
    let text = std::fs::read_to_string(&committed).unwrap_or_default();
    assert!(
        text == current,
        "{} is not the schema of this build: run `PERFSCAPE_UPDATE_SCHEMA=1 cargo test -p perfscape-server --test dashboard` and commit it",
        committed.display()
    );
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut files = Vec::new();
    toml_files(&examples(), &mut files);
    assert!(files.len() >= 4, "{files:?}");
    for f in &files {
        let value: serde_json::Value = toml::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let problems: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
        assert!(problems.is_empty(), "{}: {problems:?}", f.display());
        // A dashboard (not a library of components) reads without an error in any panel.
        if f.parent() == Some(examples().as_path()) {
            let applied = perfscape_server::dashboard::load::derives(f).unwrap();
            let (d, _) = load(f, Some(0), 1, &applied, &[]);
            assert!(d.error.is_none(), "{}: {:?}", f.display(), d.error);
            assert!(!d.panels.is_empty());
            for p in &d.panels {
                assert!(p.error.is_none(), "{}: {:?}", f.display(), p.error);
            }
        }
    }
    // The schema is not vacuous: a wrong type, an unknown component and an unknown key fail it.
    for bad in [
        r#"[[panel]]
title = "x"
view = "trend"
height = "tall""#,
        "[[panel]]\ntitle = \"x\"\ncomponent = \"sparkline\"\nsql = \"SELECT 1\"",
        "colour = 1",
    ] {
        let value: serde_json::Value = toml::from_str(bad).unwrap();
        assert!(!validator.is_valid(&value), "{bad}");
    }
}

#[test]
fn an_edit_of_the_file_or_an_include_is_noticed() {
    let dir = tempfile::tempdir().unwrap();
    let lib = write(dir.path(), "lib.toml", "[component.c]\nview = \"event\"\n");
    let file = write(
        dir.path(),
        "d.toml",
        "include = [\"lib.toml\"]\n[[panel]]\nuse = \"c\"\ntitle = \"one\"\n",
    );
    let boards = Dashboards::new(vec![file.clone()], None, Vec::new(), Vec::new());
    let (tx, rx) = std::sync::mpsc::channel();
    boards.watch(move |i, r| tx.send((i, r)).unwrap()).unwrap();
    let first: Dashboard = boards.get(0).unwrap();
    assert_eq!((first.revision, first.panels[0].title.as_str()), (1, "one"));
    let wait = |what: &str| {
        let (i, r) = rx
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| panic!("{what} was not noticed"));
        while rx.recv_timeout(Duration::from_millis(300)).is_ok() {} // one edit, several events
        (i, r)
    };
    // An editor that writes a new file and renames it over the old one.
    let tmp = dir.path().join(".d.toml.swp");
    std::fs::write(
        &tmp,
        "include = [\"lib.toml\"]\n[[panel]]\nuse = \"c\"\ntitle = \"two\"\n",
    )
    .unwrap();
    std::fs::rename(&tmp, &file).unwrap();
    let (i, r) = wait("the rename");
    assert!(i == Some(0) && r > 1);
    let second = boards.get(0).unwrap();
    assert_eq!(second.panels[0].title, "two");
    assert!(second.revision > first.revision);
    // The included file, written in place.
    std::fs::write(&lib, "[component.c]\nview = \"calltree\"\n").unwrap();
    wait("the include's edit");
    let third = boards.get(0).unwrap();
    assert_eq!(third.panels[0].view.as_deref(), Some("calltree"));
    assert!(third.revision > second.revision);
}

#[tokio::test]
async fn the_api_lists_and_answers_dashboards() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "d.toml", &format!("title = \"mine\"\n{GOOD}"));
    let state = example_state(StateOptions {
        dashboards: vec![file.clone()],
        ..Default::default()
    });
    let app = perfscape_server::router(state);
    let (s, _, body) = common::request(&app, "/api/dashboard/0", &[]).await;
    assert_eq!(s, 200);
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (d["title"].as_str(), d["panels"][0]["component"].as_str()),
        (Some("mine"), Some("bars"))
    );
    let (s, _, body) = common::request(&app, "/api/dashboard/1", &[]).await;
    assert_eq!(s, 404, "{}", body);
    let (_, _, body) = common::request(&app, "/api/run", &[]).await;
    let run: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(run["dashboards"][0]["title"], "mine");
    assert_eq!(run["dashboards"][0]["path"], file.display().to_string());
}

#[test]
fn the_readme_example_reads_without_an_error() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let section = readme.split("### Dashboards").nth(1).unwrap();
    let blocks: Vec<&str> = section
        .split("```toml\n")
        .skip(1)
        .take(2)
        .map(|b| b.split("```").next().unwrap())
        .collect();
    assert_eq!(blocks.len(), 2);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "library/mpi.toml", blocks[1]);
    let file = write(dir.path(), "d.toml", blocks[0]);
    // Its derived metric as `serve` adds it when it starts.
    let applied = perfscape_server::dashboard::load::derives(&file).unwrap();
    assert_eq!(applied, ["Off CPU = TIME - CPU_TIME"]);
    let (d, _) = load(&file, Some(0), 1, &applied, &[]);
    assert_eq!((d.title.as_str(), d.error.as_ref()), ("MPI breakdown", None));
    let titles: Vec<&str> = d.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "MPI time by routine (s)",
            "trend",
            "MPI imbalance (max / mean over threads)"
        ]
    );
    assert!(d.panels.iter().all(|p| p.error.is_none()), "{:#?}", d.panels);
}

#[test]
fn derived_metrics_of_a_file_are_read_and_a_new_one_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let text = "derive = [\"CPU share = CPU_TIME / TIME\", \"Off = TIME - CPU_TIME\"]\n[[panel]]\nview = \"trend\"\n";
    let file = write(dir.path(), "d.toml", text);
    let all = perfscape_server::dashboard::load::derives(&file).unwrap();
    assert_eq!(all, ["CPU share = CPU_TIME / TIME", "Off = TIME - CPU_TIME"]);
    let (d, _) = load(&file, Some(0), 1, &all, &[]);
    assert_eq!(d.panels.len(), 1);
    // The server started before the second was written.
    let (d, _) = load(&file, Some(0), 1, &all[..1], &[]);
    let (line, m) = error(&d.panels[0]);
    assert_eq!(line, 1);
    assert!(
        m.contains("`Off = TIME - CPU_TIME` is not computed") && m.contains("restart"),
        "{m}"
    );
    assert!(d.panels[1].error.is_none());
    // It does not fit the run: the reason.
    let why = [(
        all[1].clone(),
        "derived metric `Off`: no metric `CPU_TIME`".to_string(),
    )];
    let (d, _) = load(&file, Some(0), 1, &all[..1], &why);
    assert_eq!(
        error(&d.panels[0]).1,
        "not computed for this run: derived metric `Off`: no metric `CPU_TIME`"
    );
}
