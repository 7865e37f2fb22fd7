//! Tests of the TAU text profile parser: complete files, every truncation point, damaged
//! sections, malformed lines, fuzz regressions.

use super::*;

const GOOD: &str = "2 templated_functions_MULTI_TIME\n\
# Name Calls Subrs Excl Incl ProfileCalls # <metadata><attribute><name>Metric Name</name><value>TIME</value></attribute></metadata>\n\
\".TAU application\" 1 1 10 110 0 GROUP=\"TAU_DEFAULT\" \n\
\"MPI_Init()  \" 1 0 100 1.0E+02 0 GROUP=\"MPI\" \n\
0 aggregates\n\
1 userevents\n\
# eventname numevents max min mean sumsqr\n\
\"Message size : a \"quoted\" thing\" 2 8 4 6 80\n";

#[test]
fn parses_a_complete_file() {
    let f = parse_profile_file(GOOD.as_bytes()).unwrap();
    assert_eq!(f.metric_name(), Some("TIME"));
    assert_eq!(f.timers.len(), 2);
    assert_eq!(f.timers[1].name, "MPI_Init()  ");
    assert_eq!(f.timers[1].inclusive, 100.0);
    assert_eq!(f.timers[1].groups, "MPI");
    assert_eq!(f.timers[1].line, 4);
    assert_eq!(f.user_events[0].name, "Message size : a \"quoted\" thing");
    assert_eq!(f.user_events[0].sum_squares, 80.0);
}

#[test]
fn big_integers_and_e_notation_keep_their_value() {
    let src = "1 templated_functions_MULTI_TIME\n# Name Calls Subrs Excl Incl ProfileCalls\n\
\"x\" 9037564725944016 0 1.208800627888754E+16 1.208800627888754E+16 0 GROUP=\"a\"\n0 aggregates\n";
    let f = parse_profile_file(src.as_bytes()).unwrap();
    assert_eq!(f.timers[0].calls, 9037564725944016.0);
    assert_eq!(f.timers[0].exclusive, 1.208800627888754e16);
    assert!(f.user_events.is_empty());
}

#[test]
fn old_format_without_group_or_metadata() {
    let src = "1 templated_functions\n# Name Calls Subrs Excl Incl ProfileCalls\n\".TAU application \" 1 3 2335 896051 0\n0 aggregates\n";
    let f = parse_profile_file(src.as_bytes()).unwrap();
    assert_eq!(f.metric_name(), None);
    assert_eq!(f.timers[0].name, ".TAU application ");
    assert_eq!(f.timers[0].groups, "");
}

#[test]
fn every_truncation_point_is_an_error_or_a_partial_file_with_a_line() {
    // Cutting the file at any byte must give a clear error (inside the timer section), or
    // the complete timers with what was left out said in `partial`: never a panic, never
    // a silently shorter list.
    let bytes = GOOD.as_bytes();
    let timers_end = GOOD.find("0 aggregates").unwrap();
    for cut in 0..bytes.len() {
        match parse_profile_file(&bytes[..cut]) {
            Ok(f) => {
                assert_eq!(f.timers.len(), 2, "cut at {cut} lost timers");
                assert!(cut >= timers_end, "cut at {cut}: the timer section is incomplete");
                // A file may end after its aggregates line (no user events at all).
                let no_user_events = GOOD.find("1 userevents").unwrap();
                if f.user_events.is_empty() && !(no_user_events - 1..=no_user_events).contains(&cut) {
                    let (line, msg) = &f.partial[0];
                    assert!(*line >= 5 && msg.contains("not read"), "cut at {cut}: {msg}");
                }
            }
            Err(e) => {
                assert!(cut <= timers_end, "cut at {cut}: the timers are complete: {e}");
                assert!(e.line.is_some_and(|l| l >= 1) && !e.message.is_empty());
            }
        }
    }
}

