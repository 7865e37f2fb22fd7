//! Formatting shared by the commands: numbers with units, event names, tables, lookups.

use anyhow::{Context, bail};
use comfy_table::{CellAlignment, ContentArrangement, LineStyle, Table, TableStyle};
use perfscape_model::{Combine, EventId, MetricId, Profile, ThreadIndex, Unit};

/// Formats a value of a metric for humans: durations scaled to s/ms/µs/ns, bytes to
/// KiB/MiB/GiB, counts with thousands separators, cycles and units perfscape does not know
/// followed by their name; `–` for a value that could not be combined (NaN).
pub fn value(v: f64, unit: &Unit) -> String {
    if v.is_nan() {
        return "–".into();
    }
    match unit {
        Unit::Seconds => duration_us(v * 1e6),
        Unit::Microseconds => duration_us(v),
        Unit::Nanoseconds => duration_us(v / 1e3),
        Unit::Bytes => bytes(v),
        Unit::Count => count(v),
        Unit::Cycles | Unit::Other(_) => format!("{} {}", count(v), unit.symbol()),
    }
}

/// A difference with its sign: `+1.235 ms`, `-30.00 µs` ([`value`] with a `+` when positive).
pub fn signed(v: f64, unit: &Unit) -> String {
    let s = value(v, unit);
    if v > 0.0 { format!("+{s}") } else { s }
}

fn sig4(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0".into()
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// `1.235 s`, `428.5 ms`, `41 µs`.
pub fn duration_us(us: f64) -> String {
    let a = us.abs();
    if a >= 1e6 {
        format!("{} s", sig4(us / 1e6))
    } else if a >= 1e3 {
        format!("{} ms", sig4(us / 1e3))
    } else if a >= 1.0 || a == 0.0 {
        format!("{} µs", sig4(us))
    } else {
        format!("{} ns", sig4(us * 1e3))
    }
}

fn bytes(v: f64) -> String {
    let a = v.abs();
    if a >= 1024.0 * 1024.0 * 1024.0 {
        format!("{} GiB", sig4(v / (1024.0 * 1024.0 * 1024.0)))
    } else if a >= 1024.0 * 1024.0 {
        format!("{} MiB", sig4(v / (1024.0 * 1024.0)))
    } else if a >= 1024.0 {
        format!("{} KiB", sig4(v / 1024.0))
    } else {
        format!("{} B", sig4(v))
    }
}

/// Integers with thousands separators (`1,234,567`); other numbers with 4 significant digits.
pub fn count(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let s = format!("{}", v.abs() as u64);
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        if v < 0.0 { format!("-{out}") } else { out }
    } else {
        sig4(v)
    }
}

/// `37.4%`, or `–` for a metric that does not add up (no share of the run).
pub fn percent_of_run(p: Option<f64>) -> String {
    p.map_or_else(|| "–".into(), percent)
}

/// The column title of a total across threads combined under `rule`: `Sum`, `Min`, `Max`,
/// `Mean`, or `Total` for a metric that is not combinable.
pub fn total_title(rule: Combine) -> &'static str {
    match rule {
        Combine::Sum => "Sum",
        Combine::Min => "Min",
        Combine::Max => "Max",
        Combine::Mean => "Mean",
        Combine::NotCombinable => "Total",
    }
}

/// A line saying how a metric that does not add up is totalled (`None` for one that adds up).
pub fn not_additive_note(p: &Profile, m: MetricId) -> Option<String> {
    let metric = p.metric(m);
    (!metric.combine.is_additive()).then(|| match metric.combine {
        Combine::NotCombinable => format!(
            "{} cannot be combined across threads or call paths: totals of several values are shown as –, and there are no percentages of the run.",
            metric.name
        ),
        rule => format!(
            "{} does not add up: its totals are the {rule} over threads (and call paths), and there are no percentages of the run.",
            metric.name
        ),
    })
}

/// `37.4%`.
pub fn percent(p: f64) -> String {
    if p >= 9.995 {
        format!("{p:.1}%")
    } else {
        format!("{p:.2}%")
    }
}

/// `2.31x`.
pub fn ratio(r: f64) -> String {
    format!("{r:.2}x")
}

