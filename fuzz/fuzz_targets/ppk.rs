#![no_main]
//! Arbitrary bytes into the ParaProf `.ppk` reader: the decompressed stream (mutations reach
//! the binary layout directly; `input` fuzzes the decompression in front of it). Must return a
//! profile or an error, never panic.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = perfscape_formats::ppk::parse_ppk(data);
});
