//! TAU's `<metadata>` XML block: `<attribute><name>K</name><value>V</value></attribute>...`.
//!
//! It appears on line 2 of every `profile.N.C.T` file and inside snapshot/merged XML.

use quick_xml::Reader;
use quick_xml::events::Event;
use std::borrow::Cow;

/// Metadata key/value pairs, borrowing from the XML text where possible.
pub type MetadataPairs<'a> = Vec<(Cow<'a, str>, Cow<'a, str>)>;

/// Appends a piece of text to an accumulated value, borrowing while there is one piece.
fn append<'a>(acc: &mut Option<Cow<'a, str>>, piece: Cow<'a, str>) {
    match acc {
        None => *acc = Some(piece),
        Some(a) => a.to_mut().push_str(&piece),
    }
}

/// Parses a `<metadata>...</metadata>` element into key/value pairs, in document order.
/// Strings borrow from `xml` unless they contain entity references or CDATA splits.
///
/// Entity references (`&lt;`, `&#10;`) and CDATA are decoded. Errors name the byte offset
/// within `xml` and what was expected.
pub fn parse_metadata(xml: &str) -> Result<MetadataPairs<'_>, String> {
    match plain_pairs(xml) {
        Some(pairs) => Ok(pairs),
        None => xml_pairs(xml),
    }
}

/// [`parse_metadata`] by the XML parser: any well-formed block.
fn xml_pairs(xml: &str) -> Result<MetadataPairs<'_>, String> {
    let mut reader = Reader::from_str(xml);
    let mut out = Vec::new();
    let mut name: Option<Cow<'_, str>> = None;
    let mut value: Option<Cow<'_, str>> = None;
    // Which text field is being collected: 1 = name, 2 = value.
    let mut field = 0u8;
    let mut text: Option<Cow<'_, str>> = None;
    loop {
        let pos = reader.buffer_position();
        let ev = reader
            .read_event()
            .map_err(|e| format!("metadata XML at byte {pos}: {e}"))?;
        match ev {
            Event::Start(e) => match e.name().as_ref() {
                "name" => {
                    field = 1;
                    text = None;
                }
                "value" => {
                    field = 2;
                    text = None;
                }
                "attribute" => {
                    name = None;
                    value = None;
                }
                _ => {}
            },
            Event::Empty(e) => match e.name().as_ref() {
                "value" => value = Some(Cow::Borrowed("")),
                "name" => name = Some(Cow::Borrowed("")),
                _ => {}
            },
            Event::Text(t) if field != 0 => append(&mut text, t.xml10_content()),
            Event::CData(t) if field != 0 => append(&mut text, t.xml10_content()),
            Event::GeneralRef(r) if field != 0 => {
                if let Ok(Some(ch)) = r.resolve_char_ref() {
                    append(&mut text, Cow::Owned(ch.to_string()));
                } else {
                    let ent = r.xml10_content();
                    match quick_xml::escape::resolve_predefined_entity(&ent) {
                        Some(s) => append(&mut text, Cow::Borrowed(s)),
                        None => return Err(format!("metadata XML at byte {pos}: unknown entity `&{ent};`")),
                    }
                }
            }
            Event::End(e) => match e.name().as_ref() {
                "name" => {
                    name = Some(text.take().unwrap_or(Cow::Borrowed("")));
                    field = 0;
                }
                "value" => {
                    value = Some(text.take().unwrap_or(Cow::Borrowed("")));
                    field = 0;
                }
                "attribute" => match (name.take(), value.take()) {
                    (Some(n), v) => out.push((n, v.unwrap_or(Cow::Borrowed("")))),
                    (None, _) => {
                        return Err(format!(
                            "metadata XML at byte {pos}: <attribute> without a <name>"
                        ));
                    }
                },
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(out)
}

/// The pairs of a block in the exact shape TAU writes, `<metadata>` then
/// `<attribute><name>K</name><value>V</value></attribute>`... then `</metadata>` with no
/// other text, where no K or V holds `<`, `&` or `\r` (markup, entities, line ends the
/// XML parser would normalize): a byte scan, all borrowed. `None` for anything else, which
/// the XML parser then reads (so both give the same pairs).
fn plain_pairs(xml: &str) -> Option<MetadataPairs<'_>> {
    let mut rest = xml.strip_prefix("<metadata>")?;
    let mut out = Vec::new();
    loop {
        if let Some(after) = rest.strip_prefix("<attribute><name>") {
            rest = after;
            let name = plain_text(&mut rest, "</name><value>")?;
            let value = plain_text(&mut rest, "</value></attribute>")?;
            out.push((Cow::Borrowed(name), Cow::Borrowed(value)));
        } else {
            return (rest == "</metadata>").then_some(out);
        }
    }
}

/// The metadata pairs of a run's first file, to read the blocks of its other files against:
/// TAU writes the same keys in the same order on every rank, with most values alike, so a
/// pair is mostly one comparison of its whole `<attribute>...</attribute>` text with the
/// first file's (see [`parse_metadata_by`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct BlockTemplate {
    /// Per pair of the first file: the text of its attribute in the plain shape
    /// (`<attribute><name>K</name><value>V</value></attribute>`) and where V starts in it;
    /// empty for a pair that shape cannot write (K or V holding `<`, `&` or `\r`).
    attrs: Vec<(String, usize)>,
    /// Key -> its first pair.
    by_key: rustc_hash::FxHashMap<String, usize>,
    /// The pairs, in order.
    pairs: Vec<(String, String)>,
}

