//! Parsing one TAU `<profile_xml>` document into its parts.
//!
//! [`parse_doc`] turns one document (as cut by [`super::xml_split::DocSplitter`]) into thread
//! declarations with metadata, definitions of metrics / events / user events, profile blocks
//! with their data rows, and TAU's derived statistics blocks, with ids as written; resolving
//! ids is up to the snapshot and merged readers. Format source: TAU's `TauSnapshot.cpp`
//! (writer) and ParaProf's `SnapshotXMLHandler.java` (reader); `../shared/FORMATS.md`.

use perfscape_model::ThreadId;
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// A problem inside one document: byte offset within the document text and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocError {
    /// Byte offset in the document text.
    pub offset: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

/// `<thread id="N.C.T.PID" node= context= thread=>` with its metadata.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadDecl {
    /// The `id` attribute (TAU: `node.context.thread.pid`), used by `<profile thread=...>`.
    pub id: String,
    /// Node, context and thread attributes.
    pub thread: ThreadId,
    /// `<metadata>` attributes, in order.
    pub metadata: Vec<(String, String)>,
}

/// A `<definitions thread=...>` block.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Definitions {
    /// The `thread` attribute (`*` for the merged format's global definitions).
    pub thread: String,
    /// `<metric id><name>` pairs.
    pub metrics: Vec<(u32, String)>,
    /// `<event id><name><group>` triples (name as written, usually ending with a space).
    pub events: Vec<(u32, String, String)>,
    /// `<userevent id><name>` pairs.
    pub user_events: Vec<(u32, String)>,
}

/// Data rows of a profile or derived block, ids as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DataRows {
    /// Metric ids of the `metrics="0 1 "` attribute, in column order.
    pub metrics: Vec<u32>,
    /// Timer rows: `(event id, calls, subcalls)`.
    pub timers: Vec<(u32, f64, f64)>,
    /// Per timer row, exclusive and inclusive per metric column: `2 × metrics.len()` each.
    pub timer_values: Vec<f64>,
    /// User event rows: `(id, [count, max, min, mean, sumsqr])`.
    pub user_events: Vec<(u32, [f64; 5])>,
}

/// A `<profile thread=...>` block: one thread's values at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileBlock {
    /// The `thread` attribute (matches a [`ThreadDecl::id`]).
    pub thread: String,
    /// `<name>` (snapshots; the merged format has none).
    pub name: Option<String>,
    /// `<timestamp>`, µs since the epoch.
    pub timestamp_us: Option<i64>,
    /// The values.
    pub data: DataRows,
    /// Byte offset of `<profile` in the document.
    pub offset: usize,
}

/// A block of TAU's own derived statistics in a merged file (`total`, `mean_all`, ...).
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedBlock {
    /// The `derivedentity` attribute: `total`, `mean_all`, `mean_no_null`, `stddev_all`,
    /// `stddev_no_null`, `min_no_null`, `max_no_null`.
    pub entity: String,
    /// The values (event ids of the global definitions).
    pub data: DataRows,
}

/// The parts of one `<profile_xml>` document, in document order per kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Doc {
    /// Thread declarations.
    pub threads: Vec<ThreadDecl>,
    /// Definition blocks.
    pub definitions: Vec<Definitions>,
    /// Profile blocks.
    pub profiles: Vec<ProfileBlock>,
    /// Derived statistics blocks.
    pub derived: Vec<DerivedBlock>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    ProfileXml,
    Thread,
    Metadata,
    Attribute,
    Name,
    Value,
    Definitions,
    Metric,
    Units,
    Event,
    Group,
    UserEvent,
    Profile,
    Timestamp,
    IntervalData,
    AtomicData,
    DerivedEntity,
    DerivedProfile,
    Other,
}

impl Tag {
    fn of(name: &str) -> Tag {
        match name {
            "profile_xml" => Tag::ProfileXml,
            "thread" => Tag::Thread,
            "metadata" => Tag::Metadata,
            "attribute" => Tag::Attribute,
            "name" => Tag::Name,
            "value" => Tag::Value,
            "definitions" => Tag::Definitions,
            "metric" => Tag::Metric,
            "units" => Tag::Units,
            "event" => Tag::Event,
            "group" => Tag::Group,
            "userevent" => Tag::UserEvent,
            "profile" => Tag::Profile,
            "timestamp" => Tag::Timestamp,
            "interval_data" | "derivedinterval_data" => Tag::IntervalData,
            "atomic_data" | "derivedatomic_data" => Tag::AtomicData,
            "derivedentity" => Tag::DerivedEntity,
            n if n.ends_with("derivedprofile") => Tag::DerivedProfile,
            _ => Tag::Other,
        }
    }

