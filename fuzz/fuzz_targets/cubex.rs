#![no_main]
//! Arbitrary bytes into the CUBE4 `.cubex` reader (tar archive, anchor.xml, index and data
//! members). Must return a profile or an error, never panic.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = perfscape_formats::cube::parse_cubex(data);
});
