//! The binary encoding of a profile (`Profile::encode` / `Profile::decode`) on random small
//! profiles built through the builder: every value comes back with its exact bits (NaN
//! payloads, -0.0, infinities, subnormals), every index and name too, and damaged bytes are
//! errors, never panics.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use perfscape_model::{
    AtomicEventId, EventId, Metric, MetricId, Profile, ProfileBuilder, ThreadData, ThreadId, ThreadIndex,
    Unit, ValueKind,
};
use proptest::prelude::*;

/// Asserts that two profiles are equal with every `f64` compared by its bits (so NaN and -0.0
/// differences are caught), through the public accessors only.
fn assert_same_bits(a: &Profile, b: &Profile) {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
    assert_eq!(a.threads(), b.threads());
    assert_eq!(a.metrics(), b.metrics());
    assert_eq!(a.groups(), b.groups());
    assert_eq!(a.events(), b.events());
    assert_eq!(a.atomic_events(), b.atomic_events());
    assert_eq!(a.metadata(), b.metadata());
    assert_eq!(a.call_tree(), b.call_tree());
    for e in a.event_ids() {
        let (x, y) = (a.interval(e), b.interval(e));
        assert_eq!(x.threads(), y.threads(), "event {}", a.event_name(e));
        for kind in ValueKind::ALL {
            for m in a.metric_ids() {
                assert_eq!(bits(x.values(kind, m)), bits(y.values(kind, m)), "{kind:?} {m:?}");
            }
        }
        assert_eq!(b.event_by_name(&a.event_name(e)), Some(e));
    }
    for i in 0..a.atomic_events().len() {
        let id = AtomicEventId::from(i);
        let (x, y) = (a.atomic(id), b.atomic(id));
        assert_eq!(x.threads(), y.threads());
        for (p, q) in [
            (x.count(), y.count()),
            (x.max(), y.max()),
            (x.min(), y.min()),
            (x.mean(), y.mean()),
            (x.sum_squares(), y.sum_squares()),
        ] {
            assert_eq!(bits(p), bits(q));
        }
        assert_eq!(b.atomic_event_by_name(&a.atomic_events()[i].name), Some(id));
    }
}

fn value() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => (0u32..5000).prop_map(f64::from),
        2 => any::<f64>(),
        1 => Just(-0.0),
        1 => Just(f64::NAN),
        1 => Just(f64::from_bits(0x7ff8_0000_dead_beef)),
        1 => Just(f64::INFINITY),
        1 => Just(f64::MIN_POSITIVE / 4.0),
        1 => Just(4_294_967_296.0),
        1 => Just(1.5),
    ]
}

const NAMES: &[&str] = &[
    ".TAU application",
    ".TAU application => main()",
    ".TAU application => main() => MPI_Send()",
    "main()",
    "MPI_Send()",
    "int f(int) C [{f.c} {3,1}-{9,1}]",
    ".TAU application => int f(int) C [{f.c} {3,1}-{9,1}]",
    "[SAMPLE] kernel [{k.c} {42}]",
    "double U() [{R.cpp} {98,1}-{166,1}] [THROTTLED]",
    "a => b => c",
];
const GROUPS: &[&str] = &["TAU_DEFAULT", "MPI", "TAU_CALLPATH|TAU_DEFAULT", "", "TAU_SAMPLE"];
const USER: &[&str] = &[
    "Message size",
    "Message size : .TAU application => main() => MPI_Send()",
    "Memory : main() => MPI_Send()",
    "Heap",
];

/// A timer row: name, groups, calls, subcalls, exclusive and inclusive per metric.
type TimerSpec = (usize, usize, f64, f64, Vec<f64>, Vec<f64>);

#[derive(Debug, Clone)]
struct ThreadSpec {
    timers: Vec<TimerSpec>,
    atomics: Vec<(usize, [f64; 5])>,
    metadata: Vec<(usize, usize)>,
}

fn thread_spec(n_metrics: usize) -> impl Strategy<Value = ThreadSpec> {
    let timer = (
        0..NAMES.len(),
        0..GROUPS.len(),
        value(),
        value(),
        prop::collection::vec(value(), n_metrics),
        prop::collection::vec(value(), n_metrics),
    );
    let atomic = (0..USER.len(), [value(), value(), value(), value(), value()]);
    (
        prop::collection::vec(timer, 0..6),
        prop::collection::vec(atomic, 0..3),
        prop::collection::vec((0usize..3, 0usize..3), 0..3),
    )
        .prop_map(|(timers, atomics, metadata)| ThreadSpec {
            timers,
            atomics,
            metadata,
        })
}