    fn collects_text(self) -> bool {
        matches!(
            self,
            Tag::Name
                | Tag::Value
                | Tag::Group
                | Tag::Units
                | Tag::Timestamp
                | Tag::IntervalData
                | Tag::AtomicData
        )
    }
}

fn attr(e: &BytesStart<'_>, key: &str, offset: usize) -> Result<Option<String>, DocError> {
    match e.try_get_attribute(key) {
        Ok(Some(a)) => a
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map(|v| Some(v.into_owned()))
            .map_err(|err| DocError {
                offset,
                message: format!("attribute `{key}` of <{}>: {err}", e.name().as_ref()),
            }),
        Ok(None) => Ok(None),
        Err(err) => Err(DocError {
            offset,
            message: format!("attributes of <{}>: {err}", e.name().as_ref()),
        }),
    }
}

fn required_attr(e: &BytesStart<'_>, key: &str, offset: usize) -> Result<String, DocError> {
    attr(e, key, offset)?.ok_or_else(|| DocError {
        offset,
        message: format!("<{}> has no `{key}` attribute", e.name().as_ref()),
    })
}

fn u32_attr(e: &BytesStart<'_>, key: &str, offset: usize) -> Result<u32, DocError> {
    let v = required_attr(e, key, offset)?;
    v.trim().parse().map_err(|_| DocError {
        offset,
        message: format!(
            "attribute `{key}` of <{}> is `{v}`, expected an unsigned integer",
            e.name().as_ref()
        ),
    })
}

fn metric_list(v: &str, offset: usize) -> Result<Vec<u32>, DocError> {
    v.split_ascii_whitespace()
        .map(|t| {
            t.parse::<u32>().map_err(|_| DocError {
                offset,
                message: format!("metrics=\"{v}\": `{t}` is not a metric id"),
            })
        })
        .collect()
}

fn number(tok: &str, what: &str, offset: usize) -> Result<f64, DocError> {
    match tok.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(DocError {
            offset,
            message: format!("{what} is `{tok}`, not a finite number"),
        }),
        Err(_) => Err(DocError {
            offset,
            message: format!("{what} is `{tok}`, expected a number"),
        }),
    }
}

fn id(tok: &str, offset: usize) -> Result<u32, DocError> {
    tok.parse::<u32>().map_err(|_| DocError {
        offset,
        message: format!("row id is `{tok}`, expected an unsigned integer"),
    })
}

/// Parses `id calls subrs (excl incl){n}` rows; `start` is the text's offset in the document.
fn parse_interval_rows(text: &str, start: usize, out: &mut DataRows) -> Result<(), DocError> {
    let n = out.metrics.len();
    let mut pos = start;
    for line in text.split_inclusive('\n') {
        let off = pos;
        pos += line.len();
        let toks: Vec<&str> = line.split_ascii_whitespace().collect();
        if toks.is_empty() {
            continue;
        }
        if toks.len() != 3 + 2 * n {
            return Err(DocError {
                offset: off,
                message: format!(
                    "interval row `{}` has {} fields, expected {} (id calls subrs, then exclusive and inclusive for each of the {n} metric(s))",
                    line.trim(),
                    toks.len(),
                    3 + 2 * n
                ),
            });
        }
        let e = id(toks[0], off)?;
        let calls = number(toks[1], "calls", off)?;
        let subrs = number(toks[2], "subrs", off)?;
        out.timers.push((e, calls, subrs));
        for (k, t) in toks[3..].iter().enumerate() {
            let what = if k % 2 == 0 {
                "exclusive value"
            } else {
                "inclusive value"
            };
            out.timer_values.push(number(t, what, off)?);
        }
    }
    Ok(())
}

/// Parses `id n max min mean sumsqr` rows.
fn parse_atomic_rows(text: &str, start: usize, out: &mut DataRows) -> Result<(), DocError> {
    let mut pos = start;
    for line in text.split_inclusive('\n') {
        let off = pos;
        pos += line.len();
        let toks: Vec<&str> = line.split_ascii_whitespace().collect();
        if toks.is_empty() {
            continue;
        }
        if toks.len() != 6 {
            return Err(DocError {
                offset: off,
                message: format!(
                    "user event row `{}` has {} fields, expected 6 (id count max min mean sumsqr)",
                    line.trim(),
                    toks.len()
                ),
            });
        }
        let e = id(toks[0], off)?;
        let mut v = [0.0; 5];
        for (k, name) in ["count", "max", "min", "mean", "sumsqr"].iter().enumerate() {
            v[k] = number(toks[k + 1], name, off)?;
        }
        out.user_events.push((e, v));
    }
    Ok(())
}

