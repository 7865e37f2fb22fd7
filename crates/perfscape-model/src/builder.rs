//! [`ProfileBuilder`]: the one way readers turn what they parsed into a [`Profile`].
//!
//! Readers hand over one thread at a time ([`ThreadData`]), threads in ascending
//! [`ThreadId`] order. The builder interns event, group and user-event names, appends the
//! values to the per-event columns and, in [`ProfileBuilder::finish`], links callpaths to
//! their parents and routines and context user events to their callpaths.

use crate::cell_rows::CellRows;
use crate::columns::AtomicColumn;
use crate::context_events::link_context_events;
use crate::event::{
    CALLPATH_SEPARATOR, Event, EventKind, callpath_leaf, callpath_parent, normalize_timer_name,
};
use crate::event_index::{EventIndex, write_name};
use crate::ids::{AtomicEventId, EventId, GroupId, ThreadId, ThreadIndex};
use crate::metadata::MetadataBuilder;
use crate::metric::Metric;
use crate::profile::{CallTree, Profile};
use crate::shared::Shared;
use crate::shared::{SharedList, SharedStr};
use crate::thread_data::{BuildError, RowEvent, ThreadData};
use rustc_hash::FxHashMap as HashMap;

/// What an event takes from its frame's text: the kind and the throttled mark of the frame's
/// last frame ([`callpath_leaf`]), as [`Event`] documents them. Found once per distinct frame
/// and kept with its shared text (`Shared::frame_with`), not once per call-tree node.
#[derive(Clone, Copy, Debug)]
struct FrameFacts {
    kind: EventKind,
    throttled: bool,
}

impl FrameFacts {
    /// The facts of the frame text `frame`.
    fn of(frame: &str) -> Self {
        let leaf = callpath_leaf(frame);
        Self {
            kind: EventKind::of_leaf(leaf),
            throttled: leaf.ends_with("[THROTTLED]"),
        }
    }
}

/// One frame of a call tree, made ready once for every node that has it
/// ([`ProfileBuilder::node_frame`]): its shared text, the hash of that text, what an event
/// takes from it (its kind and throttled mark) and the number of its nodes' group text. A
/// reader that interns 10^5 nodes of 10^4 frames ([`ProfileBuilder::intern_node_frame`])
/// then trims, hashes and looks up each frame's text once, not once per node.
#[derive(Clone, Debug)]
pub struct NodeFrame {
    text: SharedStr,
    text_hash: u64,
    facts: FrameFacts,
    /// The group text's number in the builder's `raw_group_texts`.
    raw_groups: u32,
}

/// Something the builder did that a user should know about (reported with the load).
#[derive(Debug, Clone, PartialEq)]
pub struct BuildNote {
    /// Thread concerned.
    pub thread: ThreadId,
    /// What happened.
    pub message: String,
}

