//! Caliper's `json-split` format (written by `cali-query ... format json-split`):
//!
//! ```text
//! { "data": [[v, v, ...], ...],            one row per record
//!   "columns": ["sum#time.duration", "mpi.rank", "path", ...],
//!   "column_metadata": [{"is_value": true}, ...],
//!   "nodes": [{"label": "main", "column": "path", "parent": 0}, ...],
//!   ...                                     other top-level keys: run metadata }
//! ```
//!
//! A column with `is_value: false` holds indices into `nodes`; the path column's node is the
//! record's call-tree node (the `source.function#callpath.address` hierarchy of sampling
//! profiles when present, else `path`). `sourceloc#cali.sampler.pc` nodes are `file:line`
//! labels. Rows of the same node, rank and source line are summed (as Hatchet does).

use super::{CaliperData, Column, Row};
use crate::problem::Problem;
use serde_json::Value;

fn label_path(nodes: &[Value], start: usize) -> Result<Vec<String>, Problem> {
    let mut out = Vec::new();
    let mut cur = Some(start);
    while let Some(i) = cur {
        let node = nodes
            .get(i)
            .ok_or_else(|| Problem::whole(format!("node index {i} is out of range (0..{})", nodes.len())))?;
        let label = node.get("label").and_then(Value::as_str).unwrap_or("");
        out.push(if label.is_empty() {
            "UNKNOWN".to_string()
        } else {
            label.to_string()
        });
        cur = node.get("parent").and_then(Value::as_u64).map(|p| p as usize);
        if out.len() > nodes.len() {
            return Err(Problem::whole(format!("node {start} has a cyclic parent chain")));
        }
    }
    out.reverse();
    Ok(out)
}

/// Parses a json-split document.
pub fn parse_json_split(bytes: &[u8]) -> Result<CaliperData, Problem> {
    let doc: Value = serde_json::from_slice(bytes).map_err(|e| {
        Problem::whole(format!(
            "not valid JSON: {e} (line {}, column {})",
            e.line(),
            e.column()
        ))
    })?;
    let section = |k: &str| {
        doc.get(k)
            .and_then(Value::as_array)
            .ok_or_else(|| Problem::whole(format!("not Caliper json-split: no `{k}` array")))
    };
    let data = section("data")?;
    let columns: Vec<String> = section("columns")?
        .iter()
        .map(|c| c.as_str().unwrap_or("").to_string())
        .collect();
    let meta = section("column_metadata")?;
    let nodes = section("nodes")?;
    if meta.len() != columns.len() {
        return Err(Problem::whole(format!(
            "{} columns but {} column_metadata entries",
            columns.len(),
            meta.len()
        )));
    }
    let is_value: Vec<bool> = meta
        .iter()
        .map(|m| m.get("is_value").and_then(Value::as_bool).unwrap_or(false))
        .collect();
    let find = |name: &str| columns.iter().position(|c| c == name);
    let path_col = find("source.function#callpath.address")
        .or_else(|| find("path"))
        .ok_or_else(|| {
            Problem::whole("no call path column (`source.function#callpath.address` or `path`)")
        })?;
    let rank_col = find("mpi.rank");
    let loc_col = find("sourceloc#cali.sampler.pc");
    let mut out = CaliperData::default();
    let mut col_of = vec![usize::MAX; columns.len()];
    for (i, name) in columns.iter().enumerate() {
        if is_value[i] && Some(i) != rank_col && !name.contains("aggregate.slot") {
            col_of[i] = out.columns.len();
            out.columns.push(Column {
                name: name.clone(),
                alias: None,
                unit: None,
            });
        }
    }
    let mut no_path = 0usize;
    for (r, row) in data.iter().enumerate() {
        let cells = row
            .as_array()
            .ok_or_else(|| Problem::whole(format!("data row {r} is not an array")))?;
        if cells.len() != columns.len() {
            return Err(Problem::whole(format!(
                "data row {r} has {} values for {} columns",
                cells.len(),
                columns.len()
            )));
        }
        let Some(node) = cells[path_col].as_u64() else {
            no_path += 1;
            continue;
        };
        let mut path = label_path(nodes, node as usize)?;
        if let Some(lc) = loc_col
            && let Some(l) = cells[lc].as_u64()
        {
            let label = label_path(nodes, l as usize)?.pop().unwrap_or_default();
            if let Some((file, line)) = label.rsplit_once(':')
                && !(file == "UNKNOWN" && line == "0")
            {
                let function = path.last().cloned().unwrap_or_default();
                path.push(format!("[SAMPLE] {function} [{{{file}}} {{{line}}}]"));
            }
        }
        let rank = match rank_col.map(|c| &cells[c]) {
            Some(Value::Null) | None => None,
            Some(v) => Some(
                v.as_f64()
                    .filter(|x| *x >= 0.0 && x.fract() == 0.0 && *x <= f64::from(u32::MAX))
                    .map(|x| x as u32)
                    .ok_or_else(|| Problem::whole(format!("data row {r}: mpi.rank `{v}` is not a rank")))?,
            ),
        };
        let mut values = Vec::new();
        for (i, cell) in cells.iter().enumerate() {
            if col_of[i] == usize::MAX {
                continue;
            }
            match cell {
                Value::Null => {}
                v => values.push((
                    col_of[i],
                    v.as_f64().ok_or_else(|| {
                        Problem::whole(format!(
                            "data row {r}: `{}` value `{v}` is not a number",
                            columns[i]
                        ))
                    })?,
                )),
            }
        }
        out.rows.push(Row { path, rank, values });
    }
    if no_path > 0 {
        out.warnings.push(format!(
            "{no_path} data row(s) have no call path node (values outside any region); left out, as Hatchet leaves them out"
        ));
    }
    if let Some(obj) = doc.as_object() {
        for (k, v) in obj {
            if !["data", "columns", "column_metadata", "nodes"].contains(&k.as_str()) {
                out.globals.push((
                    k.clone(),
                    v.as_str().map_or_else(|| v.to_string(), str::to_string),
                ));
            }
        }
    }
    Ok(out)
}
