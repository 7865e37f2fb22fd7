//! Caliper's native `.cali` format: one record per line, `key=value` fields separated by
//! commas, multi-valued fields with `=` between the values, `\` escaping `,` `=` `\` and
//! `\n` (the grammar of Caliper's Python reader, `caliperreader`):
//!
//! ```text
//! __rec=node,id=155,attr=20,data=main,parent=28          a node of the metadata tree
//! __rec=ctx,ref=155=28,attr=97=148,data=0.0012=2          a snapshot: context nodes + values
//! __rec=globals,ref=28                                    run metadata
//! ```
//!
//! Nodes form one tree. A node whose `attr` is 8 (`cali.attribute.name`) defines an attribute
//! named by its `data`; the attribute's type and properties are the nearest ancestors with
//! `attr` 9 (`cali.attribute.type`) and 10 (`cali.attribute.prop`, a bit set: 1 = stored as a
//! value, 128 = hidden, 256 = nested region), its alias and unit the nearest ancestors whose
//! attribute is `attribute.alias` / `attribute.unit`. Nodes 0-11 are Caliper's built-in
//! bootstrap nodes. A snapshot's context nodes expand to the (attribute, value) pairs of their
//! whole parent chain; the values of nested attributes form the region `path`.

use super::{CaliperData, Column, Row};
use rustc_hash::FxHashMap as HashMap;

const ATTR_NAME: u64 = 8;
const ATTR_TYPE: u64 = 9;
const ATTR_PROP: u64 = 10;
const PROP_AS_VALUE: u64 = 1;
const PROP_HIDDEN: u64 = 128;
const PROP_NESTED: u64 = 256;

#[derive(Debug, Clone)]
struct Node {
    attr: u64,
    data: String,
    parent: Option<u64>,
}

#[derive(Debug, Clone, Default)]
struct Attribute {
    name: String,
    type_name: String,
    prop: u64,
    alias: Option<String>,
    unit: Option<String>,
}

/// Splits one record line into (key, values) fields, undoing the escapes.
pub fn split_record(line: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut entry: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut it = line.trim_end_matches(['\r', '\n']).chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => match it.next() {
                Some('n') => cur.push('\n'),
                Some(o) => cur.push(o),
                None => {}
            },
            ',' => {
                entry.push(std::mem::take(&mut cur));
                let key = entry.remove(0);
                out.push((key, std::mem::take(&mut entry)));
            }
            '=' => entry.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    if !cur.is_empty() || !entry.is_empty() {
        entry.push(cur);
        let key = entry.remove(0);
        out.push((key, entry));
    }
    out
}

struct Db {
    nodes: HashMap<u64, Node>,
    attrs: HashMap<u64, Attribute>,
    attr_by_name: HashMap<String, u64>,
}

impl Db {
    fn new() -> Self {
        let mut nodes = HashMap::default();
        let types = ["usr", "int", "uint", "string", "addr", "double", "bool", "type"];
        for (i, t) in types.iter().enumerate() {
            nodes.insert(
                i as u64,
                Node {
                    attr: ATTR_TYPE,
                    data: (*t).to_string(),
                    parent: None,
                },
            );
        }
        nodes.insert(
            11,
            Node {
                attr: ATTR_TYPE,
                data: "ptr".into(),
                parent: None,
            },
        );
        nodes.insert(
            8,
            Node {
                attr: ATTR_NAME,
                data: "cali.attribute.name".into(),
                parent: Some(3),
            },
        );
        nodes.insert(
            9,
            Node {
                attr: ATTR_NAME,
                data: "cali.attribute.type".into(),
                parent: Some(7),
            },
        );
        nodes.insert(
            10,
            Node {
                attr: ATTR_NAME,
                data: "cali.attribute.prop".into(),
                parent: Some(1),
            },
        );
        let mut db = Db {
            nodes,
            attrs: HashMap::default(),
            attr_by_name: HashMap::default(),
        };
        for id in [8, 9, 10] {
            db.define_attribute(id);
        }
        db
    }

    /// The data of the nearest node with attribute `attr`, starting at `start`.
    fn find(&self, start: Option<u64>, attr: u64) -> Option<&str> {
        let mut cur = start;
        let mut steps = 0;
        while let Some(id) = cur {
            let node = self.nodes.get(&id)?;
            if node.attr == attr {
                return Some(&node.data);
            }
            cur = node.parent;
            steps += 1;
            if steps > self.nodes.len() {
                return None; // cycle guard
            }
        }
        None
    }

