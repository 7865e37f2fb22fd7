//! CUBE4 `anchor.xml`: the metric tree, regions, the call tree (cnodes) and the system tree
//! (machines, nodes, location groups = processes, locations = threads).
//!
//! Layout (CUBE 4 anchor syntax 4.x, as written by Score-P and CubeLib; see pycubexr's
//! `docs/cube_file_format.md`):
//!
//! ```text
//! <cube version="4.4">
//!   <attr key=".." value=".."/>...
//!   <metrics> <metric id="0" type="EXCLUSIVE|INCLUSIVE|SIMPLE|POSTDERIVED|PREDERIVED_*">
//!       <disp_name/> <uniq_name/> <dtype/> <uom/> <url/> <descr/> [<cubepl/>] <metric>... (children)
//!   </metric> </metrics>
//!   <program> <region id mod begin end> <name/> <mangled_name/> <paradigm/> <role/> ... </region>
//!             <cnode id calleeId [line mod]> [<parameter partype parkey parvalue/>] <cnode>... </cnode>
//!   </program>
//!   <system> <systemtreenode Id> <name/> <class/> <systemtreenode>... <locationgroup Id>
//!              <name/> <rank/> <type/> <location Id> <name/> <rank/> <type/> </location>
//!   </locationgroup> </systemtreenode> <topologies>...</topologies> </system>
//! </cube>
//! ```

use crate::xml::{attr, line_of, num_attr, opt_num_attr, push_text};
use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// How a CUBE metric's values are stored along the call tree (`type` attribute).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricKind {
    /// Stored per cnode without its callees; inclusive = sum over the subtree.
    Exclusive,
    /// Stored per cnode including its callees; exclusive = value minus the callees' values.
    Inclusive,
    /// Stored per cnode, not aggregated along the call tree.
    Simple,
    /// Computed by CubePL from other metrics (`POSTDERIVED`, `PREDERIVED_INCLUSIVE`,
    /// `PREDERIVED_EXCLUSIVE`): no stored values.
    Derived(String),
}

/// One metric of the metric tree.
#[derive(Debug, Clone, PartialEq)]
pub struct CubeMetric {
    /// `id` attribute: the data is in `<id>.index` / `<id>.data`.
    pub id: u32,
    /// Storage kind.
    pub kind: MetricKind,
    /// `uniq_name` (what pycubexr and Score-P name the metric, e.g. `time`).
    pub uniq_name: String,
    /// `disp_name` (e.g. `Time`).
    pub disp_name: String,
    /// `dtype`: value type (`DOUBLE`, `UINT64`, `MINDOUBLE`, `TAU_ATOMIC`, `HISTOGRAM(5)`, ...).
    pub dtype: String,
    /// `uom`: unit of measurement (`sec`, `occ`, `bytes`, `#`, ...).
    pub uom: String,
    /// `descr`.
    pub descr: String,
    /// Index of the parent metric in the flattened list (metric tree), if any.
    pub parent: Option<usize>,
    /// `convertible` attribute: `false` means inclusive/exclusive must not be derived.
    pub convertible: bool,
}

/// One region (a routine or code region) of the program.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CubeRegion {
    /// `id` attribute (referenced by cnodes' `calleeId`).
    pub id: u32,
    /// `name`.
    pub name: String,
    /// `mod` attribute: source file (may be empty).
    pub module: String,
    /// `begin` line (-1 when unknown).
    pub begin: i64,
    /// `end` line (-1 when unknown).
    pub end: i64,
    /// `paradigm` (`mpi`, `openmp`, `compiler`, `user`, `measurement`, ...; empty in old files).
    pub paradigm: String,
    /// `role` (`function`, `barrier`, `artificial`, ...).
    pub role: String,
}