/// Incrementally builds a [`Profile`]; see the module documentation.
#[derive(Debug)]
pub struct ProfileBuilder {
    metrics: Vec<Metric>,
    threads: Vec<ThreadId>,
    metadata: MetadataBuilder,
    groups: Vec<String>,
    group_index: HashMap<String, GroupId>,
    events: Vec<Event>,
    /// The one copy of each frame text and group list the events point to, each text with
    /// its facts.
    shared: Shared<FrameFacts>,
    /// The group text last applied to each event (to skip re-parsing it on every thread).
    raw_groups: Vec<u32>,
    /// Distinct group texts (`raw_groups` indexes it; 0 is "none yet"): call trees repeat a
    /// few texts over 10^5 events.
    raw_group_texts: Vec<String>,
    raw_group_index: HashMap<String, u32>,
    /// Per group text (`raw_group_texts` index), the list it gives an event without groups.
    fresh_group_lists: Vec<Option<SharedList<GroupId>>>,
    /// The `raw_groups` text the last new event took its list from (0: none yet).
    last_fresh_text: u32,
    /// Events keyed by (parent, frame). A callpath interned by whole name before its parent
    /// path is an event is keyed (None, whole name) until [`ProfileBuilder::finish`] links
    /// it to its parent.
    event_index: EventIndex,
    /// Callpath events interned by whole name, to link in `finish`.
    named_callpaths: Vec<EventId>,
    /// The last callpath looked up by name, with the events of its prefixes.
    path_cache: paths::PathCache,
    /// The (event, thread) cells, in arrival order.
    cells: CellRows,
    atomic_names: Vec<String>,
    atomic_index: HashMap<String, AtomicEventId>,
    atomic: Vec<AtomicColumn>,
    notes: Vec<BuildNote>,
    /// Thread totals given by the reader: T x M values, NaN-free flags in `has_total`.
    totals: Vec<f64>,
    has_total: Vec<bool>,
    /// (event, attribute name) -> index in `event_attributes`.
    attribute_index: HashMap<(EventId, String), usize>,
    event_attributes: Vec<(EventId, String, String)>,
    /// The events of the last thread's rows named by name (not by event id), in row order:
    /// the TAU files of one run list their timers in one order, so the k-th named row of the
    /// next thread is first compared with this event's name (one string comparison instead
    /// of a hash lookup).
    last_named: Vec<EventId>,
    /// Per event, its position in `last_named` (stale when `last_named[pos] != e`).
    last_named_pos: Vec<u32>,
}

impl ProfileBuilder {
    /// A builder for a profile with the given metrics (in display order).
    pub fn new(metrics: Vec<Metric>) -> Self {
        let n_metrics = metrics.len();
        Self {
            metrics,
            threads: Vec::new(),
            metadata: MetadataBuilder::default(),
            groups: Vec::new(),
            group_index: HashMap::default(),
            events: Vec::new(),
            shared: Shared::default(),
            raw_groups: Vec::new(),
            raw_group_texts: vec![String::from("\u{0}")],
            raw_group_index: HashMap::default(),
            fresh_group_lists: Vec::new(),
            last_fresh_text: 0,
            event_index: EventIndex::default(),
            named_callpaths: Vec::new(),
            path_cache: paths::PathCache::default(),
            cells: CellRows::new(n_metrics),
            atomic_names: Vec::new(),
            atomic_index: HashMap::default(),
            atomic: Vec::new(),
            notes: Vec::new(),
            totals: Vec::new(),
            has_total: Vec::new(),
            attribute_index: HashMap::default(),
            event_attributes: Vec::new(),
            last_named: Vec::new(),
            last_named_pos: Vec::new(),
        }
    }

    /// The metrics the builder was created with.
    pub fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    /// The whole name of event `e` (an id this builder returned): its frames from the root
    /// joined by `" => "`. A callpath interned by name before its parent path was an event
    /// is linked to its parent only in [`ProfileBuilder::finish`]; until then its whole name
    /// is its frame.
    pub fn event_name(&self, e: EventId) -> String {
        let mut out = String::new();
        write_name(&self.events, e, &mut out);
        out
    }

    /// Reserves room for `additional` more interval events (a reader that knows its call
    /// tree's size avoids growing the event array by doubling: a copy of it at each step).
    /// Amortized, as [`Vec::reserve`]: a later thread of a tree that is mostly interned
    /// already does not double the arrays.
    pub fn reserve_events(&mut self, additional: usize) {
        self.events.reserve(additional);
        self.event_index.reserve(&self.events, additional);
        self.raw_groups.reserve(additional);
        self.cells.reserve_events(additional);
    }

    /// Announces that about `n` threads will be added: from the second thread on, each cell
    /// is then written in its final place, not into drafts copied at the end. A hint only:
    /// more threads, or many more events than the first thread has, still work (slower).
    pub fn expect_threads(&mut self, n: usize) {
        self.cells.expect_threads(n);
    }

