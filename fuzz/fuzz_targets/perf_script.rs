//! Fuzz target: the `perf script` text reader must never panic, whatever the bytes.
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run perf_script fuzz/corpus/perf_script -- -max_total_time=120`
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = perfscape_formats::perf::script::parse_perf_script(data);
});