#[test]
fn a_damaged_user_event_section_keeps_the_timers_and_says_what_was_left_out() {
    let head = "1 templated_functions\n# Name\n\"a\" 1 0 1 1 0 GROUP=\"g\"\n0 aggregates\n";
    let cases: &[(&str, usize, &str, usize)] = &[
        (
            "2 userevents\n# e\n\"u\" 1 1 1 1 1\n",
            8,
            "1 of the 2 user event",
            1,
        ),
        ("1 userevents\n# e\n\"u\" 1 1 x 1 1\n", 7, "min is `x`", 0),
        (
            "3 userevents\n# e\n\"u\" 1 1 1 1 1\n\"v\" 1 x 1 1 1\n",
            8,
            "the 1 user event lines after it",
            1,
        ),
        ("2 userevents\nnot a header\n", 6, "# eventname", 0),
        ("garbage here\n", 5, "<count> userevents", 0),
    ];
    for (tail, line, needle, kept) in cases {
        let f = parse_profile_file(format!("{head}{tail}").as_bytes()).unwrap();
        assert_eq!(f.timers.len(), 1, "{tail:?}");
        assert_eq!(f.user_events.len(), *kept, "{tail:?}");
        assert_eq!(f.partial.len(), 1, "{tail:?}");
        assert_eq!(f.partial[0].0, *line, "{tail:?}: {:?}", f.partial);
        assert!(
            f.partial[0].1.contains(needle) && f.partial[0].1.contains("not read"),
            "{:?}",
            f.partial
        );
    }
}

#[test]
fn stray_text_after_the_last_user_event_is_a_warning_naming_its_line() {
    let src = "1 templated_functions\n# Name\n\"a\" 1 0 1 1 0 GROUP=\"g\"\n0 aggregates\n1 userevents\n# e\n\"u\" 2 1 1 1 1\n\nMPI_Finalize: done\n";
    let f = parse_profile_file(src.as_bytes()).unwrap();
    assert_eq!((f.timers.len(), f.user_events.len()), (1, 1));
    assert!(f.partial.is_empty());
    let (line, msg) = &f.warnings[0];
    assert_eq!(*line, 9);
    assert!(
        msg.contains("MPI_Finalize: done") && msg.contains("expected the end of the file"),
        "{msg}"
    );
}

#[test]
fn malformed_inputs_name_line_and_expectation() {
    let cases: &[(&str, usize, &str)] = &[
        ("", 1, "empty"),
        ("x templated_functions\n", 1, "<count> templated_functions"),
        ("1 templated_functions\nfoo\n", 2, "# Name"),
        (
            "2 templated_functions\n# Name\n\"a\" 1 0 1 1 0 GROUP=\"g\"\n",
            4,
            "1 of the 2 timer lines",
        ),
        (
            "1 templated_functions\n# Name\n\"a\" 1 0 abc 1 0 GROUP=\"g\"\n0 aggregates\n",
            3,
            "exclusive value is `abc`",
        ),
        (
            "1 templated_functions\n# Name\n\"a\" 1 0 NaN 1 0 GROUP=\"g\"\n0 aggregates\n",
            3,
            "not a finite number",
        ),
        (
            "1 templated_functions\n# Name\n\"a\" 1 0 1e999 1 0 GROUP=\"g\"\n0 aggregates\n",
            3,
            "not a finite number",
        ),
        (
            "1 templated_functions\n# Name\n\"a\" 1 0 1 0 GROUP=\"g\"\n0 aggregates\n",
            3,
            "followed by 5 numbers",
        ),
        (
            "1 templated_functions\n# Name\na 1 0 1 1 0 GROUP=\"g\"\n0 aggregates\n",
            3,
            "expected a timer line",
        ),
        (
            "1 templated_functions\n# Name # <metadata><attribute><name>a</name>\n",
            2,
            "not closed",
        ),
    ];
    for (src, line, needle) in cases {
        let err = parse_profile_file(src.as_bytes()).unwrap_err();
        assert_eq!(err.line, Some(*line), "{src:?}: {err:?}");
        assert!(
            err.message.contains(needle),
            "{src:?}: `{}` lacks `{needle}`",
            err.message
        );
    }
}

/// Regression (found by cargo-fuzz): a huge count in the header made the parser reserve
/// hundreds of GB before reading a line.
#[test]
fn huge_header_counts_do_not_allocate() {
    let err = parse_profile_file(b"99999999999999 templated_functions\n# Name\n").unwrap_err();
    assert!(
        err.message.contains("0 of the 99999999999999 timer lines"),
        "{}",
        err.message
    );
    let f = parse_profile_file(b"1 templated_functions\n# Name\n\"a\" 1 0 1 1 0 GROUP=\"g\"\n0 aggregates\n88888888888888 userevents\n# e\n").unwrap();
    assert!(f.partial[0].1.contains("user event lines"), "{:?}", f.partial);
}