/// One call-tree node.
#[derive(Debug, Clone, PartialEq)]
pub struct CubeCnode {
    /// `id` attribute.
    pub id: u32,
    /// Index of the region it calls, in [`Anchor::regions`].
    pub region: usize,
    /// Parent cnode (index in [`Anchor::cnodes`]).
    pub parent: Option<usize>,
    /// `line` attribute (call site), if given.
    pub line: Option<i64>,
    /// `mod` attribute (call site file), if given.
    pub module: Option<String>,
    /// `<parameter parkey parvalue>` pairs.
    pub parameters: Vec<(String, String)>,
}

/// One location (thread, GPU stream, ...): a leaf of the system tree.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CubeLocation {
    /// `Id` attribute: position of the location's values in every data row.
    pub id: u64,
    /// `name` (e.g. `Master thread`).
    pub name: String,
    /// `rank` (thread number within its process for Score-P).
    pub rank: String,
    /// `type` (`thread`, `accelerator`, `metric`, ...).
    pub kind: String,
    /// Index of its location group in [`Anchor::groups`].
    pub group: usize,
}

/// One location group (an MPI process).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CubeLocationGroup {
    /// `Id` attribute.
    pub id: u64,
    /// `name`.
    pub name: String,
    /// `rank` (MPI rank for Score-P).
    pub rank: String,
    /// `type` (`process`, ...).
    pub kind: String,
    /// Names of the system tree nodes above it, outermost first (`machine Linux`, `node n1`).
    pub path: Vec<String>,
}

/// The parsed `anchor.xml`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Anchor {
    /// `version` attribute of `<cube>`.
    pub version: String,
    /// Top-level `<attr key value>` pairs.
    pub attrs: Vec<(String, String)>,
    /// Metrics in document order (the metric tree flattened pre-order).
    pub metrics: Vec<CubeMetric>,
    /// Regions in document order.
    pub regions: Vec<CubeRegion>,
    /// Cnodes in document order (pre-order of the call tree).
    pub cnodes: Vec<CubeCnode>,
    /// Location groups in document order.
    pub groups: Vec<CubeLocationGroup>,
    /// Locations in document order.
    pub locations: Vec<CubeLocation>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Open {
    Metric(usize),
    Region(usize),
    Cnode(usize),
    SystemNode(usize),
    Group(usize),
    Location(usize),
    Text,
    Other,
}

/// Elements whose text is a field of the enclosing object.
const TEXT_FIELDS: &[&str] = &[
    "disp_name",
    "uniq_name",
    "dtype",
    "uom",
    "descr",
    "name",
    "paradigm",
    "role",
    "rank",
    "type",
    "class",
    "url",
    "mangled_name",
    "cubepl",
];

struct State {
    anchor: Anchor,
    /// Region id -> index, filled when regions are seen (cnodes come after regions).
    region_calls: Vec<(usize, u32)>,
    stack: Vec<(String, Open)>,
    text: String,
    system_names: Vec<String>,
}

impl State {
    fn owner(&self) -> Option<Open> {
        self.stack
            .iter()
            .rev()
            .map(|(_, o)| *o)
            .find(|o| !matches!(o, Open::Text | Open::Other))
    }

    fn nearest<F: Fn(Open) -> Option<usize>>(&self, f: F) -> Option<usize> {
        self.stack.iter().rev().find_map(|(_, o)| f(*o))
    }

