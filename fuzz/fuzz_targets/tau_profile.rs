//! Fuzz target: the TAU text profile parser must never panic, whatever the bytes.
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run tau_profile fuzz/corpus/tau_profile -- -max_total_time=60`
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(f) = perfscape_formats::tau::parse_profile_file(data) {
        // A successful parse is self-consistent.
        for t in &f.timers {
            assert!(t.calls.is_finite() && t.exclusive.is_finite() && t.inclusive.is_finite());
        }
    }
});
