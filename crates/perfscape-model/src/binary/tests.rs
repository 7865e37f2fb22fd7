//! Round trips, truncations, flipped bytes and compact encodings of the profile codec.

use super::*;
use crate::builder::ProfileBuilder;
use crate::ids::{ThreadId, ThreadIndex};
use crate::metric::{Combine, Metric, Unit};
use crate::profile::Profile;
use crate::thread_data::ThreadData;

fn sample() -> Profile {
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME"), Metric::tau("PAPI_FP_INS")]);
    for (k, node) in [0u32, 1, 3].into_iter().enumerate() {
        let mut t = ThreadData::new(2);
        t.push_metadata("host", "vm");
        t.push_metadata("pid", &format!("{}", 100 + k));
        let x = k as f64;
        t.push_timer(
            ".TAU application",
            "TAU_DEFAULT",
            1.0,
            2.0,
            &[10.5 + x, 7.0],
            &[100.0, 9.0],
        )
        .unwrap();
        t.push_timer(
            ".TAU application => main() [{m.c} {3,1}-{9,1}]",
            "TAU_CALLPATH|TAU_DEFAULT",
            1.0,
            0.0,
            &[-0.0, f64::NAN],
            &[f64::INFINITY, 1e300],
        )
        .unwrap();
        if k != 1 {
            t.push_timer(
                "main() [{m.c} {3,1}-{9,1}]",
                "TAU_DEFAULT",
                1.0,
                0.0,
                &[3.0, 3.0],
                &[3.0, 3.0],
            )
            .unwrap();
        }
        t.push_atomic("Message size", 2.0, 8.0, 4.0, 6.0, 80.0);
        t.push_atomic(
            "Message size : main() [{m.c} {3,1}-{9,1}]",
            1.0,
            8.0,
            8.0,
            8.0,
            64.0,
        );
        b.add_thread(ThreadId::new(node, 0, 0), t).unwrap();
    }
    b.set_event_attribute("main() [{m.c} {3,1}-{9,1}]", "ProblemSize", "1048576");
    b.set_event_attribute(".TAU application", "Reps", "50");
    b.set_event_attribute("main() [{m.c} {3,1}-{9,1}]", "Reps", "100");
    b.finish().0
}

fn assert_bitwise_equal(a: &Profile, b: &Profile) {
    assert_eq!(a.events, b.events);
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.threads, b.threads);
    assert_eq!(a.metadata, b.metadata);
    assert_eq!(a.call_tree, b.call_tree);
    assert_eq!(a.event_index, b.event_index);
    assert_eq!(a.atomic_index, b.atomic_index);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(a.interval.len(), b.interval.len());
    for (x, y) in (0..a.interval.len()).map(|e| (a.interval.column(e), b.interval.column(e))) {
        assert_eq!(x.threads(), y.threads());
        assert_eq!(bits(x.calls()), bits(y.calls()));
        assert_eq!(bits(x.subcalls()), bits(y.subcalls()));
        assert_eq!(a.totals.len(), b.totals.len());
        assert_eq!(bits(&a.totals), bits(&b.totals));
        assert_eq!(a.has_total, b.has_total);
        for m in 0..a.metrics.len() {
            assert_eq!(
                bits(x.exclusive(crate::ids::MetricId::from(m))),
                bits(y.exclusive(crate::ids::MetricId::from(m)))
            );
            assert_eq!(
                bits(x.inclusive(crate::ids::MetricId::from(m))),
                bits(y.inclusive(crate::ids::MetricId::from(m)))
            );
        }
    }
    assert_eq!(a.atomic, b.atomic);
    assert_eq!(a.event_attributes, b.event_attributes);
}

#[test]
fn round_trips_bit_for_bit_including_nan_and_negative_zero() {
    let p = sample();
    let bytes = p.encode();
    let q = Profile::decode(&bytes).unwrap();
    assert_bitwise_equal(&p, &q);
    assert_eq!(q.encode(), bytes, "re-encoding is stable");
    assert_eq!(q.call_tree().roots().len(), 1);
    assert_eq!(q.metadata().get(ThreadIndex(2), "pid"), Some("102"));
    let main = q.event_by_name("main() [{m.c} {3,1}-{9,1}]").unwrap();
    let attrs: Vec<(&str, &str)> = q.event_attributes(main).collect();
    assert_eq!(attrs, [("ProblemSize", "1048576"), ("Reps", "100")]);
}

#[test]
fn every_truncation_and_every_flipped_byte_is_an_error() {
    let bytes = sample().encode();
    for n in 0..bytes.len() {
        let e = Profile::decode(&bytes[..n]).unwrap_err();
        assert!(!e.message.is_empty());
    }
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x41;
        assert!(Profile::decode(&b).is_err(), "flip at {i} not detected");
    }
}

