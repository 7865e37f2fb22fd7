//! TAU's `<metadata>` XML block: `<attribute><name>K</name><value>V</value></attribute>...`.
//!
//! It appears on line 2 of every `profile.N.C.T` file and inside snapshot/merged XML.

use quick_xml::Reader;
use quick_xml::events::Event;

/// Parses a `<metadata>...</metadata>` element into key/value pairs, in document order.
///
/// Entity references (`&lt;`, `&#10;`) and CDATA are decoded. Errors name the byte offset
/// within `xml` and what was expected.
pub fn parse_metadata(xml: &str) -> Result<Vec<(String, String)>, String> {
    let mut reader = Reader::from_str(xml);
    let mut out = Vec::new();
    let mut name: Option<String> = None;
    let mut value: Option<String> = None;
    // Which text field is being collected: 1 = name, 2 = value.
    let mut field = 0u8;
    let mut text = String::new();
    loop {
        let pos = reader.buffer_position();
        let ev = reader
            .read_event()
            .map_err(|e| format!("metadata XML at byte {pos}: {e}"))?;
        match ev {
            Event::Start(e) => match e.name().as_ref() {
                "name" => {
                    field = 1;
                    text.clear();
                }
                "value" => {
                    field = 2;
                    text.clear();
                }
                "attribute" => {
                    name = None;
                    value = None;
                }
                _ => {}
            },
            Event::Empty(e) => {
                if e.name().as_ref() == "value" {
                    value = Some(String::new());
                } else if e.name().as_ref() == "name" {
                    name = Some(String::new());
                }
            }
            Event::Text(t) if field != 0 => {
                text.push_str(&t.xml10_content());
            }
            Event::CData(t) if field != 0 => {
                text.push_str(&t.xml10_content());
            }
            Event::GeneralRef(r) if field != 0 => {
                if let Ok(Some(ch)) = r.resolve_char_ref() {
                    text.push(ch);
                } else {
                    let ent = r.xml10_content();
                    match quick_xml::escape::resolve_predefined_entity(&ent) {
                        Some(s) => text.push_str(s),
                        None => return Err(format!("metadata XML at byte {pos}: unknown entity `&{ent};`")),
                    }
                }
            }
            Event::End(e) => match e.name().as_ref() {
                "name" => {
                    name = Some(std::mem::take(&mut text));
                    field = 0;
                }
                "value" => {
                    value = Some(std::mem::take(&mut text));
                    field = 0;
                }
                "attribute" => match (name.take(), value.take()) {
                    (Some(n), Some(v)) => out.push((n, v)),
                    (Some(n), None) => out.push((n, String::new())),
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
        assert_eq!(
            m,
            vec![
                ("Metric Name".to_string(), "TIME".to_string()),
                ("Cmd".to_string(), "a <b> & c!".to_string()),
                ("Empty".to_string(), String::new()),
                ("E2".to_string(), String::new()),
            ]
        );
    }

    #[test]
    fn rejects_broken_xml() {
        assert!(parse_metadata("<metadata><attribute><name>x</value></attribute></metadata>").is_err());
    }
}