    fn start(&mut self, e: &BytesStart<'_>) -> Result<Open, String> {
        let name = e.name().as_ref().to_string();
        let parent = self.stack.last().map(|(n, _)| n.as_str()).unwrap_or("");
        let open = match name.as_str() {
            "cube" if self.stack.is_empty() => {
                self.anchor.version = attr(e, "version")?.unwrap_or_default();
                Open::Other
            }
            "attr" if parent == "cube" => {
                let k = attr(e, "key")?.unwrap_or_default();
                let v = attr(e, "value")?.unwrap_or_default();
                self.anchor.attrs.push((k, v));
                Open::Other
            }
            "metric" if parent == "metrics" || parent == "metric" => {
                let kind = match attr(e, "type")?.as_deref().unwrap_or("EXCLUSIVE") {
                    "EXCLUSIVE" => MetricKind::Exclusive,
                    "INCLUSIVE" => MetricKind::Inclusive,
                    "SIMPLE" => MetricKind::Simple,
                    other => MetricKind::Derived(other.to_string()),
                };
                let parent_metric = self.nearest(|o| match o {
                    Open::Metric(i) => Some(i),
                    _ => None,
                });
                let convertible = attr(e, "convertible")?.is_none_or(|v| v.trim() != "false");
                self.anchor.metrics.push(CubeMetric {
                    id: num_attr(e, "id")?,
                    kind,
                    uniq_name: String::new(),
                    disp_name: String::new(),
                    dtype: String::new(),
                    uom: String::new(),
                    descr: String::new(),
                    parent: parent_metric,
                    convertible,
                });
                Open::Metric(self.anchor.metrics.len() - 1)
            }
            "region" if parent == "program" => {
                self.anchor.regions.push(CubeRegion {
                    id: num_attr(e, "id")?,
                    module: attr(e, "mod")?.unwrap_or_default(),
                    begin: opt_num_attr(e, "begin")?.unwrap_or(-1),
                    end: opt_num_attr(e, "end")?.unwrap_or(-1),
                    ..CubeRegion::default()
                });
                Open::Region(self.anchor.regions.len() - 1)
            }
            "cnode" if parent == "program" || parent == "cnode" => {
                let parent_cnode = self.nearest(|o| match o {
                    Open::Cnode(i) => Some(i),
                    _ => None,
                });
                let callee: u32 = num_attr(e, "calleeId")?;
                self.anchor.cnodes.push(CubeCnode {
                    id: num_attr(e, "id")?,
                    region: usize::MAX,
                    parent: parent_cnode,
                    line: opt_num_attr(e, "line")?,
                    module: attr(e, "mod")?,
                    parameters: Vec::new(),
                });
                self.region_calls.push((self.anchor.cnodes.len() - 1, callee));
                Open::Cnode(self.anchor.cnodes.len() - 1)
            }
            "parameter" if parent == "cnode" => {
                if let Some(Open::Cnode(c)) = self.owner() {
                    let k = attr(e, "parkey")?.unwrap_or_default();
                    let v = attr(e, "parvalue")?.unwrap_or_default();
                    self.anchor.cnodes[c].parameters.push((k, v));
                }
                Open::Other
            }
            "systemtreenode" if parent == "system" || parent == "systemtreenode" => {
                self.system_names.push(String::new());
                Open::SystemNode(self.system_names.len() - 1)
            }
            "locationgroup" if parent == "systemtreenode" || parent == "locationgroup" => {
                let path = self
                    .stack
                    .iter()
                    .filter_map(|(_, o)| match o {
                        Open::SystemNode(i) => Some(self.system_names[*i].clone()),
                        _ => None,
                    })
                    .collect();
                self.anchor.groups.push(CubeLocationGroup {
                    id: num_attr(e, "Id")?,
                    path,
                    ..CubeLocationGroup::default()
                });
                Open::Group(self.anchor.groups.len() - 1)
            }
            "location" if parent == "locationgroup" => {
                let group = self
                    .nearest(|o| match o {
                        Open::Group(i) => Some(i),
                        _ => None,
                    })
                    .ok_or("<location> outside a <locationgroup>")?;
                self.anchor.locations.push(CubeLocation {
                    id: num_attr(e, "Id")?,
                    group,
                    ..CubeLocation::default()
                });
                Open::Location(self.anchor.locations.len() - 1)
            }
            n if TEXT_FIELDS.contains(&n) => {
                self.text.clear();
                Open::Text
            }
            _ => Open::Other,
        };
        Ok(open)
    }

