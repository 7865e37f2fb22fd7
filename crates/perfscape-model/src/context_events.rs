//! Context user events (`base : a => b`, TAU's user events measured in a callpath) linked to
//! the interval event of their callpath and to their base user event, when a profile is
//! finished ([`crate::ProfileBuilder::finish`]).

use crate::event::{AtomicEvent, CALLPATH_SEPARATOR, Event, normalize_timer_name};
use crate::event_index::{EventIndex, write_name};
use crate::ids::{AtomicEventId, EventId};
use rustc_hash::FxHashMap as HashMap;

/// The user events of `atomic_names`, with context events (`base : a => b`) linked to the
/// interval event of their callpath and to their base event.
pub(crate) fn link_context_events(
    events: &[Event],
    event_index: &EventIndex,
    atomic_names: &[String],
    atomic_index: &HashMap<String, AtomicEventId>,
) -> Vec<AtomicEvent> {
    // Paths without their first frame, to attach context user events (TAU writes their
    // callpath without the `.TAU application` root). Ambiguous keys map to None. Built only
    // when some user event has a context.
    let mut without_root: HashMap<String, Option<EventId>> = HashMap::default();
    if atomic_names.iter().any(|n| n.contains(" : ")) {
        let mut name = String::new();
        for i in 0..events.len() {
            if events[i].depth < 2 {
                continue;
            }
            name.clear();
            write_name(events, EventId::from(i), &mut name);
            if let Some(pos) = name.find(CALLPATH_SEPARATOR) {
                without_root
                    .entry(name[pos + CALLPATH_SEPARATOR.len()..].to_string())
                    .and_modify(|v| *v = None)
                    .or_insert(Some(EventId::from(i)));
            }
        }
    }
    let resolve = |path: &str| -> Option<EventId> {
        let path = normalize_timer_name(path);
        event_index
            .resolve(events, path.as_ref())
            .or_else(|| without_root.get(path.as_ref()).copied().flatten())
    };
    atomic_names
        .iter()
        .map(|name| {
            // Split at the first ` : ` whose right side names an interval event; failing
            // that, at the first one followed by a callpath (`a => b`), unresolved.
            let splits: Vec<usize> = name.match_indices(" : ").map(|(i, _)| i).collect();
            let resolved = splits
                .iter()
                .find_map(|&i| resolve(&name[i + 3..]).map(|ctx| (i, Some(ctx))));
            let found = resolved.or_else(|| {
                splits
                    .iter()
                    .find(|&&i| name[i + 3..].contains("=>"))
                    .map(|&i| (i, None))
            });
            match found {
                Some((split, ctx)) => {
                    let base_name = name[..split].to_string();
                    AtomicEvent {
                        name: name.clone(),
                        context: ctx,
                        context_path: Some(normalize_timer_name(&name[split + 3..]).into_owned()),
                        base: atomic_index.get(base_name.as_str()).copied(),
                        base_name: Some(base_name),
                    }
                }
                None => AtomicEvent {
                    name: name.clone(),
                    context: None,
                    context_path: None,
                    base: None,
                    base_name: None,
                },
            }
        })
        .collect()
}
