//! The text written by `perf script`: one sample per block, a header line
//! `comm pid/tid [cpu] time: [period] event: [ip sym (dso)]` followed by the call chain, one
//! frame per line (`<hex address> <symbol>[+0x<offset>] (<file>)`, leaf first), each frame
//! optionally followed by its source line (`  file.c:42`, with `-F +srcline`), and a blank
//! line. Lines starting with `#` (`perf script --header`) are kept as metadata.
//!
//! Accepted header forms (perf's default fields and the usual `-F` choices): with `pid/tid` or
//! only a thread id, with or without `[cpu]`, with or without the time and the period (but
//! with at least one of time, CPU and period). A header needs the command name; files
//! written with `-F` lists that drop `comm` are not recognized. See [`crate::perf`] for the mapping into the model.

use super::{Aggregator, address_frame, basename, id_part, layout};
use crate::format::{self, FileScope, Format, Parts};
use crate::problem::{Parsed, Problem};
use crate::stacks::FrameTable;
use perfscape_model::ThreadId;
use std::collections::BTreeMap;

/// One parsed sample header line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header<'a> {
    /// Command name.
    pub comm: &'a str,
    /// Process id, when printed (`pid/tid`).
    pub pid: Option<i64>,
    /// Thread id.
    pub tid: i64,
    /// CPU, when printed (`[002]`).
    pub cpu: Option<u32>,
    /// Time stamp in seconds, as written, when printed.
    pub time: Option<&'a str>,
    /// Sample period, when printed.
    pub period: Option<u64>,
    /// Event name without its trailing colon (e.g. `cpu-clock`, `task-clock:ppp`).
    pub event: &'a str,
    /// The rest of the line (the sampled instruction without call chains, tracepoint data).
    pub rest: &'a str,
}

fn is_time(t: &str) -> bool {
    t.strip_suffix(':').is_some_and(|t| {
        t.split_once('.').is_some_and(|(a, b)| {
            !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        })
    })
}

fn is_cpu(t: &str) -> Option<u32> {
    t.strip_prefix('[')?.strip_suffix(']')?.parse().ok()
}

fn parse_ids(t: &str) -> Option<(Option<i64>, i64)> {
    match t.split_once('/') {
        Some((p, t)) => Some((Some(p.parse().ok()?), t.parse().ok()?)),
        None => Some((None, t.parse().ok()?)),
    }
}

/// Parses a sample header line, or `None` if the line is not one.
pub fn parse_header(line: &str) -> Option<Header<'_>> {
    if line.starts_with(char::is_whitespace) || line.starts_with('#') {
        return None;
    }
    // Tokens with their byte offsets.
    let mut toks: Vec<(usize, &str)> = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                toks.push((s, &line[s..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        toks.push((s, &line[s..]));
    }
    // Try every position of the id token; the comm is everything before it.
    for j in 1..toks.len() {
        let Some((pid, tid)) = parse_ids(toks[j].1) else {
            continue;
        };
        let mut k = j + 1;
        let cpu = toks.get(k).and_then(|t| is_cpu(t.1));
        if cpu.is_some() {
            k += 1;
        }
        let time = toks
            .get(k)
            .filter(|t| is_time(t.1))
            .map(|t| t.1.trim_end_matches(':'));
        if time.is_some() {
            k += 1;
        }
        let period = toks.get(k).and_then(|t| {
            t.1.parse::<u64>()
                .ok()
                .filter(|_| t.1.bytes().all(|c| c.is_ascii_digit()))
        });
        if period.is_some() {
            k += 1;
        }
        let Some(&(eoff, ev)) = toks.get(k) else { continue };
        let Some(event) = ev.strip_suffix(':') else {
            continue;
        };
        // Without a time, a CPU or a period, `word number word:` would match too much text.
        if event.is_empty() || (time.is_none() && cpu.is_none() && period.is_none()) {
            continue;
        }
        let comm = line[..toks[j].0].trim_end();
        return Some(Header {
            comm,
            pid,
            tid,
            cpu,
            time,
            period,
            event,
            rest: line[eoff + ev.len()..].trim(),
        });
    }
    None
}

/// One frame of a call chain line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Address as printed (hexadecimal, without `0x`).
    pub addr: u64,
    /// Symbol without its `+0x..` offset; `None` for `[unknown]` or when not printed.
    pub symbol: Option<&'a str>,
    /// Mapped file, when printed.
    pub dso: Option<&'a str>,
}

