//! Fuzz target: the pyinstrument JSON reader must never panic, whatever the bytes, and never
//! give an event deeper than the depth limit.
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run pyinstrument fuzz/corpus/pyinstrument -- -max_total_time=120`
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfscape_formats::pyinstrument::{parse_pyinstrument, sniff};
use perfscape_formats::stacks::MAX_DEPTH;

fuzz_target!(|data: &[u8]| {
    let _ = sniff(data);
    if let Ok(p) = parse_pyinstrument(data) {
        let profile = &p.profile;
        for e in profile.events() {
            assert!(e.depth as usize <= MAX_DEPTH, "{}", e.depth);
        }
    }
});