/// Regression (found by cargo-fuzz): `</metadata>` before `<metadata>` panicked on slicing.
#[test]
fn metadata_close_before_open_is_an_error() {
    let err = parse_profile_file(
        b"0 templated_functions\n# Name </metadata> x <metadata><attribute>\n0 aggregates\n",
    )
    .unwrap_err();
    assert_eq!(err.line, Some(2));
    assert!(err.message.contains("not closed"), "{}", err.message);
}

#[test]
fn crlf_and_invalid_utf8_are_handled() {
    let src = b"1 templated_functions\r\n# Name\r\n\"a\xff\" 1 0 1 1 0 GROUP=\"g\"\r\n0 aggregates\r\n";
    let f = parse_profile_file(src).unwrap();
    assert_eq!(f.timers[0].name, "a\u{fffd}");
    assert_eq!(f.warnings.len(), 1);
    assert_eq!(f.warnings[0].0, 3);
}

proptest::proptest! {
    #[test]
    fn never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
        let _ = parse_profile_file(&bytes);
    }

    #[test]
    fn never_panics_on_mutated_good_files(pos in 0usize..400, byte in proptest::prelude::any::<u8>()) {
        let mut b = GOOD.as_bytes().to_vec();
        let p = pos % b.len();
        b[p] = byte;
        let _ = parse_profile_file(&b);
    }
}

mod fast_paths {
    use super::super::fields::digits_from;
    use super::super::{
        parse_f64, parse_timer_general, split_integers_after_name, split_last, split_last_numbers,
        timer_as_tau_writes_it,
    };
    use proptest::prelude::*;

    /// The byte-scanning splitter, as the `char`-searching one it replaced did it.
    fn split_last_reference<const N: usize>(s: &str) -> Option<(&str, [&str; N])> {
        let mut fields = [""; N];
        let mut end = s.trim_end().len();
        for slot in fields.iter_mut().rev() {
            let head = &s[..end];
            let start = head.rfind(|c: char| c.is_ascii_whitespace()).map_or(0, |i| i + 1);
            if start == end {
                return None;
            }
            *slot = &head[start..end];
            end = head[..start].trim_end().len();
            if end == 0 && start == 0 {
                return None;
            }
        }
        Some((&s[..end], fields))
    }

    fn same_number(s: &str) {
        match (parse_f64(s), s.parse::<f64>()) {
            (Ok(a), Ok(b)) => assert!(
                a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                "{s}: {a} vs {b}"
            ),
            (Err(_), Err(_)) => {}
            (a, b) => panic!("{s}: {a:?} vs {b:?}"),
        }
    }

    #[test]
    fn unicode_space_around_fields_is_trimmed_as_before() {
        let s = "\"x\"\u{3000} 1\u{a0} 2\u{a0}";
        assert_eq!(split_last::<2>(s), split_last_reference::<2>(s));
        assert_eq!(split_last::<2>(s), Some(("\"x\"", ["1", "2"])));
    }

    #[test]
    fn numbers_at_the_fast_path_edges() {
        for s in [
            "0",
            "00",
            "1",
            "999999999999999",
            "1000000000000000",
            "9007199254740993",
            "",
            "-0",
            "+1",
            "1.",
            ".5",
            "1e5",
            "1E+05",
            "nan",
            "inf",
            "1 2",
            "١",
        ] {
            same_number(s);
        }
    }

