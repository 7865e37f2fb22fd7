//! Fuzz target: the OTF2 reader (`otf2::parse_archive`: anchor file, global definitions,
//! per location local definitions and events, then the trace and its profile) must never
//! panic, whatever the bytes. Input framing: a 2-byte little-endian length and that many
//! bytes for the anchor file, the same for the global definitions, then pairs of local
//! definitions and event file, one pair per location (at most 8).
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run otf2 fuzz/corpus/otf2 -- -max_total_time=300`
#![no_main]

use libfuzzer_sys::fuzz_target;

fn take<'a>(data: &mut &'a [u8]) -> &'a [u8] {
    if data.len() < 2 {
        let all = *data;
        *data = &[];
        return all;
    }
    let n = usize::from(u16::from_le_bytes([data[0], data[1]])).min(data.len() - 2);
    let part = &data[2..2 + n];
    *data = &data[2 + n..];
    part
}

fuzz_target!(|data: &[u8]| {
    let mut d = data;
    let anchor = take(&mut d);
    let defs = take(&mut d);
    let mut locations = Vec::new();
    while !d.is_empty() && locations.len() < 8 {
        let def = take(&mut d);
        let evt = take(&mut d);
        locations.push((Some(def), Some(evt)));
    }
    if let Ok((trace, profile, _)) = perfscape_formats::otf2::parse_archive(anchor, defs, &locations) {
        assert!(profile.threads().windows(2).all(|w| w[0] < w[1]));
        for i in 0..trace.threads().len() {
            let lane = trace.lane(i);
            assert!(lane.start_ns().iter().zip(lane.end_ns()).all(|(s, e)| s <= e));
        }
    }
});
