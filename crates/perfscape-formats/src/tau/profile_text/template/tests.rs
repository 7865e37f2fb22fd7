//! The one-pass read of a template line against the general reader: on generated lines, and
//! on every file of the corpus's TAU runs read against its run's first file.

#![allow(clippy::unwrap_used)]

use super::super::{parse_profile_text, parse_profile_text_by, parse_timer};
use super::*;
use proptest::prelude::*;
use std::path::{Path, PathBuf};

/// The template of one line, parsed by the general reader.
fn template_of(line: &str) -> TimerTemplate {
    TimerTemplate::new(&[parse_timer(line, 1, false).unwrap()])
}

#[test]
fn a_line_as_tau_writes_it_is_read_in_one_pass() {
    let t = template_of("\"MPI_Send()  \" 2 0 10 10 0 GROUP=\"MPI\"");
    let text = "\"MPI_Send()  \" 7 1 2033215 2033216 0 GROUP=\"MPI\" \nrest";
    let (line, len) = t.read_line::<5>(text, 0, 9).unwrap();
    assert_eq!(len, text.find('\n').unwrap() + 1);
    assert_eq!(
        (line.name.as_ref(), line.groups.as_ref()),
        ("MPI_Send()  ", "MPI")
    );
    assert_eq!(
        [line.calls, line.subcalls, line.exclusive, line.inclusive],
        [7.0, 1.0, 2033215.0, 2033216.0]
    );
    assert_eq!(line.line, 9);
    let crlf = "\"MPI_Send()  \" 7 1 2 3 0 GROUP=\"MPI\"\t\r\nrest";
    assert_eq!(
        t.read_line::<5>(crlf, 0, 9).unwrap().1,
        crlf.find('\n').unwrap() + 1
    );
    for other in [
        // Another name, other groups, a decimal, a missing field, no line end, a stray
        // character, two spaces before GROUP=, an integer of 16 digits.
        "\"MPI_Recv()  \" 7 1 2 3 0 GROUP=\"MPI\"\n",
        "\"MPI_Send()  \" 7 1 2 3 0 GROUP=\"MPI|X\"\n",
        "\"MPI_Send()  \" 7 1 2.5 3 0 GROUP=\"MPI\"\n",
        "\"MPI_Send()  \" 7 1 2 3 GROUP=\"MPI\"\n",
        "\"MPI_Send()  \" 7 1 2 3 0 GROUP=\"MPI\"",
        "\"MPI_Send()  \" 7 1 2 3 0 GROUP=\"MPI\" x\n",
        "\"MPI_Send()  \" 7 1 2 3 0  GROUP=\"MPI\"\n",
        "\"MPI_Send()  \" 7 1 2 3 1234567890123456 GROUP=\"MPI\"\n",
    ] {
        assert!(t.read_line::<5>(other, 0, 1).is_none(), "{other}");
    }
    // Six fields where the header has the SumExclSqr column.
    let six = "\"MPI_Send()  \" 7 1 2 3 0 5 GROUP=\"MPI\"\n";
    assert!(t.read_line::<5>(six, 0, 1).is_none());
    assert_eq!(t.read_line::<6>(six, 0, 1).unwrap().0.inclusive, 3.0);
}

#[test]
fn find_follows_the_cursor_then_the_name() {
    let lines: Vec<_> = [
        "\"a\" 1 0 1 1 0 GROUP=\"G\"",
        "\"b\" 1 0 1 1 0 GROUP=\"G\"",
        "\"a\" 1 0 1 1 0 GROUP=\"H\"",
    ]
    .iter()
    .map(|l| parse_timer(l, 1, false).unwrap())
    .collect();
    let t = TimerTemplate::new(&lines);
    let mut cursor = 2;
    // At the cursor: the second `a`; elsewhere: the first line of that name.
    assert_eq!(t.find(&mut cursor, "a", "H"), Some(2));
    assert_eq!(cursor, 3);
    assert_eq!(t.find(&mut cursor, "a", "G"), Some(0));
    assert_eq!(cursor, 1);
    assert_eq!(t.find(&mut cursor, "a", "H"), None);
    assert_eq!(cursor, 1);
    assert_eq!(t.find(&mut cursor, "c", "G"), None);
}

/// The TAU runs of the corpus: their first metric's `profile.N.C.T` files, sorted.
fn corpus_runs() -> Vec<Vec<PathBuf>> {
    let corpus = std::env::var_os("PERFSCAPE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    let profiles = |dir: &Path| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
            .map(|d| d.filter_map(|e| Some(e.ok()?.path())).collect())
            .unwrap_or_default();
        v.retain(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("profile."))
        });
        v.sort();
        v
    };
    let mut runs = Vec::new();
    for base in ["tau", "tau-real"] {
        for run in std::fs::read_dir(corpus.join(base)).unwrap() {
            let run = run.unwrap().path();
            let multi = std::fs::read_dir(&run).ok().and_then(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.path())
                    .find(|p| p.to_string_lossy().contains("MULTI__"))
            });
            let files = profiles(multi.as_deref().unwrap_or(&run));
            if files.len() > 1 {
                runs.push(files);
            }
        }
    }
    runs
}

