//! Key/value metadata of a run (TAU's `<metadata>` block: host, TAU settings, timestamps...).
//!
//! Most keys have the same value on every thread; those are stored once (`common`). Keys
//! whose value differs between threads, or that only some threads have, are stored per
//! thread (`varying`).

use crate::ids::ThreadIndex;
use crate::thread_data::MetadataTemplate;
use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

/// Metadata of a profile: common key/values plus per-thread values of the keys that vary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Metadata {
    common: Vec<(String, String)>,
    varying: Vec<(String, Vec<(ThreadIndex, String)>)>,
}

impl Metadata {
    /// Metadata from its two tables (used by the binary decoder).
    pub(crate) fn from_parts(
        common: Vec<(String, String)>,
        varying: Vec<(String, Vec<(ThreadIndex, String)>)>,
    ) -> Self {
        Self { common, varying }
    }

    /// The same metadata for the threads `map` keeps, renumbered (`map[t]`: thread `t`'s new
    /// index, `None` when removed). A varying key keeps the values of the threads kept.
    pub(crate) fn with_threads(self, map: &[Option<ThreadIndex>]) -> Self {
        let varying = self
            .varying
            .into_iter()
            .map(|(k, values)| {
                let kept = values
                    .into_iter()
                    .filter_map(|(t, v)| Some((map.get(t.index()).copied().flatten()?, v)))
                    .collect();
                (k, kept)
            })
            .collect();
        Self {
            common: self.common,
            varying,
        }
    }

    /// Keys with the same value on every thread, in the order first seen.
    pub fn common(&self) -> &[(String, String)] {
        &self.common
    }

    /// Keys whose value differs between threads (or that some threads lack), each with the
    /// (thread, value) pairs of the threads that have it, ascending by thread.
    pub fn varying(&self) -> &[(String, Vec<(ThreadIndex, String)>)] {
        &self.varying
    }

    /// The value of `key` on `thread`, looking at common keys first.
    pub fn get(&self, thread: ThreadIndex, key: &str) -> Option<&str> {
        if let Some((_, v)) = self.common.iter().find(|(k, _)| k == key) {
            return Some(v);
        }
        let (_, values) = self.varying.iter().find(|(k, _)| k == key)?;
        let i = values.binary_search_by_key(&thread, |(t, _)| *t).ok()?;
        Some(&values[i].1)
    }

    /// The common value of `key`, if every thread has the same value.
    pub fn get_common(&self, key: &str) -> Option<&str> {
        self.common
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every key/value of one thread: the common ones followed by that thread's varying ones.
    pub fn for_thread(&self, thread: ThreadIndex) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = self
            .common
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        for (k, values) in &self.varying {
            if let Ok(i) = values.binary_search_by_key(&thread, |(t, _)| *t) {
                out.push((k, &values[i].1));
            }
        }
        out
    }
}

/// Builds [`Metadata`] one thread at a time, threads in ascending index order.
#[derive(Debug, Default)]
pub(crate) struct MetadataBuilder {
    common: Vec<(String, String)>,
    common_index: HashMap<String, usize>,
    varying: Vec<(String, Vec<(ThreadIndex, String)>)>,
    varying_index: HashMap<String, usize>,
    threads_seen: u32,
    /// The template of the last thread that had one, and per template pair the common pair
    /// it equals (key and value), found once for the template instead of once per thread;
    /// forgotten when the common pairs change.
    template: Option<(MetadataTemplate, Vec<Option<usize>>)>,
}

