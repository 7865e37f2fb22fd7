//! The category rule file: `[[category]]` tables (a name and its [`CategoryClass`]) and
//! `[[rule]]` tables (a category and `name` and/or `group` globs), read with the `toml` crate;
//! errors name the file's line and what was expected.

use serde::{Deserialize, Serialize};
use toml::Spanned;

/// The name of the category of the time no rule covers (its class is
/// [`CategoryClass::Computation`]: POP counts it as useful).
pub const OTHER: &str = "other";

/// What kind of time a category is: the class POP's efficiency metrics use. The time of
/// [`CategoryClass::Communication`], [`CategoryClass::Synchronization`],
/// [`CategoryClass::Idle`] and [`CategoryClass::Runtime`] is not useful; every other class is
/// (POP's "useful computation" is the time outside the parallel runtime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum CategoryClass {
    /// Work of the program itself (useful).
    Computation,
    /// Reading and writing files (useful: POP counts it outside the parallel runtime).
    Io,
    /// Overhead of the program that is not a parallel runtime's (initialization, pipeline
    /// flushes: the FPGA seed's "miscellaneous"); useful.
    Overhead,
    /// Moving data between processes or devices (not useful).
    Communication,
    /// Waiting for other processes or threads: barriers, waits on requests (not useful).
    Synchronization,
    /// A thread with nothing to do (not useful).
    Idle,
    /// Inside a parallel runtime without moving data: MPI's setup, OpenMP's fork/join (not
    /// useful).
    Runtime,
}

impl CategoryClass {
    /// Every class, in the order of the documentation.
    pub const ALL: [CategoryClass; 7] = [
        Self::Computation,
        Self::Io,
        Self::Overhead,
        Self::Communication,
        Self::Synchronization,
        Self::Idle,
        Self::Runtime,
    ];

    /// The class's name in a rule file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Computation => "computation",
            Self::Io => "io",
            Self::Overhead => "overhead",
            Self::Communication => "communication",
            Self::Synchronization => "synchronization",
            Self::Idle => "idle",
            Self::Runtime => "runtime",
        }
    }

    /// True when POP counts the class's time as useful computation.
    pub fn is_useful(self) -> bool {
        !matches!(
            self,
            Self::Communication | Self::Synchronization | Self::Idle | Self::Runtime
        )
    }
}

/// A bad rule file: `{file}:{line}: {message}`, the message saying what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct RulesError {
    /// The file's name as given to [`RuleSet::with_user_rules`].
    pub file: String,
    /// The line (from 1) of the error.
    pub line: usize,
    /// What was expected there.
    pub message: String,
}

/// One category: its name and class.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryDef {
    /// Name shown (`MPI collective`).
    pub name: String,
    /// Its class.
    pub class: CategoryClass,
}

/// One rule: an event whose routine matches one of `names` (when given) and which belongs to
/// a group matching one of `groups` (when given) is in category `category` (an index into
/// [`RuleSet::categories`]).
#[derive(Debug, Clone)]
struct Rule {
    category: usize,
    names: Vec<glob::Pattern>,
    groups: Vec<glob::Pattern>,
}

/// Ordered rules (first match wins) and the categories they name. The last category is
/// always [`OTHER`], the time no rule covers.
#[derive(Debug, Clone)]
pub struct RuleSet {
    categories: Vec<CategoryDef>,
    rules: Vec<Rule>,
}