impl BlockTemplate {
    /// The template of a first file's pairs.
    pub(crate) fn new<'a>(pairs: impl Iterator<Item = (&'a str, &'a str)>) -> Self {
        let mut t = Self::default();
        for (i, (k, v)) in pairs.enumerate() {
            let plain = |s: &str| memchr::memchr3(b'<', b'&', b'\r', s.as_bytes()).is_none();
            t.attrs.push(if plain(k) && plain(v) {
                let head = format!("<attribute><name>{k}</name><value>");
                (format!("{head}{v}</value></attribute>"), head.len())
            } else {
                (String::new(), 0)
            });
            t.by_key.entry(k.to_string()).or_insert(i);
            t.pairs.push((k.to_string(), v.to_string()));
        }
        t
    }

    /// The pairs, in order (pair `k` of [`parse_metadata_by`]'s marks).
    pub(crate) fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }
}

/// [`parse_metadata`] of a block read against `template`: the same pairs, and for each the
/// template pair it equals (same key and value) when the scan found it so (`None` does not
/// say it differs).
pub(crate) fn parse_metadata_by<'a>(
    xml: &'a str,
    template: &BlockTemplate,
) -> Result<(MetadataPairs<'a>, Vec<Option<u32>>), String> {
    match plain_by_template(xml, template) {
        Some(r) => Ok(r),
        None => parse_metadata(xml).map(|pairs| {
            let marks = vec![None; pairs.len()];
            (pairs, marks)
        }),
    }
}

/// [`plain_pairs`] taking whole attributes that are byte for byte the template's at once:
/// the same pairs (such an attribute is in the plain shape, and its K and V are the
/// template pair's), `None` exactly when [`plain_pairs`] is `None` (the same bytes are
/// consumed up to the first text it refuses).
fn plain_by_template<'a>(xml: &'a str, t: &BlockTemplate) -> Option<(MetadataPairs<'a>, Vec<Option<u32>>)> {
    const OPEN: &str = "<attribute><name>";
    const NAME_END: &str = "</name><value>";
    let mut rest = xml.strip_prefix("<metadata>")?;
    let mut out = Vec::with_capacity(t.attrs.len());
    let mut marks = Vec::with_capacity(t.attrs.len());
    // The template pair expected next: one past the last one found.
    let mut cursor = 0;
    loop {
        if let Some((attr, value_at)) = t.attrs.get(cursor)
            && !attr.is_empty()
        {
            let key = &attr[OPEN.len()..*value_at - NAME_END.len()];
            if rest.starts_with(attr.as_str()) {
                let value_end = attr.len() - "</value></attribute>".len();
                out.push((
                    Cow::Borrowed(&rest[OPEN.len()..OPEN.len() + key.len()]),
                    Cow::Borrowed(&rest[*value_at..value_end]),
                ));
                marks.push(u32::try_from(cursor).ok());
                rest = &rest[attr.len()..];
                cursor += 1;
                continue;
            }
            if rest.starts_with(&attr[..*value_at]) {
                let name = &rest[OPEN.len()..OPEN.len() + key.len()];
                let mut after = &rest[*value_at..];
                let value = plain_text(&mut after, "</value></attribute>")?;
                out.push((Cow::Borrowed(name), Cow::Borrowed(value)));
                marks.push(None);
                rest = after;
                cursor += 1;
                continue;
            }
        }
        if let Some(after) = rest.strip_prefix(OPEN) {
            rest = after;
            let name = plain_text(&mut rest, NAME_END)?;
            let value = plain_text(&mut rest, "</value></attribute>")?;
            // A pair inserted, left out or moved: look the key up to find the place again.
            let same = t.by_key.get(name).map(|&j| {
                cursor = j + 1;
                j
            });
            let same = same.filter(|&j| t.pairs[j].1 == value);
            out.push((Cow::Borrowed(name), Cow::Borrowed(value)));
            marks.push(same.and_then(|j| u32::try_from(j).ok()));
        } else {
            return (rest == "</metadata>").then_some((out, marks));
        }
    }
}