    /// Number of threads added so far.
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    fn intern_group(&mut self, name: &str) -> GroupId {
        if let Some(&g) = self.group_index.get(name) {
            return g;
        }
        let g = GroupId::from(self.groups.len());
        self.groups.push(name.to_string());
        self.group_index.insert(name.to_string(), g);
        g
    }

    fn add_groups(&mut self, e: EventId, raw: &str) {
        let current = self.raw_groups[e.index()];
        if self.raw_group_texts[current as usize] == raw {
            return;
        }
        // A new event given a text an earlier new event was given gets the same list (a call
        // tree gives its 10^5 nodes a few texts): one lookup, no splitting.
        let fresh = current == 0 && self.events[e.index()].groups.is_empty();
        // The text the last new event was given first (consecutive nodes of a call tree mostly
        // have the same one): a comparison instead of a hash lookup.
        let last = self.last_fresh_text as usize;
        let known = if fresh && last != 0 && self.raw_group_texts[last] == raw {
            Some(self.last_fresh_text)
        } else if fresh {
            self.raw_group_index.get(raw).copied()
        } else {
            None
        };
        if let Some(k) = known
            && self.take_fresh_list(e, k)
        {
            return;
        }
        let mut groups: Option<Vec<GroupId>> = None;
        for g in raw.split('|').map(str::trim).filter(|g| !g.is_empty()) {
            let id = self.intern_group(g);
            let list = groups.get_or_insert_with(|| self.events[e.index()].groups.to_vec());
            if !list.contains(&id) {
                list.push(id);
            }
        }
        if let Some(list) = groups
            && list.len() != self.events[e.index()].groups.len()
        {
            self.events[e.index()].groups = self.shared.groups(&list);
        }
        let k = self.raw_group_text_id(raw);
        self.raw_groups[e.index()] = k;
        if fresh {
            let lists = &mut self.fresh_group_lists;
            if lists.len() <= k as usize {
                lists.resize(k as usize + 1, None);
            }
            lists[k as usize] = Some(self.events[e.index()].groups.clone());
            self.last_fresh_text = k;
        }
    }

    /// The number of the group text `raw` in `raw_group_texts`, added when new.
    fn raw_group_text_id(&mut self, raw: &str) -> u32 {
        if let Some(&k) = self.raw_group_index.get(raw) {
            return k;
        }
        let next = u32::try_from(self.raw_group_texts.len()).unwrap_or(u32::MAX);
        self.raw_group_index.insert(raw.to_string(), next);
        self.raw_group_texts.push(raw.to_string());
        next
    }

    /// [`ProfileBuilder::add_groups`] of the group text numbered `k` ([`NodeFrame`]'s): no
    /// text comparison or lookup when the event has that text already or is new and an
    /// earlier new event took its list from the same text.
    fn add_groups_of_text(&mut self, e: EventId, k: u32) {
        let current = self.raw_groups[e.index()];
        if current == k {
            return;
        }
        if current == 0 && self.events[e.index()].groups.is_empty() && self.take_fresh_list(e, k) {
            return;
        }
        let raw = self.raw_group_texts[k as usize].clone();
        self.add_groups(e, &raw);
    }

    /// Gives the new event `e` (no groups, no group text yet) the list an earlier new event
    /// took from group text `k`; false when none did.
    fn take_fresh_list(&mut self, e: EventId, k: u32) -> bool {
        let Some(Some(list)) = self.fresh_group_lists.get(k as usize) else {
            return false;
        };
        self.events[e.index()].groups = list.clone();
        self.raw_groups[e.index()] = k;
        self.last_fresh_text = k;
        true
    }

    /// Declares an event without giving it a value on any thread (e.g. a TAU line with zero
    /// calls, which TAU's tools do not count as the thread having the event). Returns its id.
    pub fn declare_event(&mut self, raw_name: &str, raw_groups: &str) -> EventId {
        let name = normalize_timer_name(raw_name);
        self.intern_event(&name, raw_groups)
    }