/// Parses a call chain line (`<hex> <symbol>[+0x<off>] (<file>)`), or `None`.
pub fn parse_frame(line: &str) -> Option<Frame<'_>> {
    let t = line.trim();
    let (addr, rest) = match t.split_once(char::is_whitespace) {
        Some((a, r)) => (a, r.trim()),
        None => (t, ""),
    };
    if addr.is_empty() || !addr.bytes().all(|c| c.is_ascii_hexdigit()) || addr.len() > 16 {
        return None;
    }
    let addr = u64::from_str_radix(addr, 16).ok()?;
    let (sym, dso) = if rest.ends_with(')') {
        // The file is the last balanced parenthesized group.
        let mut depth = 0i32;
        let mut open = None;
        for (i, c) in rest.char_indices().rev() {
            match c {
                ')' => depth += 1,
                '(' => {
                    depth -= 1;
                    if depth == 0 {
                        open = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        match open {
            Some(o) => (rest[..o].trim(), Some(&rest[o + 1..rest.len() - 1])),
            None => (rest, None),
        }
    } else {
        (rest, None)
    };
    let sym = match sym.rfind("+0x") {
        Some(i) if sym[i + 3..].bytes().all(|c| c.is_ascii_hexdigit()) && i + 3 < sym.len() => &sym[..i],
        _ => sym,
    };
    let symbol = (!sym.is_empty() && sym != "[unknown]").then_some(sym);
    Some(Frame { addr, symbol, dso })
}

/// Parses a source line line (`  file.c:42`): file and line, or `None` (also for `??:0`).
fn parse_srcline(line: &str) -> Option<(&str, u64)> {
    let (file, num) = line.trim().rsplit_once(':')?;
    let num: u64 = num.trim().parse().ok()?;
    (num > 0 && !file.is_empty() && file != "??").then_some((file, num))
}

/// True when `head` looks like `perf script` output: after `#` comment lines, the first line
/// is a sample header.
pub fn looks_like_perf_script(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    text.lines()
        .map(str::trim_end)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| parse_header(l).is_some())
}

struct RawSample {
    thread: ThreadId,
    /// The CPU the sample ran on, when `perf script` printed it.
    cpu: Option<u32>,
    event: usize,
    period: Option<u64>,
    frames: std::ops::Range<usize>,
    leaf_line: Option<(u32, u64)>,
    comm: u32,
}

/// Parses `perf script` text into a profile (see the module documentation).
pub fn parse_perf_script(bytes: &[u8]) -> Result<Parsed, Problem> {
    let text = String::from_utf8_lossy(bytes);
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    if matches!(text, std::borrow::Cow::Owned(_)) {
        warnings.push(Problem::whole(
            "the text is not valid UTF-8; invalid bytes were replaced by U+FFFD",
        ));
    }
    let mut frames = FrameTable::default();
    let mut frame_ids: Vec<u32> = Vec::new();
    let mut files: Vec<String> = Vec::new();
    let mut file_index: BTreeMap<String, u32> = BTreeMap::new();
    let mut comms: Vec<String> = Vec::new();
    let mut comm_index: BTreeMap<String, u32> = BTreeMap::new();
    let mut events: Vec<(String, bool)> = Vec::new();
    let mut samples: Vec<RawSample> = Vec::new();
    let mut metadata: Vec<(String, String)> = Vec::new();
    let mut any_pid = false;
    let mut any_cpu = false;
    let mut unknown_lines = 0usize;
    let mut first_unknown: Option<(usize, String)> = None;
    let mut orphan_frames = 0usize;
    let mut first_orphan = 0usize;
    // State of the current sample: whether the last line was a frame (srclines attach to it).
    let mut in_sample = false;
    let mut last_was_frame = false;
    for (i, raw_line) in text.lines().enumerate() {
        let lineno = i + 1;
        let line = raw_line.trim_end();
        if line.is_empty() {
            in_sample = false;
            last_was_frame = false;
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            if let Some((k, v)) = c.split_once(" : ") {
                let k = k.trim();
                if !k.is_empty() && !k.contains("====") {
                    metadata.push((format!("perf {k}"), v.trim().to_string()));
                }
            }
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            if !in_sample {
                orphan_frames += 1;
                if first_orphan == 0 {
                    first_orphan = lineno;
                }
                continue;
            }
            if let Some(f) = parse_frame(line) {
                let name = match f.symbol {
                    Some(s) => s.to_string(),
                    None => address_frame(f.addr, f.dso),
                };
                let group = f.dso.map(basename).unwrap_or("");
                frame_ids.push(frames.intern(&name, group));
                if let Some(s) = samples.last_mut() {
                    s.frames.end = frame_ids.len();
                }
                last_was_frame = true;
                continue;
            }
            if last_was_frame && let Some((file, num)) = parse_srcline(line) {
                if let Some(s) = samples.last_mut()
                    && s.frames.len() == 1
                    && s.leaf_line.is_none()
                {
                    let id = match file_index.get(file) {
                        Some(&id) => id,
                        None => {
                            let id = u32::try_from(files.len()).unwrap_or(u32::MAX);
                            files.push(file.to_string());
                            file_index.insert(file.to_string(), id);
                            id
                        }
                    };
                    s.leaf_line = Some((id, num));
                }
                last_was_frame = false;
                continue;
            }
            if last_was_frame {
                // A source line perf could not resolve (`??:0`, `[kernel.kallsyms][addr]`).
                last_was_frame = false;
                continue;
            }
            unknown_lines += 1;
            if first_unknown.is_none() {
                first_unknown = Some((lineno, line.trim().chars().take(60).collect()));
            }
            continue;
        }
        let Some(h) = parse_header(line) else {
            unknown_lines += 1;
            if first_unknown.is_none() {
                first_unknown = Some((lineno, line.chars().take(60).collect()));
            }
            in_sample = false;
            continue;
        };
        let event = match events.iter().position(|(e, _)| e == h.event) {
            Some(e) => {
                events[e].1 |= h.period.is_some();
                e
            }
            None => {
                events.push((h.event.to_string(), h.period.is_some()));
                events.len() - 1
            }
        };
        any_pid |= h.pid.is_some();
        any_cpu |= h.cpu.is_some();
        let comm = match comm_index.get(h.comm) {
            Some(&c) => c,
            None => {
                let c = u32::try_from(comms.len()).unwrap_or(u32::MAX);
                comms.push(h.comm.to_string());
                comm_index.insert(h.comm.to_string(), c);
                c
            }
        };
        let start = frame_ids.len();
        // Without a call chain the sampled instruction may follow the event on this line.
        if let Some(f) = parse_frame(h.rest).filter(|f| f.dso.is_some()) {
            let name = match f.symbol {
                Some(s) => s.to_string(),
                None => address_frame(f.addr, f.dso),
            };
            frame_ids.push(frames.intern(&name, f.dso.map(basename).unwrap_or("")));
        }
        samples.push(RawSample {
            thread: ThreadId::new(h.pid.map_or(0, id_part), 0, id_part(h.tid)),
            cpu: h.cpu,
            event,
            period: h.period,
            frames: start..frame_ids.len(),
            leaf_line: None,
            comm,
        });
        in_sample = true;
        last_was_frame = !samples.last().is_some_and(|s| s.frames.is_empty());
    }
    if samples.is_empty() {
        let detail = match &first_unknown {
            Some((l, t)) => format!("line {l} (`{t}`) is not a sample header"),
            None => "no sample header found".to_string(),
        };
        return Err(Problem::at_line(
            first_unknown.as_ref().map_or(1, |(l, _)| *l),
            format!(
                "not `perf script` output: {detail}; expected lines like `comm pid/tid [cpu] time: period event:` followed by call chain lines"
            ),
        ));
    }
    if let Some((l, t)) = first_unknown {
        warnings.push(Problem::at_line(
            l,
            format!("{unknown_lines} line(s) are neither sample headers, call chain frames nor source lines and were skipped (first: `{t}`)"),
        ));
    }
    if orphan_frames > 0 {
        warnings.push(Problem::at_line(
            first_orphan,
            format!("{orphan_frames} indented line(s) come before any sample header and were skipped"),
        ));
    }
    let layout = layout(&events);
    let mut agg = Aggregator::new(layout);
    agg.frames = frames;
    let no_stack = agg.frames.intern("(no call chain)", "");
    let mut stack: Vec<u32> = Vec::new();
    for s in &samples {
        stack.clear();
        stack.extend(frame_ids[s.frames.clone()].iter().rev());
        if stack.is_empty() {
            stack.push(no_stack);
        }
        let leaf = stack.last().copied().unwrap_or(no_stack);
        let routine = agg.frames.name(leaf).to_string();
        let line = s
            .leaf_line
            .and_then(|(f, l)| files.get(f as usize).map(|f| (routine.as_str(), f.as_str(), l)));
        agg.add(s.thread, s.event, s.period, &stack, line);
        if let Some(c) = s.cpu {
            agg.cpu(s.thread, c);
        }
        if let Some(c) = comms.get(s.comm as usize) {
            agg.comm(s.thread, c);
        }
    }
    if !any_pid {
        notes.push(
            "the samples name thread ids only (perf script without `-F +pid`): every thread is under node 0 (`0.<cpu>.<tid>`)"
                .to_string(),
        );
    }
    if any_cpu {
        notes.push(
            "the samples name their CPU: each thread's CPUs are in its metadata `cpus` (threads are `pid.0.tid`)"
                .to_string(),
        );
    }
    if agg.line_samples > 0 {
        notes.push(format!(
            "{} of {} samples know their source line: they are also in `[SAMPLE] function [{{file}} {{line}}]` events",
            agg.line_samples, agg.samples
        ));
    }
    if agg.frames.rewritten_separators > 0 {
        notes.push(format!(
            "{} symbol(s) contained `=>`, perfscape's callpath separator; it was written `= >`",
            agg.frames.rewritten_separators
        ));
    }
    metadata.insert(0, ("Source format".into(), "perf script".into()));
    metadata.push((
        "perf events".into(),
        events
            .iter()
            .map(|(e, _)| e.as_str())
            .collect::<Vec<_>>()
            .join(", "),
    ));
    agg.into_parsed(&metadata, warnings, Vec::new(), notes)
}

/// Text written by `perf script` (optionally with `-F +srcline`), plain or compressed.
pub const FORMAT: Format = Format {
    name: "perf-script",
    description: "Linux `perf script` text output (plain, gzip, zstd or xz)",
    example: "perf-script/speedscope-linux-perf/forks.linux-perf.txt",
    sniff: |p| p.head().is_some_and(looks_like_perf_script),
    read: format::Read::Bytes(parse_perf_script),
    gives: Parts::PROFILE,
    file_scope: FileScope::File,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_header_form() {
        let h = parse_header("forks     9 [002] 203265.377019:    1001001 cpu-clock: ").unwrap();
        assert_eq!(
            (h.comm, h.pid, h.tid, h.cpu, h.time, h.period, h.event),
            (
                "forks",
                None,
                9,
                Some(2),
                Some("203265.377019"),
                Some(1001001),
                "cpu-clock"
            )
        );
        let h = parse_header("simple-terminat     9/9     198791.127353: cpu-clock: ").unwrap();
        assert_eq!((h.pid, h.tid, h.cpu, h.period), (Some(9), 9, None, None));
        let h = parse_header("trace    6061 150520.991529:   16949152 task-clock:ppp: ").unwrap();
        assert_eq!(
            (h.tid, h.event, h.period),
            (6061, "task-clock:ppp", Some(16949152))
        );
        let h =
            parse_header("Web Content 12/34 [1] 5.5: 10 cycles:u:  4004f6 main+0x26 (/tmp/a.out)").unwrap();
        assert_eq!(
            (h.comm, h.pid, h.tid, h.cpu, h.event),
            ("Web Content", Some(12), 34, Some(1), "cycles:u")
        );
        assert_eq!(h.rest, "4004f6 main+0x26 (/tmp/a.out)");
        let h = parse_header("hot 26334 [001] cpu-clock: ").unwrap();
        assert_eq!((h.comm, h.tid, h.cpu, h.time), ("hot", 26334, Some(1), None));
        assert!(
            parse_header("hot 26334 cpu-clock: ").is_none(),
            "needs a time, CPU or period"
        );
        let h = parse_header("kworker/0:1 17 [000] 1.000001: sched:sched_switch: prev_comm=x").unwrap();
        assert_eq!(
            (h.comm, h.event, h.rest),
            ("kworker/0:1", "sched:sched_switch", "prev_comm=x")
        );
        assert!(parse_header("\t 6f1 _Z5gammav (/workdir/forks)").is_none());
        assert!(parse_header("# ========").is_none());
        assert!(parse_header("hello world").is_none());
    }

    #[test]
    fn parses_frames_and_source_lines() {
        let f = parse_frame("\t             6f1 _Z5gammav (/workdir/forks)").unwrap();
        assert_eq!(
            (f.addr, f.symbol, f.dso),
            (0x6f1, Some("_Z5gammav"), Some("/workdir/forks"))
        );
        let f = parse_frame("\t    aaaac1479980 _RINvNtC+0x144 (/trace/x)").unwrap();
        assert_eq!((f.symbol, f.dso), (Some("_RINvNtC"), Some("/trace/x")));
        let f = parse_frame("\tffffffffad14d115 [unknown] ([kernel.kallsyms])").unwrap();
        assert_eq!((f.symbol, f.dso), (None, Some("[kernel.kallsyms]")));
        let f = parse_frame("  4004f6 std::vector<int>::push_back(int const&) (/tmp/a (deleted))").unwrap();
        assert_eq!(
            (f.symbol, f.dso),
            (
                Some("std::vector<int>::push_back(int const&)"),
                Some("/tmp/a (deleted)")
            )
        );
        assert!(parse_frame("  hot.c:3").is_none());
        assert_eq!(parse_srcline("  hot.c:3"), Some(("hot.c", 3)));
        assert_eq!(parse_srcline("  ??:0"), None);
        assert_eq!(parse_srcline("  /a/b c.c:12"), Some(("/a/b c.c", 12)));
    }
}
