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
}