/// The text of [`plain_pairs`] up to the next `<`, which must then open `close`; `None` when
/// it holds `&` or `\r` or is not closed so.
fn plain_text<'a>(rest: &mut &'a str, close: &str) -> Option<&'a str> {
    let end = memchr::memchr(b'<', rest.as_bytes())?;
    let t = &rest[..end];
    if memchr::memchr2(b'&', b'\r', t.as_bytes()).is_some() {
        return None;
    }
    *rest = rest[end..].strip_prefix(close)?;
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_attributes_with_entities_and_empty_values() {
        let xml = "<metadata><attribute><name>Metric Name</name><value>TIME</value></attribute>\
                   <attribute><name>Cmd</name><value>a &lt;b&gt; &amp; c&#33;</value></attribute>\
                   <attribute><name>Empty</name><value></value></attribute>\
                   <attribute><name>E2</name><value/></attribute></metadata>";
        let m = parse_metadata(xml).unwrap();
        let m: Vec<(&str, &str)> = m.iter().map(|(k, v)| (k.as_ref(), v.as_ref())).collect();
        assert_eq!(
            m,
            vec![
                ("Metric Name", "TIME"),
                ("Cmd", "a <b> & c!"),
                ("Empty", ""),
                ("E2", "")
            ]
        );
        // Plain values are borrowed, not copied.
        let m = parse_metadata(xml).unwrap();
        assert!(matches!(m[0].1, Cow::Borrowed(_)));
    }

    #[test]
    fn rejects_broken_xml() {
        assert!(parse_metadata("<metadata><attribute><name>x</value></attribute></metadata>").is_err());
    }

    mod plain {
        use super::super::{plain_pairs, xml_pairs};
        use proptest::prelude::*;

        fn block(pairs: &[(String, String)], tail: &str) -> String {
            let mut s = String::from("<metadata>");
            for (k, v) in pairs {
                s.push_str(&format!(
                    "<attribute><name>{k}</name><value>{v}</value></attribute>"
                ));
            }
            s.push_str(tail);
            s
        }

        #[test]
        fn takes_the_plain_shape_and_leaves_the_rest_to_the_xml_parser() {
            let plain = block(
                &[("Metric Name".into(), "TIME".into()), ("E".into(), String::new())],
                "</metadata>",
            );
            assert_eq!(plain_pairs(&plain).unwrap().len(), 2);
            for odd in [
                block(&[("a".into(), "x &amp; y".into())], "</metadata>"),
                block(&[("a".into(), "x\r\ny".into())], "</metadata>"),
                block(&[("a".into(), "<![CDATA[z]]>".into())], "</metadata>"),
                block(&[], "<attribute><name>a</name><value/></attribute></metadata>"),
                block(&[("a".into(), "b".into())], "</metadata> "),
                "<metadata>\n<attribute><name>a</name><value>b</value></attribute></metadata>".into(),
            ] {
                assert!(plain_pairs(&odd).is_none(), "{odd}");
            }
        }

        /// `parse_metadata_by` against `template` gives `parse_metadata`'s pairs, and each pair
        /// it marks equals the template pair it names.
        fn check_by_template(template: &[(String, String)], xml: &str) -> Vec<Option<u32>> {
            use super::super::{BlockTemplate, parse_metadata, parse_metadata_by};
            let t = BlockTemplate::new(template.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            let by_name = parse_metadata(xml);
            let by = parse_metadata_by(xml, &t);
            match (by_name, by) {
                (Ok(want), Ok((got, marks))) => {
                    assert_eq!(got, want, "{xml}");
                    assert_eq!(marks.len(), got.len());
                    for ((k, v), m) in got.iter().zip(&marks) {
                        if let Some(j) = m {
                            let (tk, tv) = &template[*j as usize];
                            assert_eq!((k.as_ref(), v.as_ref()), (tk.as_str(), tv.as_str()), "{xml}");
                        }
                    }
                    marks
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a, b);
                    Vec::new()
                }
                (a, b) => panic!("{xml}: by name {a:?}, by template {b:?}"),
            }
        }

        fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        }

        #[test]
        fn blocks_read_against_a_template_give_the_pairs_read_by_name() {
            let first = kv(&[
                ("Metric Name", "TIME"),
                ("CPU Cores", "2"),
                ("pid", "100"),
                ("Hostname", "vm"),
                ("Dup", "a"),
                ("Dup", "b"),
                ("Amp", "x & y"),
            ]);
            let t = &first;
            let plain = |p: &[(&str, &str)]| block(&kv(p), "</metadata>");
            // The same block: every plain pair found as the template's.
            let same = block(
                &first[..6],
                "<attribute><name>Amp</name><value>x &amp; y</value></attribute></metadata>",
            );
            assert_eq!(
                check_by_template(t, &same),
                vec![None; 7],
                "an entity: read by the XML parser"
            );
            let same = block(&first[..6], "</metadata>");
            assert_eq!(check_by_template(t, &same), [0, 1, 2, 3, 4, 5].map(Some));
            // Another value, a new key, a key left out, the order changed, a duplicate's value.
            let other = plain(&[
                ("Metric Name", "TIME"),
                ("pid", "101"),
                ("New", "n"),
                ("Hostname", "vm"),
                ("CPU Cores", "2"),
                ("Dup", "b"),
            ]);
            assert_eq!(
                check_by_template(t, &other),
                [Some(0), None, None, Some(3), Some(1), None]
            );
            // A key that only starts like the template's, an empty value, the template's last pair
            // (not plain) written plainly.
            let near = plain(&[("Metric Names", "TIME"), ("CPU Cores", ""), ("Amp", "x y")]);
            assert_eq!(check_by_template(t, &near), [None, None, None]);
            // Spaced otherwise, CDATA, an empty element, a truncated block, broken XML.
            for odd in [
                "<metadata> <attribute><name>pid</name><value>100</value></attribute></metadata>".to_string(),
                "<metadata><attribute><name>pid</name><value><![CDATA[100]]></value></attribute></metadata>"
                    .to_string(),
                "<metadata><attribute><name>pid</name><value/></attribute></metadata>".to_string(),
                block(&first[..3], ""),
                block(&first[..3], "<attribute><name>x</value></attribute></metadata>"),
                "<metadata></metadata>".to_string(),
            ] {
                check_by_template(t, &odd);
            }
            // An empty template.
            assert_eq!(check_by_template(&[], &same), vec![None; 6]);
        }

        proptest! {
            #[test]
            fn blocks_read_against_any_template_give_the_pairs_read_by_name(
                first in proptest::collection::vec(("[a-c]{0,2}", "[a-c&<\r]{0,2}"), 0..5),
                pairs in proptest::collection::vec(("[a-c]{0,2}", "[a-c&\r]{0,2}"), 0..6),
                tail in "</metadata>|</metadata>x|<attribute>|"
            ) {
                check_by_template(&first, &block(&pairs, &tail));
                let mut mixed = first.clone();
                mixed.extend(pairs);
                check_by_template(&first, &block(&mixed, &tail));
            }

            #[test]
            fn the_scan_gives_what_the_xml_parser_gives(
                pairs in proptest::collection::vec(("[ -~é]{0,8}", "[ -~é\r]{0,8}"), 0..5),
                tail in "</metadata>|</metadata>x|<attribute>|"
            ) {
                let xml = block(&pairs, &tail);
                if let Some(fast) = plain_pairs(&xml) {
                    prop_assert_eq!(Ok(fast), xml_pairs(&xml));
                }
            }
        }
    }
}
