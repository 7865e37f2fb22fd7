//! Sample labels as thread and process numbers (see the parent module's documentation).

use rustc_hash::FxHashMap as HashMap;

/// A label value: string or number.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum LabelValue {
    /// A numeric label (`num`).
    Num(i64),
    /// A string label (`str`).
    Str(String),
}

impl std::fmt::Display for LabelValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LabelValue::Num(n) => write!(f, "{n}"),
            LabelValue::Str(s) => write!(f, "{s}"),
        }
    }
}

/// Numbers for the distinct label values (see the module documentation).
pub(super) struct Numbering {
    /// Number of each distinct value.
    pub(super) map: HashMap<LabelValue, u32>,
    /// Number of the samples without the label.
    pub(super) missing: u32,
    /// True when values were renumbered (not all of them integers fitting `u32`).
    pub(super) renumbered: bool,
}

impl Numbering {
    /// The number of value `v`.
    pub(super) fn get(&self, v: &LabelValue) -> u32 {
        self.map.get(v).copied().unwrap_or(self.missing)
    }
}

/// Numbers the distinct values: integers fitting `u32` keep their value (the samples without
/// the label get the next number); otherwise all are numbered 0, 1, ... in sorted order.
pub(super) fn number_values(values: impl Iterator<Item = Option<LabelValue>>) -> Numbering {
    let mut distinct: Vec<LabelValue> = Vec::new();
    let mut seen: HashMap<LabelValue, ()> = HashMap::default();
    let mut any_missing = false;
    for v in values {
        match v {
            Some(v) => {
                if seen.insert(v.clone(), ()).is_none() {
                    distinct.push(v);
                }
            }
            None => any_missing = true,
        }
    }
    distinct.sort();
    let all_fit = distinct
        .iter()
        .all(|v| matches!(v, LabelValue::Num(n) if u32::try_from(*n).is_ok_and(|n| n < u32::MAX)));
    if all_fit {
        let max = distinct
            .iter()
            .filter_map(|v| match v {
                LabelValue::Num(n) => u32::try_from(*n).ok(),
                LabelValue::Str(_) => None,
            })
            .max();
        let map = distinct
            .iter()
            .filter_map(|v| match v {
                LabelValue::Num(n) => u32::try_from(*n).ok().map(|n| (v.clone(), n)),
                LabelValue::Str(_) => None,
            })
            .collect();
        let missing = if any_missing {
            max.map_or(0, |m| m.saturating_add(1))
        } else {
            0
        };
        return Numbering {
            map,
            missing,
            renumbered: false,
        };
    }
    let map: HashMap<LabelValue, u32> = distinct
        .iter()
        .enumerate()
        .map(|(i, v)| (v.clone(), u32::try_from(i).unwrap_or(u32::MAX)))
        .collect();
    Numbering {
        missing: u32::try_from(distinct.len()).unwrap_or(u32::MAX),
        map,
        renumbered: true,
    }
}
