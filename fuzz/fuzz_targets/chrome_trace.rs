//! Fuzz target: the Chrome Trace Event reader must never panic, whatever the bytes.
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run chrome_trace fuzz/corpus/chrome_trace -- -max_total_time=120`
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = perfscape_formats::chrome::parse_trace(data) {
        let trace = t.trace.expect("the Chrome reader always gives its trace");
        // Lanes are sorted and nested consistently.
        for lane in trace.lanes() {
            assert!(lane.start_ns().windows(2).all(|w| w[0] <= w[1]));
            for (i, &p) in lane.parent().iter().enumerate() {
                assert!(p == perfscape_model::trace::NO_PARENT || (p as usize) < i);
            }
        }
    }
});
