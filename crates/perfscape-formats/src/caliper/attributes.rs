//! What a Caliper attribute's name says about its values.
//!
//! Caliper's aggregation (`cali-query`, the `aggregate` service, Spot's cross-process
//! reduction) names each result attribute by the operators that made it, outermost first, in
//! front of the measured attribute: `min#inclusive#sum#time.duration` is the minimum over ranks
//! (`min`) of the inclusive (`inclusive`) per-rank sum (`sum`) of `time.duration`. The
//! operators are Caliper's aggregation kernels (`count`, `sum`, `min`, `max`, `avg`, `any`,
//! `scale`, `ratio`, `percent_total`, `variance`, `inclusive_*` written `inclusive#`, `iscale`,
//! `iratio`, `ipercent_total`; `avg.sum`/`avg.count` are the hidden helpers of `avg`).
//!
//! Rules (each from the operator's definition in Caliper's aggregation kernels):
//! - how values combine (across ranks, snapshots and call paths) follows the outermost
//!   operator: `sum`, `count`, `scale`, `percent_total` add up → sum; `min` → minimum; `max` →
//!   maximum; `avg` → mean; `ratio`, `variance` and operators perfscape does not know → not
//!   combinable. An attribute without an operator (a raw snapshot value, the aggregate service's
//!   `count`) adds up;
//! - `any` keeps one of the values it saw: a property of the region (RAJAPerf's `ProblemSize`,
//!   `Reps`, `BlockSize`, written `any#any#max#ProblemSize`), which Thicket keeps as per-node
//!   metadata: not a metric;
//! - an attribute holds inclusive values when one of its operators is inclusive (`inclusive`,
//!   `iscale`, `iratio`, `ipercent_total`); its exclusive twin has the same name without it
//!   (`inclusive#sum#time.duration` ↔ `sum#time.duration`), or, for Caliper's
//!   `time.exclusive` option, the same alias followed by ` (exc)` (`Min time/rank` ↔
//!   `Min time/rank (exc)`);
//! - `aggregate.slot` (node order) and the `avg` helpers are not values of the profile.

use perfscape_model::{Combine, Unit};

/// Caliper's aggregation operators, as they prefix attribute names.
const OPERATORS: &[&str] = &[
    "count",
    "sum",
    "min",
    "max",
    "avg",
    "any",
    "scale",
    "ratio",
    "percent_total",
    "variance",
    "inclusive",
    "iscale",
    "iratio",
    "ipercent_total",
    "avg.sum",
    "avg.count",
];

/// Operators whose result is an inclusive value (the node and everything below it).
const INCLUSIVE: &[&str] = &["inclusive", "iscale", "iratio", "ipercent_total"];

/// What an attribute is to the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A metric, combining its values by `combine`; `inclusive` when the values include the
    /// node's descendants.
    Metric {
        /// How its values combine.
        combine: Combine,
        /// True for inclusive values.
        inclusive: bool,
    },
    /// A property of the node (`any#...`): per-node metadata, not a metric.
    NodeAttribute,
    /// Node order (`aggregate.slot`) or an `avg` helper: not a value of the profile.
    Skipped,
}

/// The operators of `name`, outermost first, and the measured attribute: `min#sum#x` →
/// (`[min, sum]`, `x`). A prefix that is not an operator ends the list (it is part of the
/// attribute's own name).
pub fn operators(name: &str) -> (Vec<&str>, &str) {
    let mut ops = Vec::new();
    let mut rest = name;
    while let Some((op, tail)) = rest.split_once('#') {
        if !OPERATORS.contains(&op) {
            break;
        }
        ops.push(op);
        rest = tail;
    }
    (ops, rest)
}

/// The role of attribute `name` (see the module documentation).
pub fn role(name: &str) -> Role {
    let (ops, base) = operators(name);
    if base.contains("aggregate.slot") || ops.first().is_some_and(|o| o.starts_with("avg.")) {
        return Role::Skipped;
    }
    let combine = match ops.first().copied() {
        None
        | Some("sum" | "count" | "scale" | "iscale" | "percent_total" | "ipercent_total" | "inclusive") => {
            Combine::Sum
        }
        Some("min") => Combine::Min,
        Some("max") => Combine::Max,
        Some("avg") => Combine::Mean,
        Some("any") => return Role::NodeAttribute,
        Some(_) => Combine::NotCombinable,
    };
    Role::Metric {
        combine,
        inclusive: ops.iter().any(|o| INCLUSIVE.contains(o)),
    }
}

/// The name of the exclusive twin of inclusive attribute `name`: the same operators without
/// the inclusive one (`min#inclusive#sum#x` → `min#sum#x`, `iscale#x` → `scale#x`). `None`
/// when `name` is not inclusive.
pub fn exclusive_twin(name: &str) -> Option<String> {
    let (ops, base) = operators(name);
    let k = ops.iter().position(|o| INCLUSIVE.contains(o))?;
    let mut twin: Vec<&str> = ops.clone();
    match ops[k] {
        "inclusive" => {
            twin.remove(k);
        }
        "iscale" => twin[k] = "scale",
        "iratio" => twin[k] = "ratio",
        _ => twin[k] = "percent_total",
    }
    twin.push(base);
    Some(twin.join("#"))
}

/// The exclusive twin's alias of an inclusive attribute aliased `alias`: Caliper's
/// `time.exclusive` option names it `<alias> (exc)`.
pub fn exclusive_alias(alias: &str) -> String {
    format!("{alias} (exc)")
}