/// Every file of every run read against its run's first file gives the file the general
/// reader gives, and the template lines [`TimerTemplate::find`] gives line by line; most
/// lines of the real runs are read in one pass.
#[test]
fn corpus_files_read_against_their_first_file_as_without() {
    let runs = corpus_runs();
    assert!(runs.len() >= 10, "{} TAU runs found", runs.len());
    let (mut lines, mut one_pass) = (0, 0);
    for files in &runs {
        let first = std::fs::read_to_string(&files[0]).unwrap();
        let template = TimerTemplate::new(&parse_profile_text(&first).unwrap().timers);
        for path in &files[1..] {
            let text = std::fs::read_to_string(path).unwrap();
            let plain = parse_profile_text(&text).unwrap();
            let (by, marks) = parse_profile_text_by(&text, None, Some(&template)).unwrap();
            assert_eq!(by, plain, "{}", path.display());
            let mut cursor = 0;
            let found: Vec<_> = plain
                .timers
                .iter()
                .map(|t| template.find(&mut cursor, &t.name, &t.groups).map(|a| a as u32))
                .collect();
            assert_eq!(marks.timers, found, "{}", path.display());
            // Lines the one-pass read takes, where the text is the template line's.
            let mut cursor = 0;
            for t in &plain.timers {
                let at = text.lines().take(t.line - 1).map(|l| l.len() + 1).sum::<usize>();
                lines += 1;
                if template.read_line::<5>(&text[at..], cursor, t.line).is_some()
                    || template.read_line::<6>(&text[at..], cursor, t.line).is_some()
                {
                    one_pass += 1;
                }
                template.find(&mut cursor, &t.name, &t.groups);
            }
        }
    }
    // 77% when written: rank 0 of the master/worker run (pbmpi) and thread 0 of the pthread
    // runs list other timers than the other threads, whose lines are then read the general way.
    assert!(
        one_pass * 10 > lines * 7,
        "{one_pass} of {lines} lines read in one pass"
    );
}

proptest! {
    /// Wherever the one-pass read gives a line, the general reader gives the same line, it
    /// ends where the line ends, and it is the template line `find` gives. (Half the lines
    /// have the template's name and groups; about a fifth of all is read in one pass.)
    #[test]
    fn one_pass_reads_as_the_general_reader(
        name in "[ a-z\"=>]{0,8}",
        groups in prop_oneof![3 => "[A-Z_|]{0,4}", 1 => "[A-Z_|\"]{0,4}"],
        other_name in "[ a-z\"]{0,2}",
        fields in prop_oneof![
            3 => "([ \t]{1,2}[0-9]{1,15}){5,6}",
            1 => "([ \t]{1,2}([0-9]{1,16}|[0-9]\\.[0-9])){4,7}",
        ],
        tail in prop_oneof![
            3 => "[ \t]{0,2}\r?\n[a-z\n]{0,2}",
            1 => "( GROUP=\"[A-Z_|\"]{0,4}\"| GROUP=|)[ \t\r]{0,2}(\n|\r\n|)[a-z\n]{0,2}",
        ],
        same in 0..4u8,
    ) {
        let t = TimerTemplate::new(&[TimerLine {
            line: 1,
            name: Cow::Borrowed(&name),
            groups: Cow::Borrowed(&groups),
            calls: 1.0,
            subcalls: 0.0,
            exclusive: 0.0,
            inclusive: 0.0,
        }]);
        let line_name = if same > 0 { &name } else { &other_name };
        let text = match same {
            2 | 3 => format!("\"{line_name}\"{fields} GROUP=\"{groups}\"{tail}"),
            _ => format!("\"{line_name}\"{fields}{tail}"),
        };
        for stats_column in [false, true] {
            let read = if stats_column { t.read_line::<6>(&text, 0, 4) } else { t.read_line::<5>(&text, 0, 4) };
            if let Some((line, len)) = read {
                let end = text.find('\n').unwrap();
                prop_assert_eq!(len, end + 1);
                let l = &text[..end];
                let l = l.strip_suffix('\r').unwrap_or(l);
                prop_assert_eq!(Ok(line.clone()), parse_timer(l, 4, stats_column).map_err(|e| e.message));
                prop_assert_eq!(t.find(&mut 0, &line.name, &line.groups), Some(0));
            }
        }
    }
}