    fn end_text(&mut self, field: &str) {
        let text = std::mem::take(&mut self.text);
        let Some(owner) = self.owner() else { return };
        let a = &mut self.anchor;
        match (owner, field) {
            (Open::Metric(i), "uniq_name") => a.metrics[i].uniq_name = text,
            (Open::Metric(i), "disp_name") => a.metrics[i].disp_name = text,
            (Open::Metric(i), "dtype") => a.metrics[i].dtype = text.trim().to_string(),
            (Open::Metric(i), "uom") => a.metrics[i].uom = text.trim().to_string(),
            (Open::Metric(i), "descr") => a.metrics[i].descr = text,
            (Open::Region(i), "name") => a.regions[i].name = text,
            (Open::Region(i), "paradigm") => a.regions[i].paradigm = text.trim().to_string(),
            (Open::Region(i), "role") => a.regions[i].role = text.trim().to_string(),
            (Open::SystemNode(i), "name") => self.system_names[i] = text,
            (Open::Group(i), "name") => a.groups[i].name = text,
            (Open::Group(i), "rank") => a.groups[i].rank = text.trim().to_string(),
            (Open::Group(i), "type") => a.groups[i].kind = text.trim().to_string(),
            (Open::Location(i), "name") => a.locations[i].name = text,
            (Open::Location(i), "rank") => a.locations[i].rank = text.trim().to_string(),
            (Open::Location(i), "type") => a.locations[i].kind = text.trim().to_string(),
            _ => {}
        }
    }
}

/// Parses `anchor.xml`. Errors give the line and what was expected.
pub fn parse_anchor(xml: &str) -> Result<Anchor, (usize, String)> {
    let mut reader = Reader::from_str(xml);
    let mut st = State {
        anchor: Anchor::default(),
        region_calls: Vec::new(),
        stack: Vec::new(),
        text: String::new(),
        system_names: Vec::new(),
    };
    let mut seen_root = false;
    loop {
        let pos = reader.buffer_position() as usize;
        let err = |m: String| (line_of(xml, pos), m);
        let ev = reader
            .read_event()
            .map_err(|e| err(format!("malformed XML: {e}")))?;
        match ev {
            Event::Start(e) => {
                if st.stack.is_empty() {
                    if e.name().as_ref() != "cube" || seen_root {
                        return Err(err(format!(
                            "expected the root element <cube>, found <{}>",
                            e.name().as_ref()
                        )));
                    }
                    seen_root = true;
                }
                let open = st.start(&e).map_err(err)?;
                st.stack.push((e.name().as_ref().to_string(), open));
            }
            Event::Empty(e) => {
                if st.stack.is_empty() {
                    return Err(err(format!(
                        "expected the root element <cube>, found <{}/>",
                        e.name().as_ref()
                    )));
                }
                let open = st.start(&e).map_err(err)?;
                if open == Open::Text {
                    st.end_text(e.name().as_ref());
                }
            }
            Event::End(e) => {
                let Some((name, open)) = st.stack.pop() else {
                    return Err(err(format!("unexpected </{}>", e.name().as_ref())));
                };
                if open == Open::Text {
                    st.end_text(&name);
                }
            }
            Event::Eof => break,
            ev => {
                if matches!(st.stack.last(), Some((_, Open::Text))) {
                    push_text(&mut st.text, &ev).map_err(err)?;
                }
            }
        }
    }
    if !seen_root {
        return Err((
            line_of(xml, xml.len()),
            "no <cube> element: not a CUBE anchor.xml".into(),
        ));
    }
    if !st.stack.is_empty() {
        return Err((
            line_of(xml, xml.len()),
            format!(
                "the document ends inside <{}> (truncated?)",
                st.stack.last().map_or("", |(n, _)| n.as_str())
            ),
        ));
    }
    let mut anchor = st.anchor;
    let by_id: rustc_hash::FxHashMap<u32, usize> = anchor
        .regions
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id, i))
        .collect();
    for (c, callee) in st.region_calls {
        match by_id.get(&callee) {
            Some(&r) => anchor.cnodes[c].region = r,
            None => {
                return Err((
                    0,
                    format!(
                        "cnode {} calls region {callee}, which the <program> section does not define",
                        anchor.cnodes[c].id
                    ),
                ));
            }
        }
    }
    Ok(anchor)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<cube version="4.4">