    /// Sets attribute `name` of the event named `raw_name` (declared if new) to `value`: a
    /// description of the call-tree node that is not a measurement (see
    /// [`Profile::event_attributes`]). Setting it again with another value (another thread's)
    /// keeps every distinct value, joined with `, ` in the order given; nothing is dropped.
    pub fn set_event_attribute(&mut self, raw_name: &str, name: &str, value: &str) -> EventId {
        let e = self.declare_event(raw_name, "");
        self.set_attribute(e, name, value);
        e
    }

    /// Sets attribute `name` of event `e` (an id this builder returned) to `value`, as
    /// [`ProfileBuilder::set_event_attribute`] does.
    pub fn set_attribute(&mut self, e: EventId, name: &str, value: &str) {
        match self.attribute_index.get(&(e, name.to_string())) {
            Some(&i) => {
                let current = &mut self.event_attributes[i].2;
                if !current.split(", ").any(|v| v == value) {
                    current.push_str(", ");
                    current.push_str(value);
                }
            }
            None => {
                self.attribute_index
                    .insert((e, name.to_string()), self.event_attributes.len());
                self.event_attributes
                    .push((e, name.to_string(), value.to_string()));
            }
        }
    }

    /// Interns the call-tree node with frame `frame` under node `parent` (`None`: a root, or a
    /// flat event) and returns its id; `raw_groups` (TAU's `|`-separated list) are added to
    /// its groups. The way call-tree readers build their events: no whole name is stored.
    /// `frame` is one frame (it is trimmed; a `=>` in it would make it a path, so readers
    /// write it otherwise, e.g. `= >`).
    pub fn intern_node(&mut self, parent: Option<EventId>, frame: &str, raw_groups: &str) -> EventId {
        let frame = frame.trim();
        let Some(p) = parent else {
            return self.intern_event(&normalize_timer_name(frame), raw_groups);
        };
        // One hash of the key for the lookup and, for a new node, the insert.
        let hash = self.event_index.hash(Some(p), frame);
        let id = match self.event_index.get_hashed(&self.events, Some(p), frame, hash) {
            Some(id) => id,
            None => {
                let depth = self.events[p.index()].depth.saturating_add(1);
                self.push_event(Some(p), frame, depth, hash)
            }
        };
        self.add_groups(id, raw_groups);
        id
    }

    /// The frame `frame` (trimmed, as [`ProfileBuilder::intern_node`] trims it) with the
    /// group text `raw_groups` of its nodes, made ready for
    /// [`ProfileBuilder::intern_node_frame`].
    pub fn node_frame(&mut self, frame: &str, raw_groups: &str) -> NodeFrame {
        let frame = frame.trim();
        let (text, facts) = self.shared.frame_with(frame, FrameFacts::of);
        NodeFrame {
            text_hash: self.event_index.text_hash(frame),
            text,
            facts,
            raw_groups: self.raw_group_text_id(raw_groups),
        }
    }

    /// [`ProfileBuilder::intern_node`] of a node below `parent` with the frame and groups of
    /// `frame` (from [`ProfileBuilder::node_frame`] of this builder): the same event, found
    /// or made without hashing or looking up the frame's text again.
    ///
    /// Panics when `parent` is not an event of this builder, or when `frame` was made by
    /// another builder that has more group texts than this one.
    pub fn intern_node_frame(&mut self, parent: EventId, frame: &NodeFrame) -> EventId {
        let hash = self.event_index.hash_with_text(Some(parent), frame.text_hash);
        let id = match self
            .event_index
            .get_hashed(&self.events, Some(parent), &frame.text, hash)
        {
            Some(id) => id,
            None => {
                let depth = self.events[parent.index()].depth.saturating_add(1);
                self.push_shared_event(Some(parent), frame.text.clone(), frame.facts, depth, hash)
            }
        };
        self.add_groups_of_text(id, frame.raw_groups);
        id
    }

