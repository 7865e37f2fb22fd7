//! The synthetic profile of the scale examples: THREADS threads × EVENTS flat events, one
//! metric (TIME, µs), exclusive = inclusive = a pseudo-random value below 10^6 per cell.

use perfscape_model::{Metric, Profile, ProfileBuilder, ThreadData, ThreadId, Unit};

/// The profile; `seed` changes the values (xorshift64, so a run is reproducible).
pub fn profile(threads: u32, events: usize, seed: u64) -> Profile {
    let names: Vec<String> = (0..events).map(|e| format!("event_{e}")).collect();
    let mut b = ProfileBuilder::new(vec![Metric::new("TIME", Unit::Microseconds)]);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ seed.wrapping_mul(0x2545_F491_4F6C_DD1D);
    for t in 0..threads {
        let mut d = ThreadData::with_capacity(1, events, 0);
        for n in &names {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = (x % 1_000_000) as f64;
            d.push_timer(n, "", 1.0, 0.0, &[v], &[v]).unwrap();
        }
        b.add_thread(
            ThreadId {
                node: t,
                context: 0,
                thread: 0,
            },
            d,
        )
        .unwrap();
    }
    b.finish().0
}

/// Peak resident memory of this process, bytes (Linux `VmHWM`).
pub fn peak_rss() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}