/// Shortens a long event name for a table cell, keeping its end (the leaf of a callpath) and
/// its beginning.
pub fn name(s: &str, wide: bool) -> String {
    const MAX: usize = 72;
    let n = s.chars().count();
    if wide || n <= MAX {
        return s.to_string();
    }
    let head: String = s.chars().take(20).collect();
    let tail: String = s.chars().skip(n - (MAX - 21)).collect();
    format!("{head}…{tail}")
}

/// The thread address of `t`, or `-`.
pub fn thread(p: &Profile, t: Option<ThreadIndex>) -> String {
    t.map_or_else(|| "-".to_string(), |t| p.thread(t).to_string())
}

/// The source file of event `e` (its leaf's `[{file} ...]`), or empty.
pub fn source_file(p: &Profile, e: EventId) -> String {
    p.event(e)
        .source()
        .map(|s| s.file.to_string())
        .unwrap_or_default()
}

/// Writes `rows` as CSV to `out`: a header row from the first row's field names, then one
/// line per row (values in the metric's own unit, as serialized).
pub fn write_csv<T: serde::Serialize>(out: &mut dyn std::io::Write, rows: &[T]) -> anyhow::Result<()> {
    let mut w = csv::Writer::from_writer(out);
    for r in rows {
        w.serialize(r)?;
    }
    w.flush()?;
    Ok(())
}

/// Tables: a rule under the header, no other lines.
const STYLE: TableStyle = TableStyle::new().header_separator(LineStyle::none().fill('─').junction('─'));

/// A table with the given header, numbers right-aligned from column `first_numeric` on.
pub fn table(header: &[&str], right_from: usize) -> Table {
    let mut t = Table::new();
    t.load_style(STYLE)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(header.to_vec());
    for i in right_from..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

/// Resolves `--metric`: by name (case-insensitive), default the first metric measured in a
/// unit of time that adds up (CUBE and HPCToolkit list visit counts first, CUBE minimum and
/// maximum times after the time), else the first metric.
pub fn metric(p: &Profile, name: Option<&str>) -> anyhow::Result<MetricId> {
    match name {
        None => Ok(MetricId::from(
            p.metrics()
                .iter()
                .position(|m| m.unit.is_time() && m.combine.is_additive())
                .unwrap_or(0),
        )),
        Some(n) => p.metric_by_name(n).with_context(|| {
            let known: Vec<&str> = p.metrics().iter().map(|m| m.name.as_str()).collect();
            format!("no metric `{n}` in this run; it has: {}", known.join(", "))
        }),
    }
}

/// Finds an event by exact name (any TAU spacing), else by unique substring.
pub fn event(p: &Profile, query: &str) -> anyhow::Result<EventId> {
    if let Some(e) = p.event_by_name(query) {
        return Ok(e);
    }
    let matches: Vec<EventId> = p
        .event_ids()
        .filter(|&e| p.event_name(e).contains(query.trim()))
        .collect();
    match matches.len() {
        1 => Ok(matches[0]),
        0 => bail!("no event named or containing `{query}` (perfscape top RUN lists the events)"),
        n => {
            let shown: Vec<String> = matches
                .iter()
                .take(10)
                .map(|&e| format!("  {}", p.event_name(e)))
                .collect();
            bail!(
                "`{query}` matches {n} events; give the full name. Candidates:\n{}{}",
                shown.join("\n"),
                if n > 10 { "\n  ..." } else { "" }
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_units() {
        assert_eq!(duration_us(1_145_166.0), "1.145 s");
        assert_eq!(duration_us(428_483.0), "428.5 ms");
        assert_eq!(duration_us(41.0), "41.00 µs");
        assert_eq!(duration_us(0.0), "0 µs");
        assert_eq!(count(1_234_567.0), "1,234,567");
        assert_eq!(count(-1000.0), "-1,000");
        assert_eq!(count(2.5), "2.500");
        assert_eq!(bytes(6400.0), "6.250 KiB");
        assert_eq!(percent(37.41), "37.4%");
        assert_eq!(percent(0.5), "0.50%");
    }

    #[test]
    fn shortens_long_names_keeping_the_leaf() {
        let long = format!(".TAU application => {} => MPI_Waitall()", "x".repeat(100));
        let s = name(&long, false);
        assert!(s.ends_with("=> MPI_Waitall()"));
        assert!(s.starts_with(".TAU application"));
        assert_eq!(s.chars().count(), 72);
        assert_eq!(name(&long, true), long);
    }
}
