#![no_main]
//! Arbitrary bytes into the ParaProf `.ppk` reader: both the gzip-wrapped file parser and the
//! decompressed-stream parser (so mutations reach the binary layout directly). Must return a
//! profile or an error, never panic.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = perfscape_formats::ppk::parse_ppk(data);
    let _ = perfscape_formats::ppk::parse_ppk_stream(data, Vec::new());
});