#[derive(Default)]
struct Pending {
    id: u32,
    name: Option<String>,
    value: Option<String>,
    group: Option<String>,
}

/// Parses one `<profile_xml>` document (see the module documentation). Errors give the
/// byte offset in `text` and what was expected.
pub fn parse_doc(text: &str) -> Result<Doc, DocError> {
    let mut reader = Reader::from_str(text);
    reader.config_mut().check_end_names = true;
    let mut doc = Doc::default();
    let mut stack: Vec<Tag> = Vec::new();
    let mut buf_text = String::new();
    let mut text_start = 0usize;
    let mut pending = Pending::default();
    let mut thread: Option<ThreadDecl> = None;
    let mut defs: Option<Definitions> = None;
    let mut profile: Option<ProfileBlock> = None;
    let mut derived: Option<DerivedBlock> = None;
    let mut derived_entity: Option<String> = None;
    let mut data_metrics: Vec<u32> = Vec::new();
    let mut seen_root = false;
    loop {
        let pos = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let ev = reader.read_event().map_err(|e| DocError {
            offset: usize::try_from(reader.error_position()).unwrap_or(pos),
            message: format!("malformed XML: {e}"),
        })?;
        match ev {
            Event::Start(e) => {
                let tag = Tag::of(e.name().as_ref());
                if stack.is_empty() {
                    if tag != Tag::ProfileXml || seen_root {
                        return Err(DocError {
                            offset: pos,
                            message: format!(
                                "expected one <profile_xml> element, found <{}>",
                                e.name().as_ref()
                            ),
                        });
                    }
                    seen_root = true;
                }
                match tag {
                    Tag::Thread => {
                        let t = ThreadId::new(
                            u32_attr(&e, "node", pos)?,
                            u32_attr(&e, "context", pos)?,
                            u32_attr(&e, "thread", pos)?,
                        );
                        thread = Some(ThreadDecl {
                            id: required_attr(&e, "id", pos)?,
                            thread: t,
                            metadata: Vec::new(),
                        });
                    }
                    Tag::Attribute => pending = Pending::default(),
                    Tag::Definitions => {
                        defs = Some(Definitions {
                            thread: attr(&e, "thread", pos)?.unwrap_or_default(),
                            ..Definitions::default()
                        });
                    }
                    Tag::Metric | Tag::Event | Tag::UserEvent => {
                        pending = Pending {
                            id: u32_attr(&e, "id", pos)?,
                            ..Pending::default()
                        };
                    }
                    Tag::Profile => {
                        profile = Some(ProfileBlock {
                            thread: required_attr(&e, "thread", pos)?,
                            name: None,
                            timestamp_us: None,
                            data: DataRows::default(),
                            offset: pos,
                        });
                    }
                    Tag::DerivedEntity => derived_entity = attr(&e, "id", pos)?,
                    Tag::DerivedProfile => {
                        derived = Some(DerivedBlock {
                            entity: attr(&e, "derivedentity", pos)?
                                .or_else(|| derived_entity.clone())
                                .unwrap_or_default(),
                            data: DataRows::default(),
                        });
                    }
                    Tag::IntervalData => {
                        data_metrics = metric_list(&attr(&e, "metrics", pos)?.unwrap_or_default(), pos)?;
                    }
                    _ => {}
                }
                if tag.collects_text() {
                    buf_text.clear();
                    text_start = usize::try_from(reader.buffer_position()).unwrap_or(pos);
                }
                stack.push(tag);
            }
            Event::Empty(e) => {
                let tag = Tag::of(e.name().as_ref());
                if stack.is_empty() {
                    return Err(DocError {
                        offset: pos,
                        message: format!("expected <profile_xml>, found <{}/>", e.name().as_ref()),
                    });
                }
                let parent = stack.last().copied();
                match (tag, parent) {
                    (Tag::Value, Some(Tag::Attribute)) => pending.value = Some(String::new()),
                    (Tag::Name, _) => pending.name = Some(String::new()),
                    (Tag::Group, _) => pending.group = Some(String::new()),
                    (Tag::Timestamp, _) => {
                        return Err(DocError {
                            offset: pos,
                            message: "empty <timestamp/>, expected microseconds since the epoch".into(),
                        });
                    }
                    _ => {}
                }
            }
            Event::Text(t) if stack.last().is_some_and(|t| t.collects_text()) => {
                buf_text.push_str(&t.xml10_content());
            }
            Event::CData(t) if stack.last().is_some_and(|t| t.collects_text()) => {
                buf_text.push_str(&t.xml10_content());
            }
            Event::GeneralRef(r) if stack.last().is_some_and(|t| t.collects_text()) => {
                if let Ok(Some(ch)) = r.resolve_char_ref() {
                    buf_text.push(ch);
                } else {
                    let ent = r.xml10_content();
                    match quick_xml::escape::resolve_predefined_entity(&ent) {
                        Some(s) => buf_text.push_str(s),
                        None => {
                            return Err(DocError {
                                offset: pos,
                                message: format!("unknown entity `&{ent};`"),
                            });
                        }
                    }
                }
            }
            Event::End(_) => {
                let Some(tag) = stack.pop() else {
                    return Err(DocError {
                        offset: pos,
                        message: "closing tag without an opening tag".into(),
                    });
                };
                let parent = stack.last().copied();
                match tag {
                    Tag::Name => {
                        let s = std::mem::take(&mut buf_text);
                        match parent {
                            Some(Tag::Profile) => {
                                if let Some(p) = profile.as_mut() {
                                    p.name = Some(s);
                                }
                            }
                            _ => pending.name = Some(s),
                        }
                    }
                    Tag::Value => pending.value = Some(std::mem::take(&mut buf_text)),
                    Tag::Group => pending.group = Some(std::mem::take(&mut buf_text)),
                    Tag::Timestamp => {
                        let s = buf_text.trim();
                        let ts = s.parse::<i64>().map_err(|_| DocError {
                            offset: text_start,
                            message: format!(
                                "<timestamp> is `{s}`, expected microseconds since the epoch (an integer)"
                            ),
                        })?;
                        if let Some(p) = profile.as_mut() {
                            p.timestamp_us = Some(ts);
                        }
                    }
                    Tag::Attribute => {
                        let p = std::mem::take(&mut pending);
                        let Some(name) = p.name else {
                            return Err(DocError {
                                offset: pos,
                                message: "metadata <attribute> without a <name>".into(),
                            });
                        };
                        if let Some(t) = thread.as_mut() {
                            t.metadata.push((name, p.value.unwrap_or_default()));
                        }
                    }
                    Tag::Metric | Tag::Event | Tag::UserEvent => {
                        let p = std::mem::take(&mut pending);
                        let what = match tag {
                            Tag::Metric => "metric",
                            Tag::Event => "event",
                            _ => "userevent",
                        };
                        let Some(name) = p.name else {
                            return Err(DocError {
                                offset: pos,
                                message: format!("<{what} id=\"{}\"> without a <name>", p.id),
                            });
                        };
                        let Some(d) = defs.as_mut() else {
                            return Err(DocError {
                                offset: pos,
                                message: format!("<{what}> outside <definitions>"),
                            });
                        };
                        match tag {
                            Tag::Metric => d.metrics.push((p.id, name)),
                            Tag::Event => d.events.push((p.id, name, p.group.unwrap_or_default())),
                            _ => d.user_events.push((p.id, name)),
                        }
                    }
                    Tag::Thread => {
                        if let Some(t) = thread.take() {
                            doc.threads.push(t);
                        }
                    }
                    Tag::Definitions => {
                        if let Some(d) = defs.take() {
                            doc.definitions.push(d);
                        }
                    }
                    Tag::IntervalData | Tag::AtomicData => {
                        let target = match parent {
                            Some(Tag::Profile) => profile.as_mut().map(|p| &mut p.data),
                            Some(Tag::DerivedProfile) => derived.as_mut().map(|d| &mut d.data),
                            _ => None,
                        };
                        if let Some(data) = target {
                            if tag == Tag::IntervalData {
                                data.metrics = std::mem::take(&mut data_metrics);
                                parse_interval_rows(&buf_text, text_start, data)?;
                            } else {
                                parse_atomic_rows(&buf_text, text_start, data)?;
                            }
                        }
                        buf_text.clear();
                    }
                    Tag::Profile => {
                        if let Some(p) = profile.take() {
                            doc.profiles.push(p);
                        }
                    }
                    Tag::DerivedProfile => {
                        if let Some(d) = derived.take() {
                            doc.derived.push(d);
                        }
                    }
                    _ => {}
                }
            }
            Event::Eof => {
                if let Some(open) = stack.last() {
                    return Err(DocError {
                        offset: text.len(),
                        message: format!("document ends inside an unclosed element ({open:?})"),
                    });
                }
                if !seen_root {
                    return Err(DocError {
                        offset: 0,
                        message: "empty document: expected <profile_xml>".into(),
                    });
                }
                break;
            }
            _ => {}
        }
    }
    Ok(doc)
}
