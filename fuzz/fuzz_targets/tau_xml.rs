//! Fuzz target: the TAU snapshot / merged XML readers must never panic, and the incremental
//! snapshot reader must give the same snapshots however the bytes are split.
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run tau_xml fuzz/corpus/tau_xml -- -max_total_time=60`
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfscape_formats::tau::merged::parse_merged;
use perfscape_formats::tau::snapshot::SnapshotStream;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("fuzz");
    let _ = parse_merged(data, path);
    let mut whole = SnapshotStream::new(path);
    let one = whole.push(data);
    let _ = whole.finish();
    // The same bytes in two pieces, cut where the first byte says.
    let cut = data.first().map_or(0, |&b| (b as usize * data.len()) / 256);
    let mut split = SnapshotStream::new(path);
    let mut samples = split.push(&data[..cut]).samples;
    samples.extend(split.push(&data[cut..]).samples);
    let _ = split.finish();
    assert_eq!(samples, one.samples);
});