    /// Adds the event `(parent, frame)`, which the caller looked up and did not find; `hash`
    /// is its key's [`EventIndex::hash`].
    fn push_event(&mut self, parent: Option<EventId>, frame: &str, depth: u32, hash: u64) -> EventId {
        let (frame_text, facts) = self.shared.frame_with(frame, FrameFacts::of);
        self.push_shared_event(parent, frame_text, facts, depth, hash)
    }

    /// [`ProfileBuilder::push_event`] of a frame already shared, with its facts.
    fn push_shared_event(
        &mut self,
        parent: Option<EventId>,
        frame_text: SharedStr,
        facts: FrameFacts,
        depth: u32,
        hash: u64,
    ) -> EventId {
        let id = EventId::from(self.events.len());
        let no_groups = self.shared.groups(&[]);
        self.events.push(Event::new(
            frame_text,
            no_groups,
            facts.kind,
            facts.throttled,
            depth,
            parent,
            None,
        ));
        self.raw_groups.push(0);
        // Both callers looked the key up and found nothing.
        self.event_index.insert_absent_hashed(&self.events, id, hash);
        self.cells.push_event();
        id
    }

    /// Interns an already normalized user event name.
    fn intern_atomic(&mut self, name: &str) -> AtomicEventId {
        if let Some(&id) = self.atomic_index.get(name) {
            return id;
        }
        let id = AtomicEventId::from(self.atomic_names.len());
        self.atomic_names.push(name.to_string());
        self.atomic_index.insert(name.to_string(), id);
        self.atomic.push(AtomicColumn::default());
        id
    }

    /// Adds one thread's data. Threads must come in strictly ascending [`ThreadId`] order.
    ///
    /// A timer or user event listed twice by the same thread is merged as ParaProf merges it
    /// (TAU's `perfdmf` `TauDataSource`): timer values and calls are summed; user events combine
    /// counts, min, max, sums of squares and the count-weighted mean. Each merge is noted.
    pub fn add_thread(&mut self, id: ThreadId, data: ThreadData) -> Result<ThreadIndex, BuildError> {
        self.check_thread(self.threads.last().copied(), id, &data)?;
        let t = self.begin_thread(id, &data);
        self.cells.reserve(data.timer_count());
        let mut events = Vec::with_capacity(data.timer_count());
        self.resolve_rows(&data, &mut events);
        for ((_, calls, subcalls, exclusive, inclusive), &e) in data.timer_rows().zip(&events) {
            self.add_cell(id, t, e, [calls, subcalls], exclusive, inclusive);
        }
        self.add_atomics(id, t, &data);
        Ok(t)
    }

    /// Appends to `out` the event of each of `data`'s timer rows, in row order: a row named
    /// by event id is that event; one named by its whole name is interned (its groups added),
    /// looked for first where the last thread's named rows put it.
    pub(super) fn resolve_rows(&mut self, data: &ThreadData, out: &mut Vec<EventId>) {
        if self.events.is_empty() {
            // The first thread's rows are nearly all new events: room for them at once, not
            // by doubling (a rehash of every event's key at each step).
            self.reserve_events(data.timer_count());
        }
        let last_named = std::mem::take(&mut self.last_named);
        let mut named = Vec::with_capacity(last_named.len());
        // Where this thread's next named row is expected in the last thread's rows: one past
        // the last match, so a row inserted or left out costs one lookup, not the rest.
        let mut cursor = 0;
        for (row, ..) in data.timer_rows() {
            let e = match row {
                RowEvent::Name(name, groups) => {
                    let e = match last_named.get(cursor) {
                        // The event `intern_event` would find (names are unique).
                        Some(&c) if self.is_named(c, name) => {
                            self.add_groups(c, groups);
                            cursor += 1;
                            c
                        }
                        _ => {
                            let e = self.intern_event(name, groups);
                            if let Some(&p) = self.last_named_pos.get(e.index())
                                && last_named.get(p as usize) == Some(&e)
                            {
                                cursor = p as usize + 1;
                            }
                            e
                        }
                    };
                    named.push(e);
                    e
                }
                RowEvent::Id(e) => e,
            };
            out.push(e);
        }
        // Events only grow in number; a position past u32::MAX is never matched again.
        if !named.is_empty() {
            self.last_named_pos.resize(self.events.len(), u32::MAX);
        }
        for (p, e) in named.iter().enumerate() {
            self.last_named_pos[e.index()] = u32::try_from(p).unwrap_or(u32::MAX);
        }
        self.last_named = named;
    }

