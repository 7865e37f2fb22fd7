//! Fuzz target: the perf.data reader (header pre-check + linux-perf-data) must never panic or
//! allocate what the input does not hold.
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run perf_data fuzz/corpus/perf_data -- -max_total_time=120`
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = perfscape_formats::perf::data::parse_perf_data(data) {
        assert!(p.profile.threads().windows(2).all(|w| w[0] < w[1]));
    }
});
