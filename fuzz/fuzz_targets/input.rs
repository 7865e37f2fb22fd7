//! Fuzz target: what every single-file input goes through before its reader — decompression
//! (gzip, zstd, xz; truncated and corrupt streams) and format detection from the first bytes.
//! Must never panic; what decompresses is a prefix of the data, reported when cut short.
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run input fuzz/corpus/input -- -max_total_time=120`
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let content = perfscape_formats::input::decompress(data);
    let head = perfscape_formats::input::head(data, perfscape_formats::input::HEAD_BYTES);
    // The detection head is the start of what decompresses (or of the data itself).
    assert!(content.data.starts_with(&head[..head.len().min(content.data.len())]) || content.problem.is_some());
    let _ = perfscape_formats::registry::sniff_head(&head);
});