impl MetadataBuilder {
    /// Adds the metadata pairs of `thread` (the next thread): `(key, value)` in the thread's
    /// order, as [`MetadataBuilder::add_with_template`] without a template.
    #[cfg(test)]
    pub(crate) fn add<'a>(&mut self, thread: ThreadIndex, pairs: impl Iterator<Item = (&'a str, &'a str)>) {
        self.add_with_template(thread, None, pairs.map(|(k, v)| (None, k, v)));
    }

    /// Adds the metadata pairs of `thread` (the next thread): `(template pair, key, value)`
    /// in the thread's order, where `template pair` is the pair's number in `template` when
    /// it is one of them (a TAU thread's pairs equal to its run's first file's). A pair of a
    /// common key keeps it common when its value is the common value, else the key's values
    /// become per thread; a template pair is compared once per template, not per thread.
    pub(crate) fn add_with_template<'a>(
        &mut self,
        thread: ThreadIndex,
        template: Option<&MetadataTemplate>,
        pairs: impl Iterator<Item = (Option<u32>, &'a str, &'a str)>,
    ) {
        let first = self.threads_seen == 0;
        self.threads_seen += 1;
        if first {
            for (_, k, v) in pairs {
                if !self.common_index.contains_key(k) {
                    self.common_index.insert(k.to_string(), self.common.len());
                    self.common.push((k.to_string(), v.to_string()));
                }
            }
            return;
        }
        // Which common keys does this thread confirm?
        let mut confirmed = vec![false; self.common.len()];
        let mut demote: Vec<usize> = Vec::new();
        let mut extra: Vec<(&str, &str)> = Vec::new();
        // Threads list their keys in one order, mostly: the common key after the last one
        // found is compared first (one string comparison instead of a hash lookup).
        let mut next = 0;
        let known = template.and_then(|t| {
            self.match_template(t);
            self.template.take()
        });
        let matches: &[Option<usize>] = known.as_ref().map_or(&[], |(_, m)| m);
        for (j, k, v) in pairs {
            // A template pair whose common pair is known equal: no string is compared.
            if let Some(i) = j.and_then(|j| matches.get(j as usize).copied().flatten()) {
                next = i + 1;
                confirmed[i] = true;
                continue;
            }
            let found = match self.common.get(next) {
                Some((ck, _)) if ck == k => Some(next),
                _ => self.common_index.get(k).copied(),
            };
            if let Some(i) = found {
                next = i + 1;
                if confirmed[i] {
                    continue; // duplicate key on this thread: first value wins
                }
                confirmed[i] = true;
                if self.common[i].1 != v {
                    demote.push(i);
                    extra.push((k, v));
                }
            } else {
                extra.push((k, v));
            }
        }
        for (i, ok) in confirmed.iter().enumerate() {
            if !ok {
                demote.push(i);
            }
        }
        self.template = known;
        if !demote.is_empty() {
            self.template = None;
            demote.sort_unstable();
            demote.dedup();
            let previous = self.threads_seen - 1; // threads 0..previous had the common value
            let demoted: Vec<(String, String)> = demote.iter().map(|&i| self.common[i].clone()).collect();
            let keep: Vec<(String, String)> = self
                .common
                .drain(..)
                .enumerate()
                .filter(|(i, _)| demote.binary_search(i).is_err())
                .map(|(_, kv)| kv)
                .collect();
            self.common = keep;
            self.common_index = self
                .common
                .iter()
                .enumerate()
                .map(|(i, (k, _))| (k.clone(), i))
                .collect();
            for (k, v) in demoted {
                let values: Vec<(ThreadIndex, String)> =
                    (0..previous).map(|t| (ThreadIndex(t), v.clone())).collect();
                self.varying_index.insert(k.clone(), self.varying.len());
                self.varying.push((k, values));
            }
        }
        for (k, v) in extra {
            match self.varying_index.get(k) {
                Some(&i) => {
                    let values = &mut self.varying[i].1;
                    if values.last().is_none_or(|(t, _)| *t != thread) {
                        values.push((thread, v.to_string()));
                    }
                }
                None => {
                    self.varying_index.insert(k.to_string(), self.varying.len());
                    self.varying.push((k.to_string(), vec![(thread, v.to_string())]));
                }
            }
        }
    }

    /// Finds, per pair of `template`, the common pair with its key and value, unless they
    /// are known already (the template of the last call, and the common pairs unchanged).
    fn match_template(&mut self, template: &MetadataTemplate) {
        let known = self
            .template
            .as_ref()
            .is_some_and(|(t, _)| std::sync::Arc::ptr_eq(t, template));
        if !known {
            let matches = template
                .iter()
                .map(|(k, v)| {
                    self.common_index
                        .get(k.as_str())
                        .copied()
                        .filter(|&i| self.common[i].1 == *v)
                })
                .collect();
            self.template = Some((template.clone(), matches));
        }
    }

    pub(crate) fn finish(self) -> Metadata {
        Metadata {
            common: self.common,
            varying: self.varying,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn it<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Iterator<Item = (&'a str, &'a str)> {
        pairs.iter().copied()
    }

    #[test]
    fn splits_common_and_varying() {
        let mut b = MetadataBuilder::default();
        b.add(
            ThreadIndex(0),
            it(&[("host", "vm"), ("pid", "1"), ("only0", "x")]),
        );
        b.add(ThreadIndex(1), it(&[("host", "vm"), ("pid", "2")]));
        b.add(ThreadIndex(2), it(&[("host", "vm"), ("pid", "3"), ("late", "y")]));
        let m = b.finish();
        assert_eq!(m.common(), &kv(&[("host", "vm")])[..]);
        assert_eq!(m.get(ThreadIndex(1), "pid"), Some("2"));
        assert_eq!(m.get(ThreadIndex(0), "pid"), Some("1"));
        assert_eq!(m.get(ThreadIndex(0), "only0"), Some("x"));
        assert_eq!(m.get(ThreadIndex(1), "only0"), None);
        assert_eq!(m.get(ThreadIndex(2), "late"), Some("y"));
        assert_eq!(m.get(ThreadIndex(2), "host"), Some("vm"));
        assert_eq!(m.for_thread(ThreadIndex(2)).len(), 3);
    }

    #[test]
    fn template_pairs_give_the_metadata_of_the_same_pairs_given_as_text() {
        let template: MetadataTemplate = kv(&[("host", "vm"), ("cores", "2"), ("mpi", "4.1")]).into();
        // Per thread: (template pair or not, key, value); ranks 0 and 2 have their own
        // `cores`, rank 3 lists `host` twice.
        let t = |j: u32| {
            (
                Some(j),
                template[j as usize].0.as_str(),
                template[j as usize].1.as_str(),
            )
        };
        let threads: Vec<Vec<(Option<u32>, &str, &str)>> = vec![
            vec![t(0), (None, "cores", "8"), t(2)],
            vec![t(0), t(1), t(2), (None, "pid", "7")],
            vec![t(0), (None, "cores", "4"), t(2)],
            vec![(None, "host", "other"), t(0), t(1), t(2)],
            vec![t(2), t(1), t(0)],
        ];
        let mut with = MetadataBuilder::default();
        let mut without = MetadataBuilder::default();
        for (i, pairs) in threads.iter().enumerate() {
            let thread = ThreadIndex(i as u32);
            with.add_with_template(thread, Some(&template), pairs.iter().copied());
            without.add(thread, pairs.iter().map(|&(_, k, v)| (k, v)));
        }
        let (with, without) = (with.finish(), without.finish());
        assert_eq!(with, without);
        assert_eq!(with.common(), &kv(&[("mpi", "4.1")])[..]);
        assert_eq!(with.get(ThreadIndex(2), "cores"), Some("4"));
        assert_eq!(with.get(ThreadIndex(4), "cores"), Some("2"));
        assert_eq!(with.get(ThreadIndex(0), "cores"), Some("8"));
        assert_eq!(with.get(ThreadIndex(3), "host"), Some("other"));
        assert_eq!(with.get(ThreadIndex(1), "pid"), Some("7"));
    }
}