    #[test]
    fn integers_after_the_name_read_forward_as_backward() {
        let line = "\"a => b\" 1 0 2033215 2033215 0";
        let forward = split_integers_after_name::<5>(line);
        assert_eq!(forward, split_last_numbers::<5>(line));
        assert_eq!(
            forward,
            Some((
                "\"a => b\"",
                ["1", "0", "2033215", "2033215", "0"],
                [Some(1.0), Some(0.0), Some(2033215.0), Some(2033215.0), Some(0.0)]
            ))
        );
        // Left to the backward splitter: a fraction, 16 digits, a sixth field, a field
        // glued to the quote, no name quote, a quote in the name followed by numbers.
        for line in [
            "\"a\" 1 0 2.5 3 0",
            "\"a\" 1 0 1234567890123456 3 0",
            "\"a\" 1 0 2 3 0 7",
            "\"a\"1 0 2 3 0",
            "a 1 0 2 3 0",
            "\"a\" 1 0 2 3",
            "\"a\" 1 0 2 3 0\u{a0}",
        ] {
            assert_eq!(split_integers_after_name::<5>(line), None, "{line}");
        }
        // The one-pass timer reader: what TAU writes, and what it leaves to the general one.
        let line = "\"a => b\" 1 0 2033215 2033216 0 GROUP=\"TAU_CALLPATH|MPI\" ";
        let fast = timer_as_tau_writes_it(line, 3, false);
        assert_eq!(
            fast.as_ref()
                .map(|t| (&*t.name, &*t.groups, t.calls, t.inclusive)),
            Some(("a => b", "TAU_CALLPATH|MPI", 1.0, 2033216.0))
        );
        assert_eq!(
            fast.ok_or(()),
            parse_timer_general(line, 3, false).map_err(|_| ())
        );
        let six = "\"a\" 2 1 10 12 0 144 GROUP=\"g\"";
        assert_eq!(
            timer_as_tau_writes_it(six, 3, true).map(|t| t.exclusive),
            Some(10.0)
        );
        assert_eq!(timer_as_tau_writes_it(six, 3, false), None);
        for line in [
            "\"a\" 1 0 2.5 3 0 GROUP=\"g\"",
            "\"a\" 1 0 2 3 0",
            "\"a\" 1 0 2 3 0 GROUP=\"g\"\u{a0}",
            "\" 1 0 2 3 0 GROUP=\"g\"",
            " \"a\" 1 0 2 3 0 GROUP=\"g\"",
            "\"a\" 1 0 2 3 0 GROUP=\"g",
        ] {
            assert_eq!(timer_as_tau_writes_it(line, 3, false), None, "{line}");
        }
        let quoted = "\"x \"7 8\" y\" 1 0 2 3 0";
        assert_eq!(
            split_integers_after_name::<5>(quoted),
            split_last_numbers::<5>(quoted)
        );
        assert_eq!(
            split_integers_after_name::<5>(quoted).map(|r| r.0),
            Some("\"x \"7 8\" y\"")
        );
    }