<attr key="Creator" value="Score-P &amp; friends"/>
<metrics>
<metric id="0" type="EXCLUSIVE"><disp_name>Visits</disp_name><uniq_name>visits</uniq_name><dtype>UINT64</dtype><uom>occ</uom><descr>n</descr></metric>
<metric id="1" type="INCLUSIVE"><disp_name>Time</disp_name><uniq_name>time</uniq_name><dtype>DOUBLE</dtype><uom>sec</uom>
 <metric id="2" type="POSTDERIVED" convertible="false"><uniq_name>d</uniq_name><dtype>DOUBLE</dtype><cubepl>${a}</cubepl></metric>
</metric>
</metrics>
<program>
<region id="7" mod="a.c" begin="3" end="9"><name>main</name><paradigm>compiler</paradigm><role>function</role></region>
<region id="8" mod="a.c" begin="10" end="-1"><name>f&lt;int&gt;</name></region>
<cnode id="0" calleeId="7"><cnode id="1" calleeId="8" line="5"><parameter partype="numeric" parkey="n" parvalue="3"/></cnode></cnode>
</program>
<system><systemtreenode Id="0"><name>machine</name><class>machine</class>
<systemtreenode Id="1"><name>node n1</name><locationgroup Id="0"><name>Process</name><rank>3</rank><type>process</type>
<location Id="0"><name>Master thread</name><rank>0</rank><type>thread</type></location></locationgroup></systemtreenode></systemtreenode>
<topologies><cart name="x" ndims="1"><dim name="p" size="1" periodic="false"/><coord locId="0">0</coord></cart></topologies></system>
</cube>"#;

    #[test]
    fn parses_every_section() {
        let a = parse_anchor(SMALL).unwrap();
        assert_eq!(a.version, "4.4");
        assert_eq!(
            a.attrs,
            vec![("Creator".to_string(), "Score-P & friends".to_string())]
        );
        assert_eq!(a.metrics.len(), 3);
        assert_eq!(a.metrics[1].kind, MetricKind::Inclusive);
        assert_eq!(a.metrics[2].kind, MetricKind::Derived("POSTDERIVED".into()));
        assert_eq!(a.metrics[2].parent, Some(1));
        assert!(!a.metrics[2].convertible && a.metrics[1].convertible);
        assert_eq!(
            (a.metrics[1].uniq_name.as_str(), a.metrics[1].uom.as_str()),
            ("time", "sec")
        );
        assert_eq!(a.regions[1].name, "f<int>");
        assert_eq!(a.cnodes.len(), 2);
        assert_eq!(a.cnodes[1].parent, Some(0));
        assert_eq!(a.cnodes[1].region, 1);
        assert_eq!(a.cnodes[1].line, Some(5));
        assert_eq!(a.cnodes[1].parameters, vec![("n".to_string(), "3".to_string())]);
        assert_eq!(a.groups[0].rank, "3");
        assert_eq!(
            a.groups[0].path,
            vec!["machine".to_string(), "node n1".to_string()]
        );
        assert_eq!(a.locations[0].name, "Master thread");
        assert_eq!(a.locations[0].group, 0);
    }

    #[test]
    fn errors_name_the_line() {
        let bad = SMALL.replace("calleeId=\"8\"", "calleeId=\"x\"");
        let (line, msg) = parse_anchor(&bad).unwrap_err();
        assert_eq!(line, 13, "{msg}");
        assert!(msg.contains("calleeId"), "{msg}");
        let (_, msg) = parse_anchor(&SMALL.replace("calleeId=\"8\"", "calleeId=\"99\"")).unwrap_err();
        assert!(msg.contains("region 99"), "{msg}");
        let (_, msg) = parse_anchor("<html></html>").unwrap_err();
        assert!(msg.contains("<cube>"), "{msg}");
        for cut in [10, 200, 900, SMALL.len() - 3] {
            assert!(parse_anchor(&SMALL[..cut]).is_err(), "cut at {cut}");
        }
    }
}