fn profile() -> impl Strategy<Value = Profile> {
    (
        1usize..4,
        prop::collection::btree_set((0u32..40, 0u32..2, 0u32..3), 0..7),
    )
        .prop_flat_map(|(n_metrics, ids)| {
            let ids: Vec<(u32, u32, u32)> = ids.into_iter().collect();
            let n = ids.len();
            (
                Just(n_metrics),
                Just(ids),
                prop::collection::vec(thread_spec(n_metrics), n),
                any::<bool>(),
            )
        })
        .prop_map(|(n_metrics, ids, specs, other_unit)| {
            let mut metrics: Vec<Metric> = ["TIME", "PAPI_FP_INS", "PAPI_TOT_CYC"][..n_metrics]
                .iter()
                .map(|n| Metric::tau(*n))
                .collect();
            if other_unit {
                metrics[0].unit = Unit::Other("furlongs".into());
            }
            let mut b = ProfileBuilder::new(metrics);
            for ((node, context, thread), spec) in ids.into_iter().zip(specs) {
                let mut t = ThreadData::new(n_metrics);
                for (k, v) in &spec.metadata {
                    t.push_metadata(["host", "pid", "rank"][*k], ["a", "b", "c"][*v]);
                }
                for (name, group, calls, subcalls, ex, inc) in &spec.timers {
                    t.push_timer(NAMES[*name], GROUPS[*group], *calls, *subcalls, ex, inc)
                        .unwrap();
                }
                for (name, v) in &spec.atomics {
                    t.push_atomic(USER[*name], v[0], v[1], v[2], v[3], v[4]);
                }
                if spec.timers.is_empty() {
                    t.declare_timer("declared only", "TAU_USER");
                }
                b.add_thread(ThreadId::new(node, context, thread), t).unwrap();
            }
            b.finish().0
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_profiles_round_trip_bit_for_bit(p in profile()) {
        let bytes = p.encode();
        let q = Profile::decode(&bytes).unwrap();
        assert_same_bits(&p, &q);
        prop_assert_eq!(q.encode(), bytes);
    }

    #[test]
    fn damaged_encodings_are_errors(p in profile(), at in any::<prop::sample::Index>(), flip in 1u8..=255, cut in any::<prop::sample::Index>()) {
        let bytes = p.encode();
        let i = at.index(bytes.len());
        let mut damaged = bytes.clone();
        damaged[i] ^= flip;
        prop_assert!(Profile::decode(&damaged).is_err());
        let n = cut.index(bytes.len());
        prop_assert!(Profile::decode(&bytes[..n]).is_err());
    }
}

#[test]
fn garbage_is_an_error_with_an_offset() {
    for bytes in [
        &b""[..],
        b"PSPROFIL",
        b"hello world, this is not a profile at all",
        &[0u8; 64][..],
    ] {
        let e = Profile::decode(bytes).unwrap_err();
        assert!(e.to_string().starts_with("byte "), "{e}");
    }
}

#[test]
fn a_decoded_profile_answers_like_the_original() {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    for k in 0..3u32 {
        let mut t = ThreadData::new(1);
        t.push_metadata("pid", &k.to_string());
        t.push_timer(".TAU application", "TAU_DEFAULT", 1.0, 1.0, &[5.0], &[50.0])
            .unwrap();
        t.push_timer(
            ".TAU application => main()",
            "TAU_CALLPATH",
            1.0,
            0.0,
            &[45.0],
            &[45.0],
        )
        .unwrap();
        t.push_timer("main()", "TAU_DEFAULT", 1.0, 0.0, &[45.0], &[45.0])
            .unwrap();
        b.add_thread(ThreadId::new(k, 0, 0), t).unwrap();
    }
    let p = Profile::decode(&b.finish().0.encode()).unwrap();
    let cp = p.event_by_name(".TAU application  => main() ").unwrap();
    assert_eq!(p.event(cp).parent(), p.event_by_name(".TAU application"));
    assert_eq!(p.event(cp).routine(), p.event_by_name("main()"));
    assert_eq!(p.call_tree().roots(), &[EventId(0)]);
    assert_eq!(p.call_tree().children(EventId(0)), &[cp]);
    assert_eq!(
        p.value(cp, ThreadIndex(2), ValueKind::Inclusive, MetricId(0)),
        Some(45.0)
    );
    assert_eq!(p.metadata().get(ThreadIndex(1), "pid"), Some("1"));
}
