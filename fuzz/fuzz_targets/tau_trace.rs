//! Fuzz target: the TAU trace reader (`tau::trace::parse_run`: `events.N.edf` text and
//! `tautrace.N.C.T.trc` records, then the trace and its profile) must never panic, whatever
//! the bytes. Input framing: a 2-byte little-endian length and that many bytes of `.edf`
//! text, then the `.trc` bytes of rank 0; the same `.edf` serves a second thread made of the
//! records' second half, so that messages between two ranks are matched.
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run tau_trace fuzz/corpus/tau_trace -- -max_total_time=300`
#![no_main]

use libfuzzer_sys::fuzz_target;
use perfscape_model::ThreadId;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let n = usize::from(u16::from_le_bytes([data[0], data[1]])).min(data.len() - 2);
    let (edf, trc) = data[2..].split_at(n);
    let half = trc.len() / 48 * 24;
    let id = |node| ThreadId { node, context: 0, thread: 0 };
    let threads = [(id(0), edf, &trc[..half]), (id(1), edf, &trc[half..])];
    if let Ok((trace, profile, _)) = perfscape_formats::tau::trace::parse_run(&threads) {
        assert!(profile.threads().windows(2).all(|w| w[0] < w[1]));
        assert!(trace.threads().len() <= 2);
    }
});