/// The unit of attribute `name` with `attribute.unit` `unit`.
///
/// The recorded unit wins (`sec`, `usec`, `nsec`, `byte(s)`, `count`, or a name kept as is).
/// Without one: Caliper's CUDA and ROCm activity durations (`cupti.*.duration`,
/// `rocm.*duration`) and `*.duration.ns` are nanoseconds (CUPTI/ROCm timestamps; Caliper's own
/// configurations scale them by 1e-9 to seconds), unless a `scale` operator changed them by a
/// factor the file does not record; other durations (`time.duration`, microseconds before
/// Caliper 2.0 and seconds since) are marked `unit not recorded`; ratios are `ratio`,
/// percentages `%`; everything else counts.
pub fn unit(name: &str, unit: Option<&str>) -> Unit {
    match unit.map(str::trim) {
        Some("sec" | "s" | "seconds") => return Unit::Seconds,
        Some("usec" | "us") => return Unit::Microseconds,
        Some("nsec" | "ns") => return Unit::Nanoseconds,
        Some("byte" | "bytes" | "B") => return Unit::Bytes,
        Some("count") => return Unit::Count,
        Some(other) if !other.is_empty() => return Unit::Other(other.to_string()),
        _ => {}
    }
    let (ops, base) = operators(name);
    let scaled = ops.iter().any(|o| matches!(*o, "scale" | "iscale"));
    if ops.iter().any(|o| matches!(*o, "ratio" | "iratio")) {
        return Unit::Other("ratio".into());
    }
    if ops
        .iter()
        .any(|o| matches!(*o, "percent_total" | "ipercent_total"))
    {
        return Unit::Other("%".into());
    }
    let device = (base.starts_with("cupti.") || base.starts_with("rocm.")) && base.ends_with("duration");
    if (device || base.ends_with(".duration.ns")) && !scaled {
        Unit::Nanoseconds
    } else if base.contains("time") || base.contains("duration") {
        Unit::Other("unit not recorded".into())
    } else {
        Unit::Count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_of_spot_rajaperf_and_cupti_attributes() {
        let metric = |combine, inclusive| Role::Metric { combine, inclusive };
        for (name, want) in [
            ("sum#time.duration", metric(Combine::Sum, false)),
            ("inclusive#sum#time.duration", metric(Combine::Sum, true)),
            ("min#inclusive#sum#time.duration", metric(Combine::Min, true)),
            ("max#inclusive#sum#time.duration", metric(Combine::Max, true)),
            ("avg#inclusive#sum#time.duration", metric(Combine::Mean, true)),
            ("sum#inclusive#sum#time.duration", metric(Combine::Sum, true)),
            ("min#scale#sum#time.duration.ns", metric(Combine::Min, false)),
            ("avg#sum#rc.count", metric(Combine::Mean, false)),
            ("count", metric(Combine::Sum, false)),
            ("cupti.activity.duration", metric(Combine::Sum, false)),
            (
                "ratio#cupti.activity.duration/sum#cupti.host.duration",
                metric(Combine::NotCombinable, false),
            ),
            ("iratio#a/b", metric(Combine::NotCombinable, true)),
            ("variance#time.duration", metric(Combine::NotCombinable, false)),
            ("any#any#max#ProblemSize", Role::NodeAttribute),
            ("min#min#aggregate.slot", Role::Skipped),
            ("avg.sum#inclusive#sum#time.duration", Role::Skipped),
        ] {
            assert_eq!(role(name), want, "{name}");
        }
        // A `#` that is not an operator is part of the name.
        assert_eq!(operators("my#thing"), (vec![], "my#thing"));
    }

    #[test]
    fn exclusive_twins() {
        assert_eq!(
            exclusive_twin("inclusive#sum#time.duration").as_deref(),
            Some("sum#time.duration")
        );
        assert_eq!(
            exclusive_twin("min#inclusive#sum#x").as_deref(),
            Some("min#sum#x")
        );
        assert_eq!(
            exclusive_twin("iscale#cupti.activity.duration").as_deref(),
            Some("scale#cupti.activity.duration")
        );
        assert_eq!(exclusive_twin("sum#time.duration"), None);
        assert_eq!(exclusive_alias("Min time/rank"), "Min time/rank (exc)");
    }

    #[test]
    fn units() {
        assert_eq!(
            unit("min#inclusive#sum#time.duration", Some("sec")),
            Unit::Seconds
        );
        assert_eq!(unit("min#sum#rc.count", Some("count")), Unit::Count);
        assert_eq!(unit("cupti.activity.duration", None), Unit::Nanoseconds);
        assert_eq!(unit("sum#cupti.host.duration", None), Unit::Nanoseconds);
        assert_eq!(
            unit("inclusive#sum#rocm.activity.duration", None),
            Unit::Nanoseconds
        );
        assert_eq!(unit("sum#time.duration.ns", None), Unit::Nanoseconds);
        assert_eq!(
            unit("scale#cupti.activity.duration", None),
            Unit::Other("unit not recorded".into())
        );
        assert_eq!(
            unit("sum#time.duration", None),
            Unit::Other("unit not recorded".into())
        );
        assert_eq!(unit("count", None), Unit::Count);
        assert_eq!(unit("ratio#a/b", None), Unit::Other("ratio".into()));
    }
}