    /// Adds the cell (e, t) of thread `id`; a second cell of `e` on the same thread is added
    /// to the first and noted (ParaProf sums a timer listed twice).
    #[inline]
    pub(crate) fn add_cell(
        &mut self,
        id: ThreadId,
        t: ThreadIndex,
        e: EventId,
        [calls, subcalls]: [f64; 2],
        exclusive: &[f64],
        inclusive: &[f64],
    ) {
        if !self.cells.add(e, t, calls, subcalls, exclusive, inclusive) {
            self.note_summed(id, e);
        }
    }

    /// Notes that thread `id` listed event `e` twice (its values were summed).
    #[cold]
    pub(super) fn note_summed(&mut self, id: ThreadId, e: EventId) {
        let mut name = String::new();
        write_name(&self.events, e, &mut name);
        self.notes.push(BuildNote {
            thread: id,
            message: format!("timer `{name}` is listed more than once; its values were summed"),
        });
    }

    /// Adds thread `t`'s cells of `events` given as whole columns (`2 + 2M` arrays in
    /// [`crate::IntervalColumns`] order, each as long as `events`): adopted as they are when
    /// `t` is the first thread and `events` ascend past its other cells, else added cell by
    /// cell (a second cell of an event on the thread is summed and noted, as
    /// [`ProfileBuilder::add_cell`] does).
    pub(crate) fn add_columns(
        &mut self,
        id: ThreadId,
        t: ThreadIndex,
        events: &[EventId],
        columns: Vec<Vec<f64>>,
    ) {
        let Err(columns) = self.cells.add_columns(events, t, columns) else {
            return;
        };
        let n = self.metrics.len();
        let mut exclusive = vec![0.0; n];
        let mut inclusive = vec![0.0; n];
        for (r, &e) in events.iter().enumerate() {
            for m in 0..n {
                exclusive[m] = columns[2 + 2 * m][r];
                inclusive[m] = columns[3 + 2 * m][r];
            }
            self.add_cell(id, t, e, [columns[0][r], columns[1][r]], &exclusive, &inclusive);
        }
    }

    /// Reserves room for `additional` more (event, thread) cells (amortized, as
    /// [`Vec::reserve`]). A reader that knows its run's size (threads x rows of a thread) avoids
    /// growing the cell arrays by doubling, where each step copies them; room never written
    /// is not resident.
    pub fn reserve_cells(&mut self, additional: usize) {
        self.cells.reserve(additional);
    }

    /// Number of interval events interned so far.
    pub(crate) fn event_count(&self) -> usize {
        self.events.len()
    }

    /// Sets the total of thread `t` (as [`ThreadData::set_total`] does); ignored unless it has
    /// one value per metric.
    pub(crate) fn set_thread_total(&mut self, t: ThreadIndex, total: &[f64]) {
        let m = self.metrics.len();
        if total.len() != m || m == 0 {
            return;
        }
        if let Some(slot) = self.totals.get_mut(t.index() * m..(t.index() + 1) * m) {
            slot.copy_from_slice(total);
        }
        if let Some(h) = self.has_total.get_mut(t.index()) {
            *h = true;
        }
    }

    /// Notes collected so far (merged duplicates, ...).
    pub fn notes(&self) -> &[BuildNote] {
        &self.notes
    }

