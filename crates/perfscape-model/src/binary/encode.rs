//! The profile encoder: [`Profile::encode`] and [`Profile::encode_to`].

use super::{
    ARRAY_CONST, ARRAY_RAW, ARRAY_SAME, ARRAY_U32, PROFILE_END, PROFILE_FORMAT_VERSION, PROFILE_MAGIC,
    THREADS_LIST, THREADS_RANGE, Writer, kind_tag,
};
use crate::ids::ThreadIndex;
use crate::metric::{Combine, Unit};
use crate::profile::Profile;
use std::io::{self, Write};

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

/// True when `v` is exactly a `u32` converted to `f64` (this excludes -0.0, NaN, fractions).
fn is_u32_exact(v: f64) -> bool {
    v >= 0.0 && v <= f64::from(u32::MAX) && f64::from(v as u32).to_bits() == v.to_bits()
}

fn write_array<W: Write>(w: &mut Writer<W>, values: &[f64], previous: Option<&[f64]>) -> io::Result<()> {
    if let Some(first) = values.first() {
        if previous.is_some_and(|p| same_bits(p, values)) {
            return w.u8(ARRAY_SAME);
        }
        if values.iter().all(|v| v.to_bits() == first.to_bits()) {
            w.u8(ARRAY_CONST)?;
            return w.f64(*first);
        }
        if values.iter().all(|&v| is_u32_exact(v)) {
            w.u8(ARRAY_U32)?;
            return w.u32s(values.iter().map(|&v| v as u32));
        }
    }
    w.u8(ARRAY_RAW)?;
    w.f64s(values)
}

fn write_threads<W: Write>(w: &mut Writer<W>, threads: &[ThreadIndex]) -> io::Result<()> {
    w.count(threads.len())?;
    let first = threads.first().map_or(0, |t| t.0);
    let contiguous = threads
        .iter()
        .enumerate()
        .all(|(i, t)| u64::from(t.0) == u64::from(first) + i as u64);
    if contiguous {
        w.u8(THREADS_RANGE)?;
        w.u32(first)
    } else {
        w.u8(THREADS_LIST)?;
        w.u32s(threads.iter().map(|t| t.0))
    }
}

fn opt_u32<W: Write>(w: &mut Writer<W>, v: Option<u32>) -> io::Result<()> {
    if let Some(v) = v {
        w.u32(v)?;
    }
    Ok(())
}

fn opt_str<W: Write>(w: &mut Writer<W>, v: Option<&str>) -> io::Result<()> {
    if let Some(v) = v {
        w.str(v)?;
    }
    Ok(())
}

impl Profile {
    /// The profile encoded as bytes (layout in `CACHE.md`; see the [module](crate::binary)).
    pub fn encode(&self) -> Vec<u8> {
        // Writing into a Vec cannot fail, so the empty default is never taken.
        self.encode_to(Vec::new()).unwrap_or_default()
    }

    /// Streams the encoding into `sink` (through a 1 MiB buffer, so a file need not be
    /// buffered) and returns the sink. Errors only when the sink fails.
    pub fn encode_to<W: Write>(&self, sink: W) -> io::Result<W> {
        let mut w = Writer::new(sink);
        w.raw(&PROFILE_MAGIC)?;
        w.u32(PROFILE_FORMAT_VERSION)?;
        w.u32(0)?; // flags, reserved
        w.reset_checksum()?;
        self.encode_payload(&mut w)?;
        let len = w.written();
        let crc = w.checksum()?;
        w.u64(len)?;
        w.u32(crc)?;
        w.raw(&PROFILE_END)?;
        w.finish()
    }

