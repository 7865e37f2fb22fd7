//! Fuzz target: the pprof reader (gzip or raw protocol buffer) must never panic, whatever the
//! bytes. Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run pprof fuzz/corpus/pprof -- -max_total_time=120`
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = perfscape_formats::pprof::parse_pprof(data) {
        // A successful parse is self-consistent: every value finite or an honest infinity
        // from huge sums, and the threads sorted.
        assert!(p.profile.threads().windows(2).all(|w| w[0] < w[1]));
    }
});
