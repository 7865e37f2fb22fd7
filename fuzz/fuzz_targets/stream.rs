//! Arbitrary bytes as one producer's connection to a stream listener (STREAM.md):
//! `perfscape_live::stream::ingest_bytes` cuts, parses and checks them as the listener does,
//! builds the thread's profile and integrates its samples. Never a panic; every reply is an
//! error record with an offset inside the input; every integrated sample is a complete
//! profile.

#![no_main]

use libfuzzer_sys::fuzz_target;
use perfscape_live::StreamOptions;
use perfscape_live::stream::ingest_bytes;
use perfscape_live::stream::record::Reply;
use perfscape_model::{SampleId, SampleMode};

fuzz_target!(|data: &[u8]| {
    let opts = StreamOptions {
        max_record_bytes: 4096,
        max_depth: 16,
        max_regions: 64,
        ..Default::default()
    };
    let (replies, _events, series) = ingest_bytes(data, &opts);
    for r in &replies {
        let Reply::Error { offset, .. } = r;
        assert!(*offset as usize <= data.len(), "offset {offset} beyond {} bytes", data.len());
    }
    let series = series.read();
    for i in 0..series.len() {
        series
            .profile_at(SampleId(i as u32), SampleMode::Cumulative)
            .expect("an integrated sample builds a profile");
    }
});
