//! The derived metrics dashboard files declare (`derive = ["NAME = EXPRESSION"]`), shared by
//! `serve` and `report`: gathered from the files, then added to the opened run where they fit;
//! those that do not fit are kept with the reason, which the dashboard shows in its place.

use perfscape_formats::Opened;
use perfscape_model::Profile;
use std::path::PathBuf;

/// What adding the declared metrics made.
#[derive(Debug, Default)]
pub struct Derived {
    /// Added to the run (`NAME = EXPRESSION` as declared).
    pub derived: Vec<String>,
    /// Not added, and why.
    pub underived: Vec<(String, String)>,
}

/// The derived metrics `files` declare that `given` (the command line's `--derive`) does not
/// already hold, in order, once each.
///
/// # Errors
/// A file that does not exist. (A file that cannot be read as a dashboard declares nothing
/// here; its page says what is wrong.)
pub fn declared(files: &[PathBuf], given: &[String]) -> anyhow::Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for file in files {
        if !file.is_file() {
            anyhow::bail!(
                "--dashboard {}: no such file (a dashboard is a TOML file of panels; see examples/dashboards/)",
                file.display()
            );
        }
        for d in perfscape_server::dashboard::load::derives(file).unwrap_or_default() {
            let known = |x: &String| x.trim() == d.trim();
            if !given.iter().any(known) && !out.iter().any(known) {
                out.push(d);
            }
        }
    }
    Ok(out)
}

/// `opened` with each of `declared` added where it fits its profile (noted in its report and on
/// stderr), and what was made.
pub fn apply(mut opened: Opened, declared: &[String]) -> (Opened, Derived) {
    let mut made = Derived::default();
    for d in declared {
        let (profile, result) = derive_one(opened.profile, d);
        opened.profile = profile;
        match result {
            Ok(note) => {
                eprintln!("perfscape: {note}");
                opened.report.notes.push(note);
                made.derived.push(d.clone());
            }
            Err(e) => {
                eprintln!("perfscape: a dashboard's {e}");
                made.underived.push((d.clone(), e));
            }
        }
    }
    (opened, made)
}

/// `profile` with the derived metric `definition`, and the note to show; or `profile`
/// unchanged and why it cannot be derived for this run.
fn derive_one(profile: Profile, definition: &str) -> (Profile, Result<String, String>) {
    let spec: perfscape_analysis::DerivedMetricSpec = match definition.parse() {
        Ok(s) => s,
        Err(e) => return (profile, Err(e.to_string())),
    };
    // Checked before the profile is handed over, so that an error keeps it.
    if let Err(e) = perfscape_analysis::check_derived(&profile, &spec) {
        return (profile, Err(e.to_string()));
    }
    match perfscape_analysis::derive_metric(profile, &spec) {
        Ok((p, report)) => (p, Ok(report.to_string())),
        Err(e) => unreachable!("the expression reads and the name is free: {e}"),
    }
}