/// perfscape's default rules (MPI, OpenMP, CUDA/HIP, POSIX and MPI-IO I/O, TAU's groups and
/// the FPGA seed's categories), documented in the file itself.
pub const DEFAULT_RULES: &str = include_str!("default.toml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    category: Vec<Spanned<RawCategory>>,
    #[serde(default)]
    rule: Vec<Spanned<RawRule>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCategory {
    name: String,
    class: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRule {
    category: Spanned<String>,
    name: Option<Spanned<OneOrMany>>,
    group: Option<Spanned<OneOrMany>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    fn list(&self) -> Vec<&str> {
        match self {
            Self::One(s) => vec![s.as_str()],
            Self::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

const MATCH: glob::MatchOptions = glob::MatchOptions {
    case_sensitive: false,
    require_literal_separator: false,
    require_literal_leading_dot: false,
};

impl RuleSet {
    /// The default rules alone ([`DEFAULT_RULES`]).
    pub fn defaults() -> Self {
        let mut set = Self {
            categories: Vec::new(),
            rules: Vec::new(),
        };
        #[allow(clippy::expect_used)]
        set.read(DEFAULT_RULES, "default categories")
            .expect("the default category rules parse (tested)");
        set.finish()
    }

    /// The rules of a user's file `text` (named `file` in errors) before the default rules.
    /// The file may declare new categories (`[[category]]` with `name` and `class`) or give a
    /// default category another class; its rules may name its own and the default categories.
    ///
    /// # Errors
    /// [`RulesError`] naming the line: TOML syntax, an unknown key, a class that is not one of
    /// [`CategoryClass::ALL`], a rule naming an undeclared category, a rule with neither
    /// `name` nor `group`, a malformed glob.
    pub fn with_user_rules(text: &str, file: &str) -> Result<Self, RulesError> {
        let mut set = Self {
            categories: Vec::new(),
            rules: Vec::new(),
        };
        // The defaults' categories first (so a user rule may name them), then the user's file,
        // whose rules go before the defaults' rules.
        let mut defaults = Self {
            categories: Vec::new(),
            rules: Vec::new(),
        };
        defaults
            .read(DEFAULT_RULES, "default categories")
            .map_err(|e| RulesError {
                message: format!("(built in) {}", e.message),
                ..e
            })?;
        set.categories = defaults.categories.clone();
        set.read(text, file)?;
        set.rules.extend(defaults.rules);
        Ok(set.finish())
    }

    fn finish(mut self) -> Self {
        self.categories.push(CategoryDef {
            name: OTHER.into(),
            class: CategoryClass::Computation,
        });
        self
    }

    /// Reads one file's categories and rules (appended to `self`).
    fn read(&mut self, text: &str, file: &str) -> Result<(), RulesError> {
        let err = |offset: usize, message: String| RulesError {
            file: file.to_string(),
            line: line_of(text, offset),
            message,
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            err(
                offset,
                format!("expected a category rule file: {}", e.message().trim()),
            )
        })?;
        for c in raw.category {
            let span = c.span();
            let c = c.into_inner();
            if c.name == OTHER {
                return Err(err(
                    span.start,
                    format!("expected a category name other than `{OTHER}` (the time no rule covers)"),
                ));
            }
            let class = CategoryClass::ALL
                .into_iter()
                .find(|k| k.as_str() == c.class.get_ref().as_str())
                .ok_or_else(|| {
                    let all: Vec<&str> = CategoryClass::ALL.iter().map(|k| k.as_str()).collect();
                    err(
                        c.class.span().start,
                        format!(
                            "expected `class` to be one of {}, found `{}`",
                            all.join(", "),
                            c.class.get_ref()
                        ),
                    )
                })?;
            match self.categories.iter_mut().find(|d| d.name == c.name) {
                Some(d) => d.class = class,
                None => self.categories.push(CategoryDef { name: c.name, class }),
            }
        }
        for r in raw.rule {
            let span = r.span();
            let r = r.into_inner();
            let Some(category) = self
                .categories
                .iter()
                .position(|d| &d.name == r.category.get_ref())
            else {
                return Err(err(
                    r.category.span().start,
                    format!(
                        "expected the name of a category declared by a [[category]] table (with its class), found `{}`",
                        r.category.get_ref()
                    ),
                ));
            };
            let globs = |list: &Option<Spanned<OneOrMany>>| -> Result<Vec<glob::Pattern>, RulesError> {
                let Some(list) = list else { return Ok(Vec::new()) };
                list.get_ref()
                    .list()
                    .into_iter()
                    .map(|p| {
                        glob::Pattern::new(p).map_err(|e| {
                            err(
                                list.span().start,
                                format!("expected a glob pattern, `{p}`: {} at {}", e.msg, e.pos),
                            )
                        })
                    })
                    .collect()
            };
            let names = globs(&r.name)?;
            let groups = globs(&r.group)?;
            if names.is_empty() && groups.is_empty() {
                return Err(err(
                    span.start,
                    "expected `name` or `group` patterns in the rule".into(),
                ));
            }
            self.rules.push(Rule {
                category,
                names,
                groups,
            });
        }
        Ok(())
    }

    /// The categories, the last being [`OTHER`].
    pub fn categories(&self) -> &[CategoryDef] {
        &self.categories
    }

    /// The index of [`OTHER`] in [`RuleSet::categories`].
    pub fn other(&self) -> usize {
        self.categories.len() - 1
    }

    /// The category (index into [`RuleSet::categories`]) of a routine named `routine` in the
    /// groups `groups`: the first rule matching, else [`RuleSet::other`].
    pub fn classify<'a>(&self, routine: &str, groups: impl Iterator<Item = &'a str> + Clone) -> usize {
        for r in &self.rules {
            let name_ok = r.names.is_empty() || r.names.iter().any(|p| p.matches_with(routine, MATCH));
            if !name_ok {
                continue;
            }
            let group_ok = r.groups.is_empty()
                || groups
                    .clone()
                    .any(|g| r.groups.iter().any(|p| p.matches_with(g, MATCH)));
            if group_ok {
                return r.category;
            }
        }
        self.other()
    }
}

/// The line (from 1) of byte `offset` of `text`.
fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
}