    fn define_attribute(&mut self, id: u64) {
        let Some(node) = self.nodes.get(&id) else { return };
        let parent = node.parent;
        let name = node.data.clone();
        let alias_attr = self.attr_by_name.get("attribute.alias").copied();
        let unit_attr = self.attr_by_name.get("attribute.unit").copied();
        let a = Attribute {
            type_name: self.find(Some(id), ATTR_TYPE).unwrap_or("").to_string(),
            prop: self
                .find(parent, ATTR_PROP)
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or(0),
            alias: alias_attr.and_then(|a| self.find(parent, a)).map(str::to_string),
            unit: unit_attr.and_then(|a| self.find(parent, a)).map(str::to_string),
            name: name.clone(),
        };
        self.attr_by_name.insert(name, id);
        self.attrs.insert(id, a);
    }
}

/// Parses a `.cali` file. Errors: (line, message).
pub fn parse_cali(text: &str) -> Result<CaliperData, (usize, String)> {
    let mut db = Db::new();
    let mut out = CaliperData::default();
    let mut column_of: HashMap<u64, usize> = HashMap::default();
    let mut skipped_channels = 0usize;
    let mut unknown_refs = 0usize;
    for (ln, line) in text.lines().enumerate() {
        let ln = ln + 1;
        if line.trim().is_empty() {
            continue;
        }
        let rec = split_record(line);
        let get = |k: &str| rec.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        let kind = get("__rec")
            .and_then(|v| v.first())
            .ok_or_else(|| (ln, "expected a record starting with `__rec=`".to_string()))?;
        let ids = |k: &str| -> Result<Vec<u64>, (usize, String)> {
            get(k)
                .map(|v| {
                    v.iter()
                        .map(|s| {
                            s.trim()
                                .parse::<u64>()
                                .map_err(|_| (ln, format!("`{k}` value `{s}` is not a node id")))
                        })
                        .collect()
                })
                .unwrap_or(Ok(Vec::new()))
        };
        match kind.as_str() {
            "node" => {
                let id = *ids("id")?
                    .first()
                    .ok_or((ln, "node record without `id`".to_string()))?;
                let attr = *ids("attr")?
                    .first()
                    .ok_or((ln, "node record without `attr`".to_string()))?;
                let parent = ids("parent")?.first().copied();
                let data = get("data").and_then(|v| v.first()).cloned().unwrap_or_default();
                if db.nodes.contains_key(&id) {
                    return Err((ln, format!("node id {id} is defined twice")));
                }
                if let Some(p) = parent
                    && !db.nodes.contains_key(&p)
                {
                    return Err((
                        ln,
                        format!("node {id} names parent {p}, which is not defined before it"),
                    ));
                }
                db.nodes.insert(id, Node { attr, data, parent });
                if attr == ATTR_NAME {
                    db.define_attribute(id);
                }
            }
            "ctx" | "globals" => {
                let refs = ids("ref")?;
                let attrs = ids("attr")?;
                let data: Vec<String> = get("data").cloned().unwrap_or_default();
                if attrs.len() != data.len() {
                    return Err((
                        ln,
                        format!("{} `attr` ids but {} `data` values", attrs.len(), data.len()),
                    ));
                }
                // Expand the context nodes: (attribute, value) pairs and the nested path.
                let mut pairs: Vec<(u64, String)> = Vec::new();
                let mut path: Vec<String> = Vec::new();
                for r in refs {
                    let mut chain = Vec::new();
                    let mut cur = Some(r);
                    while let Some(id) = cur {
                        let Some(node) = db.nodes.get(&id) else {
                            unknown_refs += 1;
                            break;
                        };
                        chain.push(id);
                        cur = node.parent;
                        if chain.len() > db.nodes.len() {
                            return Err((ln, format!("node {r} has a cyclic parent chain")));
                        }
                    }
                    for id in chain.into_iter().rev() {
                        let node = &db.nodes[&id];
                        let Some(a) = db.attrs.get(&node.attr) else {
                            continue;
                        };
                        if a.prop & PROP_HIDDEN != 0 {
                            continue;
                        }
                        if a.prop & PROP_NESTED != 0 {
                            path.push(node.data.clone());
                        }
                        pairs.push((node.attr, node.data.clone()));
                    }
                }
                for (a, d) in attrs.iter().zip(data) {
                    if db.attrs.get(a).is_some_and(|x| x.prop & PROP_HIDDEN == 0) {
                        pairs.push((*a, d));
                    } else if !db.attrs.contains_key(a) {
                        return Err((ln, format!("value for attribute id {a}, which no node defines")));
                    }
                }
                let name_of = |a: u64| db.attrs.get(&a).map_or("", |x| x.name.as_str());
                if kind == "globals" {
                    for (a, d) in &pairs {
                        out.globals.push((name_of(*a).to_string(), d.clone()));
                    }
                    continue;
                }
                if path.is_empty() {
                    continue;
                }
                if let Some((_, ch)) = pairs.iter().find(|(a, _)| name_of(*a) == "spot.channel")
                    && ch != "regionprofile"
                {
                    skipped_channels += 1;
                    continue;
                }
                let mut row = Row {
                    path,
                    rank: None,
                    values: Vec::new(),
                };
                for (a, d) in &pairs {
                    let attr = &db.attrs[a];
                    if attr.name == "mpi.rank" {
                        row.rank = d.trim().parse().ok();
                        continue;
                    }
                    let numeric = matches!(attr.type_name.as_str(), "int" | "uint" | "double" | "addr");
                    if attr.prop & PROP_AS_VALUE == 0 || !numeric || attr.name.contains("aggregate.slot") {
                        continue;
                    }
                    let v: f64 = d
                        .trim()
                        .parse()
                        .map_err(|_| (ln, format!("value `{d}` of `{}` is not a number", attr.name)))?;
                    let col = *column_of.entry(*a).or_insert_with(|| {
                        out.columns.push(Column {
                            name: attr.name.clone(),
                            alias: attr.alias.clone(),
                            unit: attr.unit.clone(),
                        });
                        out.columns.len() - 1
                    });
                    row.values.push((col, v));
                }
                out.rows.push(row);
            }
            other => {
                return Err((
                    ln,
                    format!("unknown record kind `{other}` (expected node, ctx or globals)"),
                ));
            }
        }
    }
    if skipped_channels > 0 {
        out.warnings.push(format!(
            "{skipped_channels} record(s) of Spot channels other than `regionprofile` were left out (as Hatchet does)"
        ));
    }
    if unknown_refs > 0 {
        out.warnings.push(format!(
            "{unknown_refs} context reference(s) to undefined nodes were ignored"
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_records_with_escapes() {
        let r = split_record(r"__rec=ctx,ref=42=4242,attr=1=2,data=a\,b=c\=d");
        assert_eq!(r[0], ("__rec".to_string(), vec!["ctx".to_string()]));
        assert_eq!(r[1].1, vec!["42", "4242"]);
        assert_eq!(r[3].1, vec!["a,b", "c=d"]);
    }

    #[test]
    fn small_file() {
        let text = "__rec=node,id=20,attr=10,data=268,parent=3\n\
                    __rec=node,id=21,attr=8,data=function,parent=20\n\
                    __rec=node,id=22,attr=10,data=2049,parent=5\n\
                    __rec=node,id=23,attr=8,data=sum#time.duration,parent=22\n\
                    __rec=node,id=30,attr=21,data=main\n\
                    __rec=node,id=31,attr=21,data=work,parent=30\n\
                    __rec=ctx,ref=31,attr=23,data=1.5\n\
                    __rec=ctx,ref=30,attr=23,data=0.5\n";
        let d = parse_cali(text).unwrap();
        assert_eq!(d.columns.len(), 1);
        assert_eq!(d.rows[0].path, vec!["main", "work"]);
        assert_eq!(d.rows[0].values, vec![(0, 1.5)]);
        let (p, _, _) = super::super::build(&d).unwrap();
        let e = p.event_by_name("main").unwrap();
        assert_eq!(p.interval(e).inclusive(perfscape_model::MetricId(0)), &[2.0]);
        assert!(parse_cali("__rec=node,id=x,attr=8").is_err());
        assert!(parse_cali("hello").is_err());
        assert!(parse_cali("__rec=node,id=40,attr=8,data=a,parent=99").is_err());
    }
}
