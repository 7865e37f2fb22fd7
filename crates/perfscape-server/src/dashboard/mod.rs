//! User dashboards (`perfscape serve RUN --dashboard FILE`): files of panels the page draws
//! in place of its built-in layout, read again on every request and watched, so that an edit
//! reaches every open page within a second, without restarting the server or interrupting a
//! live run. The built-in layout is itself a dashboard file (`builtin.toml`, shipped in the
//! binary, [`load::builtin`]); `serve --layout FILE` replaces it.
//!
//! - [`spec`]: the file format, its JSON Schema, and the answers (`Dashboard`,
//!   `DashboardPanel`, `SpecError`).
//! - [`load`](load::load): reading a file with its includes and components; what is wrong is
//!   reported in place (the file, or the panel), never as a failed request.
//! - [`Dashboards`]: the served files, their revisions and the watcher (notify) that bumps a
//!   file's revision and tells the pages (`{"event": "dashboard", "index": i, "revision": r}` on
//!   the WebSocket; `index` is `null` for the layout file).

pub mod load;
pub mod spec;

use notify::Watcher;
use spec::{Dashboard, DashboardInfo};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One served dashboard file.
struct Entry {
    path: PathBuf,
    revision: AtomicU64,
    /// The files it read last time (itself and its includes), canonical where possible.
    files: Mutex<Vec<PathBuf>>,
}

/// The dashboard files a server serves, in `--dashboard` order, and the page's layout (the
/// built-in one, or `--layout FILE`).
#[derive(Default)]
pub struct Dashboards {
    /// True when the last entry is `--layout FILE` (not a dashboard of the menu).
    has_layout: bool,
    /// The derived metrics of the served run (`--derive` and the files' `derive`).
    applied: Vec<String>,
    /// Those the files declare that could not be computed, and why.
    underived: Vec<(String, String)>,
    /// Shared with the watcher's callback.
    entries: Arc<Vec<Entry>>,
    /// The file watcher, once started (dropped with the server's state).
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
    /// Directories watched so far.
    watched: Mutex<BTreeSet<PathBuf>>,
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

impl Dashboards {
    /// The files `paths` (not read yet: each request reads its file afresh) and the page's
    /// layout (`layout`, or the built-in one when `None`), served with a run whose derived
    /// metrics are `applied` (`NAME = EXPRESSION`, as given); `underived`: those the files
    /// declare that could not be computed, with why.
    pub fn new(
        paths: Vec<PathBuf>,
        layout: Option<PathBuf>,
        applied: Vec<String>,
        underived: Vec<(String, String)>,
    ) -> Self {
        Dashboards {
            has_layout: layout.is_some(),
            applied,
            underived,
            entries: Arc::new(
                paths
                    .into_iter()
                    .chain(layout)
                    .map(|path| Entry {
                        files: Mutex::new(vec![canonical(&path)]),
                        path,
                        revision: AtomicU64::new(1),
                    })
                    .collect(),
            ),
            ..Default::default()
        }
    }

    /// True when no dashboard is served (the layout aside).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of dashboards served (the layout aside).
    pub fn len(&self) -> usize {
        self.entries.len() - usize::from(self.has_layout)
    }

    /// The file of `serve --layout FILE`, when the page's layout is not the built-in one.
    pub fn layout_path(&self) -> Option<&Path> {
        self.has_layout
            .then(|| self.entries.last().map(|e| e.path.as_path()))
            .flatten()
    }

    /// True when there are files to watch (dashboards or a layout file).
    pub fn has_files(&self) -> bool {
        !self.entries.is_empty()
    }

    /// The dashboard `index` read now (None past the last).
    pub fn get(&self, index: u32) -> Option<Dashboard> {
        if index as usize >= self.len() {
            return None;
        }
        self.read(index as usize)
    }

    /// The page's layout: the file of `serve --layout FILE` read now, else the built-in one
    /// ([`load::BUILTIN_LAYOUT`]).
    pub fn layout(&self) -> Dashboard {
        match self.has_layout {
            true => self.read(self.entries.len() - 1).unwrap_or_else(load::builtin),
            false => load::builtin(),
        }
    }

    /// Entry `i` read now (the layout's index is `None`).
    fn read(&self, i: usize) -> Option<Dashboard> {
        let entry = self.entries.get(i)?;
        let index = (i < self.len()).then_some(i as u32);
        let (dashboard, files) = load::load(
            &entry.path,
            index,
            entry.revision.load(Ordering::SeqCst),
            &self.applied,
            &self.underived,
        );
        let files: Vec<PathBuf> = files.iter().map(|f| canonical(f)).collect();
        self.watch_dirs(&files);
        if let Ok(mut f) = entry.files.lock() {
            *f = files;
        }
        Some(dashboard)
    }

    /// Every served dashboard: its place, title, file and revision (each file read now).
    pub fn list(&self) -> Vec<DashboardInfo> {
        (0..self.entries.len() as u32)
            .filter_map(|i| self.get(i).map(|d| (i, d)))
            .map(|(index, d)| DashboardInfo {
                index,
                title: d.title,
                path: d.path,
                revision: d.revision,
            })
            .collect()
    }

    /// Starts watching the files: on a change of a dashboard file or a file it includes, its
    /// revision goes up and `changed(index, revision)` is called (on the watcher's thread);
    /// `index` is `None` for the layout file.
    ///
    /// # Errors
    /// The watcher could not be started (the system's limit of watches, ...).
    pub fn watch(&self, changed: impl Fn(Option<u32>, u64) + Send + 'static) -> notify::Result<()> {
        let entries = Arc::clone(&self.entries);
        let dashboards = self.len();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            if matches!(event.kind, notify::EventKind::Access(_)) {
                return;
            }
            for (i, entry) in entries.iter().enumerate() {
                let hit = entry.files.lock().is_ok_and(|files| {
                    event.paths.iter().any(|p| {
                        let c = canonical(p);
                        files
                            .iter()
                            .any(|f| *f == c || (f.file_name() == p.file_name() && f.parent() == c.parent()))
                    })
                });
                if hit {
                    let r = entry.revision.fetch_add(1, Ordering::SeqCst) + 1;
                    changed((i < dashboards).then_some(i as u32), r);
                }
            }
        })?;
        let dirs: BTreeSet<PathBuf> = self
            .entries
            .iter()
            .filter_map(|e| canonical(&e.path).parent().map(Path::to_path_buf))
            .collect();
        for d in &dirs {
            watcher.watch(d, notify::RecursiveMode::NonRecursive)?;
        }
        if let Ok(mut w) = self.watched.lock() {
            w.extend(dirs);
        }
        if let Ok(mut w) = self.watcher.lock() {
            *w = Some(watcher);
        }
        Ok(())
    }

    /// Watches the directories of `files` not watched yet (a new include).
    fn watch_dirs(&self, files: &[PathBuf]) {
        let (Ok(mut watched), Ok(mut watcher)) = (self.watched.lock(), self.watcher.lock()) else {
            return;
        };
        let Some(watcher) = watcher.as_mut() else { return };
        for dir in files.iter().filter_map(|f| f.parent()) {
            if !watched.contains(dir) && watcher.watch(dir, notify::RecursiveMode::NonRecursive).is_ok() {
                watched.insert(dir.to_path_buf());
            }
        }
    }
}