    proptest! {
        /// Wherever the forward reader gives a result, it is the backward splitter's.
        #[test]
        fn integers_after_the_name_as_the_backward_splitter(s in "\"[ a-z0-9\"=>]{0,12}\"([ \t]{1,2}[0-9]{1,17}){4,7}[ \t\u{a0}]{0,1}|[ \t\"a0-9.\u{a0}]{0,40}") {
            if let Some(forward) = split_integers_after_name::<5>(&s) {
                prop_assert_eq!(Some(forward), split_last_numbers::<5>(&s));
            }
            if let Some(forward) = split_integers_after_name::<6>(&s) {
                prop_assert_eq!(Some(forward), split_last_numbers::<6>(&s));
            }
        }

        /// Wherever the one-pass reader of a timer line gives a result, it is the general
        /// reader's.
        #[test]
        fn timer_lines_as_tau_writes_them_read_as_any_line(s in "\"[ a-z0-9\"=>|]{0,10}\"([ \t]{1,2}([0-9]{1,16}|[0-9]{1,16}|[0-9]{1,16}|[0-9]\\.[0-9])){4,7}( GROUP=\"[A-Z_|]{0,8}\"| GROUP=\"[A-Z_|\"]{0,8}\"|)[ \t]{0,2}[\u{a0}]{0,1}|[ \t\"a0-9.=GROUP\u{a0}]{0,40}") {
            for stats_column in [false, true] {
                if let Some(fast) = timer_as_tau_writes_it(&s, 7, stats_column) {
                    prop_assert_eq!(Ok(fast), parse_timer_general(&s, 7, stats_column).map_err(|e| e.message));
                }
            }
        }

        /// The 8-bytes-at-a-time digit reader gives the digits' end and value as a byte
        /// loop does (values of up to 19 digits; any byte may follow them).
        #[test]
        fn digits_read_as_byte_by_byte(
            b in proptest::collection::vec(prop_oneof![3 => b'0'..=b'9', 1 => any::<u8>()], 0..40),
            from in 0usize..40,
        ) {
            let from = from.min(b.len());
            let end = from + b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
            let (v, e) = digits_from(&b, from);
            prop_assert_eq!(e, end);
            if end - from <= 19 {
                let expected = b[from..end].iter().fold(0u64, |v, c| v * 10 + u64::from(c - b'0'));
                prop_assert_eq!(v, expected);
            }
        }

        #[test]
        fn numbers_parse_as_the_standard_library_does(s in "[0-9]{0,20}|[-+]?[0-9]{0,8}(\\.[0-9]{0,8})?([eE][-+]?[0-9]{1,3})?|\\PC{0,12}") {
            same_number(&s);
        }

        #[test]
        fn fields_split_as_before(s in "[ \t\"a-z0-9é=\u{a0}\u{3000}\u{2028}]{0,40}") {
            prop_assert_eq!(split_last::<3>(&s), split_last_reference::<3>(&s));
            prop_assert_eq!(split_last::<5>(&s), split_last_reference::<5>(&s));
        }

        /// A value found in the scan is the field's value as the standard library reads it,
        /// and it is found for every field of 1 to 15 digits.
        #[test]
        fn integers_found_in_the_scan_are_the_fields_values(s in "[ \"a0-9.e\u{a0}-]{0,60}|(\"n\"( [0-9]{1,17}){5})") {
            if let Some((_, fields, ints)) = split_last_numbers::<5>(&s) {
                for (f, v) in fields.iter().zip(ints) {
                    let plain = f.len() <= 15 && f.bytes().all(|c| c.is_ascii_digit());
                    prop_assert_eq!(v.is_some(), plain, "{}", f);
                    if let Some(v) = v {
                        prop_assert_eq!(v.to_bits(), f.parse::<f64>().unwrap().to_bits());
                    }
                }
            }
        }
    }
}

#[test]
fn the_metric_name_comes_from_the_first_two_lines_alone() {
    // The metadata's `Metric Name` first, else line 1's metric, else none.
    let line1_only = "1 templated_functions_MULTI_PAPI_TOT_CYC\n# Name Calls Subrs Excl Incl ProfileCalls\n\"x\" 1 0 1 1 0 GROUP=\"a\"\n0 aggregates\n";
    let neither = "1 templated_functions\n# Name Calls Subrs Excl Incl ProfileCalls\n\"x\" 1 0 1 1 0 GROUP=\"a\"\n0 aggregates\n";
    for (src, name) in [
        (GOOD, Some("TIME")),
        (line1_only, Some("PAPI_TOT_CYC")),
        (neither, None),
    ] {
        assert_eq!(profile_text_metric_name(src).unwrap().as_deref(), name, "{src}");
        assert_eq!(parse_profile_text(src).unwrap().metric_name(), name, "{src}");
    }
    // Timer lines are not read: a damaged one does not hide the name.
    let damaged = GOOD.replace("1 0 100 1.0E+02", "1 0 ten 1.0E+02");
    assert!(parse_profile_text(&damaged).is_err());
    assert_eq!(
        profile_text_metric_name(&damaged).unwrap().as_deref(),
        Some("TIME")
    );
    // Cut anywhere in lines 1 and 2: the whole parse's error when it is on those lines (with
    // their number), else (line 2 cut before its metadata) line 1's metric.
    let line2_end = GOOD.match_indices('\n').nth(1).unwrap().0;
    let mut errors = 0;
    for cut in 0..line2_end {
        let prefix = &GOOD[..cut];
        let whole = parse_profile_text(prefix).unwrap_err();
        match profile_text_metric_name(prefix) {
            Err(head) => {
                assert_eq!(head, whole, "cut at {cut}");
                errors += 1;
            }
            Ok(name) => {
                assert!(whole.line > Some(2), "cut at {cut}: {whole:?}");
                assert_eq!(name.as_deref(), Some("TIME"), "cut at {cut}");
            }
        }
    }
    assert!(errors > line2_end / 2, "{errors} of {line2_end} cuts are errors");
}