    fn encode_payload<W: Write>(&self, w: &mut Writer<W>) -> io::Result<()> {
        w.count(self.threads.len())?;
        w.count(self.metrics.len())?;
        w.count(self.groups.len())?;
        w.count(self.events.len())?;
        w.count(self.atomic_events.len())?;
        for t in &self.threads {
            w.u32(t.node)?;
            w.u32(t.context)?;
            w.u32(t.thread)?;
        }
        for m in &self.metrics {
            w.str(&m.name)?;
            match &m.unit {
                Unit::Seconds => w.u8(0)?,
                Unit::Microseconds => w.u8(1)?,
                Unit::Nanoseconds => w.u8(2)?,
                Unit::Cycles => w.u8(3)?,
                Unit::Bytes => w.u8(4)?,
                Unit::Count => w.u8(5)?,
                Unit::Other(s) => {
                    w.u8(6)?;
                    w.str(s)?;
                }
            }
            w.u8(combine_tag(m.combine))?;
        }
        for g in &self.groups {
            w.str(g)?;
        }
        for e in &self.events {
            w.str(&e.frame)?;
            w.count(e.groups.len())?;
            w.u32s(e.groups.iter().map(|g| g.0))?;
            w.u8(kind_tag(e.kind))?;
            // Bit 1 (a source location, version 3) is left out: it is derived from the frame.
            let flags = u8::from(e.throttled)
                | u8::from(e.parent().is_some()) << 2
                | u8::from(e.routine().is_some()) << 3;
            w.u8(flags)?;
            w.u32(e.depth)?;
            opt_u32(w, e.parent().map(|p| p.0))?;
            opt_u32(w, e.routine().map(|r| r.0))?;
        }
        let n_metrics = self.metrics.len();
        for c in (0..self.interval.len()).map(|e| self.interval.column(e)) {
            write_threads(w, c.threads())?;
            write_array(w, c.calls(), None)?;
            write_array(w, c.subcalls(), Some(c.calls()))?;
            w.count(n_metrics)?;
            w.count(n_metrics)?;
            let mut previous: &[f64] = c.subcalls();
            for m in self.metric_ids() {
                write_array(w, c.exclusive(m), Some(previous))?;
                write_array(w, c.inclusive(m), Some(c.exclusive(m)))?;
                previous = c.inclusive(m);
            }
        }
        for a in &self.atomic_events {
            w.str(&a.name)?;
            let flags = u8::from(a.context.is_some())
                | u8::from(a.context_path.is_some()) << 1
                | u8::from(a.base.is_some()) << 2
                | u8::from(a.base_name.is_some()) << 3;
            w.u8(flags)?;
            opt_u32(w, a.context.map(|c| c.0))?;
            opt_str(w, a.context_path.as_deref())?;
            opt_u32(w, a.base.map(|b| b.0))?;
            opt_str(w, a.base_name.as_deref())?;
        }
        for c in &self.atomic {
            write_threads(w, &c.threads)?;
            write_array(w, &c.count, None)?;
            write_array(w, &c.max, Some(&c.count))?;
            write_array(w, &c.min, Some(&c.max))?;
            write_array(w, &c.mean, Some(&c.min))?;
            write_array(w, &c.sum_squares, Some(&c.mean))?;
        }
        let md = &self.metadata;
        w.count(md.common().len())?;
        for (k, v) in md.common() {
            w.str(k)?;
            w.str(v)?;
        }
        w.count(md.varying().len())?;
        for (k, values) in md.varying() {
            w.str(k)?;
            w.count(values.len())?;
            for (t, v) in values {
                w.u32(t.0)?;
                w.str(v)?;
            }
        }
        w.count(self.event_attributes.len())?;
        for (e, k, v) in &self.event_attributes {
            w.u32(e.0)?;
            w.str(k)?;
            w.str(v)?;
        }
        // Thread totals: a flag, then per thread a given-flag byte and M values.
        w.u8(u8::from(!self.has_total.is_empty()))?;
        if !self.has_total.is_empty() {
            for (t, &has) in self.has_total.iter().enumerate() {
                w.u8(u8::from(has))?;
                let m = self.metrics.len();
                w.f64s(&self.totals[t * m..(t + 1) * m])?;
            }
        }
        Ok(())
    }
}

/// The tag of a combination rule: its position in [`Combine::ALL`] (0 sum, 1 min, 2 max,
/// 3 mean, 4 not combinable).
fn combine_tag(c: Combine) -> u8 {
    Combine::ALL.iter().position(|&x| x == c).map_or(0, |i| i as u8)
}
