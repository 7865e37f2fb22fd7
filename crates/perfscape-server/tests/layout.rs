//! The page's layout as a dashboard file: the built-in one shipped in the binary shows every
//! built-in view and follows the committed JSON Schema; `serve --layout FILE` replaces it and is
//! watched as the dashboards are; `widths`, `height_vh`, `optional` and `fill` are checked, each
//! error in its place.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::example_state;
use perfscape_server::StateOptions;
use perfscape_server::dashboard::load::{BUILTIN_LAYOUT, builtin, load};
use perfscape_server::dashboard::{Dashboards, spec};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The names of the built-in views, as the JSON Schema of dashboard files lists them (the
/// `View` enum): a view added to the enum must be added to the built-in layout.
fn views_of_the_schema() -> BTreeSet<String> {
    let schema = spec::schema();
    let view = &schema["$defs"]["View"];
    let names: BTreeSet<String> = view["oneOf"]
        .as_array()
        .expect("View is a oneOf of documented names")
        .iter()
        .flat_map(|v| {
            v["const"].as_str().map(String::from).into_iter().chain(
                v["enum"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str().map(String::from)),
            )
        })
        .collect();
    assert!(names.len() >= 13, "{view}");
    names
}

#[test]
fn the_built_in_layout_is_a_dashboard_file_of_every_view() {
    let d = builtin();
    assert_eq!(d.index, None);
    assert!(d.error.is_none(), "{:?}", d.error);
    assert_eq!((d.title.as_str(), d.columns), ("Built-in views", 3));
    assert_eq!(d.widths, vec![1.25, 1.45, 0.7]);
    for p in &d.panels {
        assert!(p.error.is_none(), "{}: {:?}", p.title, p.error);
        assert!(p.height_vh.is_some(), "{}: heights follow the window", p.title);
    }
    let shown: Vec<String> = d.panels.iter().filter_map(|p| p.view.clone()).collect();
    let unique: BTreeSet<String> = shown.iter().cloned().collect();
    assert_eq!(unique.len(), shown.len(), "each view once: {shown:?}");
    assert_eq!(
        unique,
        views_of_the_schema(),
        "every built-in view is a panel of the layout"
    );
    // What only some runs have is left out of the others.
    let optional: BTreeSet<&str> = d
        .panels
        .iter()
        .filter(|p| p.optional)
        .filter_map(|p| p.view.as_deref())
        .collect();
    assert_eq!(
        optional,
        BTreeSet::from([
            "architecture",
            "comm",
            "compare",
            "kiviat",
            "scaling",
            "source",
            "timeline",
            "trend",
            "userevents"
        ])
    );
    // The committed schema accepts the file as written.
    let schema: serde_json::Value = serde_json::to_value(spec::schema()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let value: serde_json::Value = toml::from_str(BUILTIN_LAYOUT).unwrap();
    let problems: Vec<String> = validator.iter_errors(&value).map(|e| e.to_string()).collect();
    assert!(problems.is_empty(), "{problems:?}");
}

#[test]
fn layout_keys_are_checked_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let wrong_widths = write(
        dir.path(),
        "w.toml",
        "columns = 3\nwidths = [1, 2]\n[[panel]]\nview = \"ranked\"\n",
    );
    let e = load(&wrong_widths, Some(0), 1, &[], &[]).0.error.unwrap();
    assert_eq!(e.line, 2);
    assert!(
        e.message
            .contains("`widths` has 2 values: expected one per column (3)"),
        "{}",
        e.message
    );
    let zero = write(dir.path(), "z.toml", "columns = 2\nwidths = [1, 0]\n");
    let e = load(&zero, Some(0), 1, &[], &[]).0.error.unwrap();
    assert!(e.message.contains("above 0"), "{}", e.message);
    let text = "[[panel]]\nview = \"ranked\"\nheight_vh = 5\n\n[[panel]]\ntitle = \"q\"\nsql = \"SELECT 1 AS a\"\ncomponent = \"table\"\noptional = true\n\n[[panel]]\nview = \"trend\"\noptional = true\nfill = true\nheight_vh = 40\n";
    let file = write(dir.path(), "p.toml", text);
    let (d, _) = load(&file, Some(0), 1, &[], &[]);
    assert!(d.error.is_none());
    let msg = |i: usize| d.panels[i].error.as_ref().map(|e| (e.line, e.message.clone()));
    let (line, m) = msg(0).unwrap();
    assert_eq!(line, 1);
    assert!(m.contains("`height_vh` is 5: expected 10 to 100"), "{m}");
    let (line, m) = msg(1).unwrap();
    assert_eq!(line, 5);
    assert!(m.contains("`optional` is for a built-in `view`"), "{m}");
    assert_eq!(msg(2), None);
    let p = &d.panels[2];
    assert_eq!((p.optional, p.fill, p.height_vh), (true, true, Some(40)));
}

#[tokio::test]
async fn the_api_answers_the_built_in_layout_or_the_file_of_layout() {
    let app = perfscape_server::router(example_state(StateOptions::default()));
    let (s, _, body) = common::request(&app, "/api/layout", &[]).await;
    assert_eq!(s, 200, "{body}");
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        (d["index"].is_null(), d["title"].as_str()),
        (true, Some("Built-in views"))
    );
    let (_, _, body) = common::request(&app, "/api/run", &[]).await;
    let run: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(run["layout"].is_null() && run["filter"].is_null(), "{run}");

    let dir = tempfile::tempdir().unwrap();
    let mine = write(
        dir.path(),
        "mine.toml",
        "title = \"my layout\"\ncolumns = 1\n[[panel]]\nview = \"ranked\"\n",
    );
    let app = perfscape_server::router(example_state(StateOptions {
        layout: Some(mine.clone()),
        ..Default::default()
    }));
    let (_, _, body) = common::request(&app, "/api/layout", &[]).await;
    let d: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(d["title"], "my layout");
    assert_eq!(d["panels"].as_array().unwrap().len(), 1);
    let (_, _, body) = common::request(&app, "/api/run", &[]).await;
    let run: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(run["layout"], mine.display().to_string());
    // The layout is not one of the dashboards of the menu.
    assert_eq!(run["dashboards"].as_array().unwrap().len(), 0);
    let (s, _, _) = common::request(&app, "/api/dashboard/0", &[]).await;
    assert_eq!(s, 404);
}

#[test]
fn an_edit_of_the_layout_file_is_noticed_as_the_layout() {
    let dir = tempfile::tempdir().unwrap();
    let board = write(dir.path(), "board.toml", "[[panel]]\nview = \"event\"\n");
    let mine = write(
        dir.path(),
        "mine.toml",
        "title = \"one\"\n[[panel]]\nview = \"ranked\"\n",
    );
    let boards = Dashboards::new(vec![board], Some(mine.clone()), Vec::new(), Vec::new());
    assert_eq!((boards.len(), boards.layout_path()), (1, Some(mine.as_path())));
    assert!(boards.get(1).is_none(), "the layout is not dashboard 1");
    let (tx, rx) = std::sync::mpsc::channel();
    boards.watch(move |i, r| tx.send((i, r)).unwrap()).unwrap();
    assert_eq!(boards.layout().title, "one");
    std::fs::write(&mine, "title = \"two\"\n[[panel]]\nview = \"ranked\"\n").unwrap();
    let (i, r) = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("the edit was noticed");
    assert_eq!(i, None, "the layout's event has no index");
    assert!(r > 1);
    let d = boards.layout();
    assert_eq!((d.title.as_str(), d.index), ("two", None));
}
