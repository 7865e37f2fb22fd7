//! The `<profile_xml>` layer: documents cut from a stream at any chunking (CDATA holding end
//! tags included), every part of a document parsed, and damaged input named by offset.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use perfscape_formats::tau::xml_doc::parse_doc;
use perfscape_formats::tau::xml_split::DocSplitter;
use perfscape_model::ThreadId;

const DOC: &str = "<profile_xml>\n<thread id=\"0.0.1.77\" node=\"0\" context=\"0\" thread=\"1\">\n<metadata>\n<attribute>\n<name>CWD</name>\n<value>/a &amp; b</value>\n</attribute>\n</metadata>\n</thread>\n<definitions thread=\"0.0.1.77\">\n<metric id=\"0\"><name>TIME</name>\n<units>unknown</units>\n</metric>\n</definitions>\n<definitions thread=\"0.0.1.77\">\n<event id=\"0\"><name>.TAU application </name><group>TAU_DEFAULT</group></event>\n<event id=\"1\"><name>a =&gt; b </name><group>TAU_CALLPATH</group></event>\n<event id=\"2\"><name><![CDATA[f<int> ]]]]><![CDATA[> </profile_xml>]]> </name><group>G</group></event>\n<userevent id=\"0\"><name>bytes</name></userevent>\n</definitions>\n<profile thread=\"0.0.1.77\">\n<name>iteration 1</name>\n<timestamp>1795290105252906</timestamp>\n<interval_data metrics=\"0 \">\n0 1 2 10 100 \n2 3 0 1.5E+2 2e2 \n</interval_data>\n<atomic_data>\n0 4 8 1 5 120\n</atomic_data>\n</profile>\n</profile_xml>";

#[test]
fn parses_every_part_of_a_snapshot_document() {
    let d = parse_doc(DOC).unwrap();
    assert_eq!(d.threads.len(), 1);
    assert_eq!(d.threads[0].thread, ThreadId::new(0, 0, 1));
    assert_eq!(
        d.threads[0].metadata,
        vec![("CWD".to_string(), "/a & b".to_string())]
    );
    assert_eq!(d.definitions[0].metrics, vec![(0, "TIME".to_string())]);
    let ev = &d.definitions[1].events;
    assert_eq!(ev[1].1, "a => b ");
    assert_eq!(ev[2].1, "f<int> ]]> </profile_xml> ");
    let p = &d.profiles[0];
    assert_eq!(p.name.as_deref(), Some("iteration 1"));
    assert_eq!(p.timestamp_us, Some(1795290105252906));
    assert_eq!(p.data.timers, vec![(0, 1.0, 2.0), (2, 3.0, 0.0)]);
    assert_eq!(p.data.timer_values, vec![10.0, 100.0, 150.0, 200.0]);
    assert_eq!(p.data.user_events, vec![(0, [4.0, 8.0, 1.0, 5.0, 120.0])]);
}

#[test]
fn splits_documents_at_every_chunking_and_ignores_end_tags_in_cdata() {
    let stream = format!("{DOC}\n{DOC}\n\0 {DOC}");
    let bytes = stream.as_bytes();
    for chunk in [1usize, 2, 3, 7, 13, 64, 1000, bytes.len()] {
        let mut s = DocSplitter::default();
        let mut docs = Vec::new();
        for c in bytes.chunks(chunk) {
            let (d, e) = s.push(c);
            assert!(e.is_empty(), "chunk {chunk}: {e:?}");
            docs.extend(d);
        }
        assert!(s.finish().is_empty());
        assert_eq!(docs.len(), 3, "chunk {chunk}");
        for d in &docs {
            assert_eq!(d.text, DOC);
        }
        assert_eq!(docs[1].offset as usize, DOC.len() + 1);
        assert_eq!(docs[1].line as usize, DOC.lines().count() + 1);
        assert_eq!(docs[2].offset as usize, 2 * DOC.len() + 4);
    }
}

#[test]
fn reports_garbage_cut_documents_and_truncation() {
    let mut s = DocSplitter::default();
    let cut = &DOC[..200];
    let input = format!("junk\n{DOC}\n{cut}{DOC}\nmore junk");
    let (docs, errors) = s.push(input.as_bytes());
    assert_eq!(docs.len(), 2);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!((errors[0].offset, errors[0].line), (0, 1));
    assert!(errors[0].message.contains("unexpected content"));
    assert_eq!(errors[1].offset as usize, 5 + DOC.len() + 1);
    assert!(errors[1].message.contains("cut off"));
    let end = s.finish();
    assert_eq!(end.len(), 1);
    assert!(end[0].message.contains("unexpected content"), "{end:?}");
    let mut s = DocSplitter::default();
    let _ = s.push(&DOC.as_bytes()[..DOC.len() - 3]);
    let end = s.finish();
    assert!(end[0].message.contains("incomplete"), "{end:?}");
    assert_eq!(end[0].offset, 0);
}

#[test]
fn malformed_documents_name_the_offset() {
    let bad = DOC.replace("</definitions>\n<profile", "</definitionz>\n<profile");
    let e = parse_doc(&bad).unwrap_err();
    assert!(e.message.contains("malformed XML"), "{e:?}");
    assert!(e.offset > 0 && e.offset < bad.len());
    let bad = DOC.replace("2 3 0 1.5E+2 2e2", "2 3 0 1.5E+2");
    let e = parse_doc(&bad).unwrap_err();
    assert!(e.message.contains("has 4 fields, expected 5"), "{e:?}");
    assert_eq!(&bad[e.offset..e.offset + 5], "2 3 0");
    let bad = DOC.replace("2 3 0 1.5E+2 2e2", "2 3 0 NaN 2e2");
    assert!(
        parse_doc(&bad)
            .unwrap_err()
            .message
            .contains("not a finite number")
    );
    let bad = DOC.replace("<timestamp>1795290105252906", "<timestamp>17x");
    assert!(
        parse_doc(&bad)
            .unwrap_err()
            .message
            .contains("<timestamp> is `17x`")
    );
    let bad = DOC.replace("<event id=\"1\">", "<event>");
    assert!(parse_doc(&bad).unwrap_err().message.contains("no `id` attribute"));
    // Truncated at every point: an error, never a panic.
    for cut in 0..DOC.len() {
        if DOC.is_char_boundary(cut) {
            assert!(parse_doc(&DOC[..cut]).is_err(), "cut at {cut}");
        }
    }
}