    /// Links callpaths and context events, and returns the profile and the builder's notes.
    pub fn finish(self) -> (Profile, Vec<BuildNote>) {
        let ProfileBuilder {
            metrics,
            threads,
            metadata,
            groups,
            mut events,
            event_index,
            named_callpaths,
            path_cache: _,
            cells,
            atomic_names,
            atomic_index,
            mut atomic,
            notes,
            mut event_attributes,
            totals,
            has_total,
            group_index,
            shared,
            raw_groups,
            raw_group_texts,
            raw_group_index,
            fresh_group_lists,
            last_fresh_text: _,
            attribute_index,
            last_named,
            last_named_pos,
        } = self;
        // What only the reading needed is freed now, before the arena and the call tree are
        // made (a `..` pattern would keep it until the end of this function: 4 bytes an event
        // for `raw_groups` alone, at the load's peak).
        // The frame interner is kept for the links below, without its whole callpath names.
        let mut shared = shared;
        shared.forget_long_frames();
        drop((group_index, raw_groups, raw_group_texts, raw_group_index));
        drop((fresh_group_lists, attribute_index, last_named, last_named_pos));
        let (totals, has_total) = if has_total.iter().any(|&h| h) {
            (totals, has_total)
        } else {
            (Vec::new(), Vec::new())
        };
        // Stable: each event's attributes keep the order they were set in.
        event_attributes.sort_by_key(|(e, ..)| *e);
        // Callpaths interned by whole name (they came before their parent path was an event,
        // see `paths.rs`): link each to the event named by its path without
        // the last frame, when there is one, and keep only its own frame: the interner's copy
        // of it (10^6 callpaths of 10^3-10^4 routines share a few texts, as a call tree's
        // nodes do), usually the flat event's own.
        let links: Vec<(EventId, EventId)> = named_callpaths
            .iter()
            .filter_map(|&e| {
                let parent = callpath_parent(&events[e.index()].frame)?;
                event_index.resolve(&events, parent).map(|p| (e, p))
            })
            .collect();
        let relinked = !links.is_empty();
        for (e, p) in links {
            let ev = &mut events[e.index()];
            let cut = callpath_parent(&ev.frame).map_or(0, str::len) + CALLPATH_SEPARATOR.len();
            ev.frame = shared.frame_with(&ev.frame[cut..], FrameFacts::of).0;
            ev.set_parent(Some(p));
        }
        drop(shared);
        // Keys changed only for the relinked events; otherwise the index is already right.
        let event_index = if relinked {
            EventIndex::build(&events)
        } else {
            event_index
        };
        // The routine depends on the frame's text alone: found once per shared frame (a call
        // tree's 10^5 nodes share 10^3-10^4 frames), not once per node.
        let mut routine_of_frame: HashMap<usize, Option<EventId>> = HashMap::default();
        for i in 0..events.len() {
            let routine = if events[i].depth > 1 {
                let frame = &events[i].frame;
                *routine_of_frame
                    .entry(frame.address())
                    .or_insert_with(|| event_index.get(&events, None, callpath_leaf(frame)))
            } else {
                Some(EventId::from(i))
            };
            events[i].set_routine(routine);
        }
        drop(routine_of_frame);
        let atomic_events = link_context_events(&events, &event_index, &atomic_names, &atomic_index);
        let interval = cells.finish(events.len());
        for c in &mut atomic {
            c.shrink_to_fit();
        }
        let call_tree = CallTree::build(&events);
        let profile = Profile {
            metadata: metadata.finish(),
            threads,
            metrics,
            groups,
            events,
            event_index,
            interval,
            atomic_events,
            atomic_index,
            atomic,
            call_tree,
            event_attributes,
            totals,
            has_total,
        };
        (profile, notes)
    }
}

mod paths;
mod threads;

#[cfg(test)]
mod tests;