#[test]
fn compact_encodings_are_used_and_decode_exactly() {
    // One event on 1000 threads: calls all 1 (constant), subcalls all 0 (constant),
    // exclusive small integers (u32 block), inclusive equal to exclusive (same).
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    for k in 0..1000u32 {
        let mut t = ThreadData::new(1);
        let v = f64::from(k * 7 + 3);
        t.push_timer("main()", "TAU_DEFAULT", 1.0, 0.0, &[v], &[v])
            .unwrap();
        b.add_thread(ThreadId::new(k, 0, 0), t).unwrap();
    }
    let p = b.finish().0;
    let bytes = p.encode();
    // header 16 + counts 40 + threads 12000 + metric `TIME` 10 (name 8, unit, rule) + group 15 + event 32 (name
    // 10, group list 12, kind, flags, depth 4, routine 4) + column:
    // rows 8 + range 5 + calls 9 + subcalls 9 + metric counts 16 + exclusive 1+4000 +
    // inclusive 1 + metadata counts 16 + event attribute count 8 + thread totals flag 1 +
    // trailer 16.
    assert_eq!(
        bytes.len(),
        16 + 40 + 12_000 + 10 + 15 + 32 + 8 + 5 + 9 + 9 + 16 + 4001 + 1 + 16 + 8 + 1 + 16
    );
    let q = Profile::decode(&bytes).unwrap();
    assert_bitwise_equal(&p, &q);
    let e = q.event_by_name("main()").unwrap();
    assert_eq!(q.interval(e).exclusive(crate::ids::MetricId(0))[999], 6996.0);
}

#[test]
fn lengths_are_checked_before_allocating() {
    // A valid envelope around a payload that claims 2^40 threads.
    let mut payload = Vec::new();
    payload.extend_from_slice(&(1u64 << 40).to_le_bytes());
    payload.extend_from_slice(&[0u8; 32]);
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&PROFILE_MAGIC);
    bytes.extend_from_slice(&PROFILE_FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(&payload);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&checksum(&payload).to_le_bytes());
    bytes.extend_from_slice(&PROFILE_END);
    let e = Profile::decode(&bytes).unwrap_err();
    assert_eq!(e.offset, 16);
    assert!(e.message.contains("thread count: count 1099511627776"), "{e}");
}

/// Wraps `payload` in a valid header and trailer (right length and checksum).
fn envelope(payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&PROFILE_MAGIC);
    bytes.extend_from_slice(&PROFILE_FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(&0u32.to_le_bytes());
    bytes.extend_from_slice(payload);
    bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    bytes.extend_from_slice(&checksum(payload).to_le_bytes());
    bytes.extend_from_slice(&PROFILE_END);
    bytes
}

#[test]
fn every_combination_rule_round_trips_and_a_bad_tag_is_named() {
    let metrics: Vec<Metric> = Combine::ALL
        .iter()
        .map(|&c| Metric::new(format!("m_{c}"), Unit::Seconds).combined_by(c))
        .collect();
    let mut b = ProfileBuilder::new(metrics.clone());
    let mut t = ThreadData::new(5);
    t.push_timer("main", "G", 1.0, 0.0, &[1.0; 5], &[2.0; 5]).unwrap();
    b.add_thread(ThreadId::new(0, 0, 0), t).unwrap();
    let p = b.finish().0;
    let bytes = p.encode();
    let q = Profile::decode(&bytes).unwrap();
    assert_eq!(q.metrics(), &metrics[..]);
    // The last metric's rule tag (4) follows its name `m_not_combinable` and unit tag 0.
    let name = b"m_not_combinable";
    let at = bytes.windows(name.len()).position(|w| w == name).unwrap() + name.len() + 1;
    assert_eq!(bytes[at], 4);
    let mut payload = bytes[HEADER_LEN..bytes.len() - TRAILER_LEN].to_vec();
    payload[at - HEADER_LEN] = 9;
    let e = Profile::decode(&envelope(&payload)).unwrap_err();
    assert_eq!(e.offset, at as u64);
    assert!(e.message.contains("unknown combination rule tag 9"), "{e}");
}

#[test]
fn an_event_flagged_with_a_stored_source_is_refused() {
    // Version 4 derives an event's source location from its frame; bit 1 of the event flags
    // (a source written after the depth, version 3) must not be read as another layout.
    let mut b = ProfileBuilder::new(vec![Metric::tau("TIME")]);
    let mut t = ThreadData::new(1);
    t.push_timer("main() [{m.c} {3,1}-{9,1}]", "G", 1.0, 0.0, &[1.0], &[1.0])
        .unwrap();
    b.add_thread(ThreadId::new(0, 0, 0), t).unwrap();
    let p = b.finish().0;
    assert_eq!(p.event(crate::ids::EventId(0)).source().unwrap().line, 3);
    let bytes = p.encode();
    let mut payload = bytes[HEADER_LEN..bytes.len() - TRAILER_LEN].to_vec();
    // The frame's text, then its group list (count 8, one id 4), kind 1, flags 1.
    let name = b"main() [{m.c} {3,1}-{9,1}]";
    let flags = payload.windows(name.len()).position(|w| w == name).unwrap() + name.len() + 12 + 1;
    assert_eq!(payload[flags] & 0b10, 0, "no source written");
    payload[flags] |= 0b10;
    let e = Profile::decode(&envelope(&payload)).unwrap_err();
    assert!(e.message.contains("unknown event flags"), "{e}");
    assert_eq!(e.offset, (HEADER_LEN + flags) as u64);
}
