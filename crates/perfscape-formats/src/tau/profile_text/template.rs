//! The timer lines of a run's first file, which a later file of the run is read against:
//! the files of one TAU run list nearly the same lines in the same order, so a later line
//! that is byte for byte the first file's line at the same place (up to its numbers) is read
//! in one forward pass, without looking for its end, its name's closing quote or its groups,
//! and is known to be that line without comparing its name again.

use super::TimerLine;
use super::fields::integer_fields;
use rustc_hash::FxHashMap as HashMap;
use std::borrow::Cow;

/// A timer line as TAU writes it, around its numbers: the text before them (`"<name>"`) and
/// after them (` GROUP="<groups>"`).
type Shape = (Box<[u8]>, Box<[u8]>);

/// The timer lines of a run's first file (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct TimerTemplate {
    /// Per timer line: raw name and raw group text, as [`super::parse_profile_text`] gives them.
    lines: Vec<(String, String)>,
    /// Per timer line: its [`Shape`]; `None` for a line whose groups hold a quote (the
    /// general reader then splits it otherwise) or a name that holds a line end.
    shapes: Vec<Option<Shape>>,
    /// Raw name -> its first line.
    by_name: HashMap<String, usize>,
}

impl TimerTemplate {
    /// The template of a first file's timer lines.
    pub(crate) fn new(timers: &[TimerLine<'_>]) -> Self {
        let mut t = Self::default();
        for (i, line) in timers.iter().enumerate() {
            let (name, groups) = (line.name.as_ref(), line.groups.as_ref());
            t.by_name.entry(name.to_string()).or_insert(i);
            t.lines.push((name.to_string(), groups.to_string()));
            let writable = !groups.contains('"') && !name.contains(['\n', '\r']);
            t.shapes.push(writable.then(|| {
                (
                    format!("\"{name}\"").into_bytes().into(),
                    format!(" GROUP=\"{groups}\"").into_bytes().into(),
                )
            }));
        }
        t
    }

    /// The raw name and raw group text of every template line, in line order.
    pub(crate) fn lines(&self) -> impl Iterator<Item = (&str, &str)> {
        self.lines.iter().map(|(n, g)| (n.as_str(), g.as_str()))
    }

    /// The template line a timer line named `name` with group text `groups` is, when the
    /// first file has a line of that name and group text; `cursor` is where it is looked for
    /// first (one past the last line found), and is moved one past the line of that name.
    pub(crate) fn find(&self, cursor: &mut usize, name: &str, groups: &str) -> Option<usize> {
        let at = match self.lines.get(*cursor) {
            Some((n, _)) if n == name => *cursor,
            _ => *self.by_name.get(name)?,
        };
        *cursor = at + 1;
        (self.lines[at].1 == groups).then_some(at)
    }

    /// Reads the timer line at the start of `text` when it is template line `at` as TAU
    /// writes it: `"<name>"`, `N` fields of 1 to 15 digits each after spaces or tabs,
    /// ` GROUP="<groups>"`, spaces or tabs, then `\n` or `\r\n`. Gives the line (numbered
    /// `line_no`) and the bytes it takes with its line end; `None` for any other text.
    ///
    /// Where it gives a line, the general reader gives the same one for the same text, and
    /// [`Self::find`] gives `at` for it with the cursor at `at` (the tests compare them):
    /// the name's closing quote is the line's last quote before its numbers, and the groups'
    /// opening quote the last one before their closing quote.
    pub(crate) fn read_line<'a, const N: usize>(
        &self,
        text: &'a str,
        at: usize,
        line_no: usize,
    ) -> Option<(TimerLine<'a>, usize)> {
        let (head, tail) = self.shapes.get(at)?.as_ref()?;
        let b = text.as_bytes();
        if !b.starts_with(head) {
            return None;
        }
        let (values, mut i) = integer_fields::<N>(b, head.len())?;
        if !b[i..].starts_with(tail) {
            return None;
        }
        // The groups: between ` GROUP="` and the closing quote.
        let groups = i + " GROUP=\"".len()..i + tail.len() - 1;
        i += tail.len();
        while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
            i += 1;
        }
        let end = if b.get(i) == Some(&b'\n') {
            i + 1
        } else if b.get(i..i + 2) == Some(b"\r\n") {
            i + 2
        } else {
            return None;
        };
        Some((
            TimerLine {
                line: line_no,
                // Char boundaries: the text there is the template's, quotes around each.
                name: Cow::Borrowed(&text[1..head.len() - 1]),
                groups: Cow::Borrowed(&text[groups]),
                calls: values[0],
                subcalls: values[1],
                exclusive: values[2],
                inclusive: values[3],
            },
            end,
        ))
    }
}

#[cfg(test)]
mod tests;
