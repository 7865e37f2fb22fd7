//! Fuzz target: the perf.data reader (header pre-check + linux-perf-data) must never panic or
//! allocate what the input does not hold.
//!
//! The reader calls the decoder crate inside `catch_unwind` (it asserts on some corrupt
//! records) and reports such a record as the end of what could be read. libFuzzer's panic hook
//! would abort on that caught panic, so the hook here only prints it; a panic that escapes the
//! reader still aborts (libfuzzer-sys aborts on an unwinding panic) and is a crash.
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run perf_data fuzz/corpus/perf_data -- -max_total_time=120`
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    init: {
        std::panic::set_hook(Box::new(|info| eprintln!("caught by the reader: {info}")));
    },
    |data: &[u8]| {
        if let Ok(p) = perfscape_formats::perf::data::parse_perf_data(data) {
            assert!(p.profile.threads().windows(2).all(|w| w[0] < w[1]));
        }
    }
);
