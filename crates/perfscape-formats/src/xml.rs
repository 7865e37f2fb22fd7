//! Small helpers over quick-xml shared by the XML-based readers (CUBE `anchor.xml`,
//! HPCToolkit `experiment.xml`): attribute lookup, text with entity references, line numbers.

use quick_xml::events::{BytesStart, Event};

/// The 1-based line of byte offset `byte` in `text`.
pub(crate) fn line_of(text: &str, byte: usize) -> usize {
    let end = byte.min(text.len());
    text.as_bytes()[..end].iter().filter(|&&b| b == b'\n').count() + 1
}

/// The decoded value of attribute `key` of an element, if present. Errors describe a
/// malformed attribute list.
pub(crate) fn attr(e: &BytesStart<'_>, key: &str) -> Result<Option<String>, String> {
    for a in e.attributes() {
        let a = a.map_err(|err| format!("malformed attribute in <{}>: {err}", e.name().as_ref()))?;
        if a.key.as_ref() == key {
            let v = a
                .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                .map_err(|err| format!("attribute `{key}` of <{}>: {err}", e.name().as_ref()))?;
            return Ok(Some(v.into_owned()));
        }
    }
    Ok(None)
}

/// Like [`attr`], but the attribute must be present.
pub(crate) fn required_attr(e: &BytesStart<'_>, key: &str) -> Result<String, String> {
    attr(e, key)?.ok_or_else(|| format!("<{}> has no `{key}` attribute", e.name().as_ref()))
}

/// What a numeric type accepts, for messages.
fn kind_of<T>() -> &'static str {
    let t = std::any::type_name::<T>();
    if t.starts_with('u') || t == "usize" {
        "a non-negative integer"
    } else if t.starts_with('i') {
        "an integer"
    } else {
        "a number"
    }
}

/// Parses a required numeric attribute.
pub(crate) fn num_attr<T: std::str::FromStr>(e: &BytesStart<'_>, key: &str) -> Result<T, String> {
    let v = required_attr(e, key)?;
    v.trim().parse().map_err(|_| {
        format!(
            "attribute `{key}` of <{}> is `{v}`, expected {}",
            e.name().as_ref(),
            kind_of::<T>()
        )
    })
}

/// Parses an optional numeric attribute.
pub(crate) fn opt_num_attr<T: std::str::FromStr>(e: &BytesStart<'_>, key: &str) -> Result<Option<T>, String> {
    match attr(e, key)? {
        None => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            format!(
                "attribute `{key}` of <{}> is `{v}`, expected {}",
                e.name().as_ref(),
                kind_of::<T>()
            )
        }),
    }
}

/// Appends the text carried by a text-like event (text, CDATA, entity or character
/// reference) to `acc`. Returns `Ok(false)` for events that carry no text.
pub(crate) fn push_text(acc: &mut String, ev: &Event<'_>) -> Result<bool, String> {
    match ev {
        Event::Text(t) => acc.push_str(&t.xml10_content()),
        Event::CData(t) => acc.push_str(&t.xml10_content()),
        Event::GeneralRef(r) => {
            if let Ok(Some(ch)) = r.resolve_char_ref() {
                acc.push(ch);
            } else {
                let ent = r.xml10_content();
                match quick_xml::escape::resolve_predefined_entity(&ent) {
                    Some(s) => acc.push_str(s),
                    None => return Err(format!("unknown entity `&{ent};`")),
                }
            }
        }
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quick_xml::Reader;

    #[test]
    fn attributes_text_and_lines() {
        let xml = "<a x=\"1 &amp; 2\" n=\"42\">\n<b>t &lt;&#65;&gt;<![CDATA[<c>]]></b></a>";
        let mut r = Reader::from_str(xml);
        let mut text = String::new();
        let mut seen_a = false;
        loop {
            match r.read_event().unwrap() {
                Event::Start(e) if e.name().as_ref() == "a" => {
                    seen_a = true;
                    assert_eq!(attr(&e, "x").unwrap().as_deref(), Some("1 & 2"));
                    assert_eq!(num_attr::<u32>(&e, "n").unwrap(), 42);
                    assert!(num_attr::<u32>(&e, "x").is_err());
                    assert!(required_attr(&e, "zz").is_err());
                    assert_eq!(opt_num_attr::<u32>(&e, "zz").unwrap(), None);
                }
                Event::Eof => break,
                ev => {
                    push_text(&mut text, &ev).unwrap();
                }
            }
        }
        assert!(seen_a);
        assert_eq!(text.trim(), "t <A><c>");
        assert_eq!(line_of(xml, 0), 1);
        assert_eq!(line_of(xml, 30), 2);
        assert_eq!(line_of(xml, 10_000), 2);
    }
}
