//! Histograms of an event's values across threads.

use serde::Serialize;

/// How to choose the bins of a histogram.
#[derive(Clone, Debug, PartialEq)]
pub enum Bins {
    /// Sturges' rule: `ceil(log2 n) + 1` equal-width bins over [min, max] (at most 200).
    Auto,
    /// This many equal-width bins over [min, max] (at least 1).
    Count(usize),
    /// Explicit ascending bin edges `e0 < e1 < ... < ek` (k bins; the last bin includes `ek`).
    /// Values outside [e0, ek] are counted in `below`/`above`.
    Edges(Vec<f64>),
}

/// A histogram: `counts[i]` values fall in `[edges[i], edges[i+1])` (the last bin is closed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Histogram {
    /// Bin edges, `counts.len() + 1` of them, ascending.
    pub edges: Vec<f64>,
    /// Number of values per bin.
    pub counts: Vec<u64>,
    /// Values below the first edge (only with explicit edges).
    pub below: u64,
    /// Values above the last edge (only with explicit edges).
    pub above: u64,
}

/// Builds a histogram of `values` (NaN values are ignored).
///
/// With [`Bins::Auto`] or [`Bins::Count`] and all values equal, there is one bin `[v, v]`.
/// Invalid explicit edges (fewer than 2, not strictly ascending, not finite) give an empty
/// histogram with those edges' count of bins all zero... and never panic: they are rejected
/// as `Err` with a message.
pub fn histogram(values: &[f64], bins: &Bins) -> Result<Histogram, String> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    let edges: Vec<f64> = match bins {
        Bins::Edges(e) => {
            if e.len() < 2 || e.iter().any(|x| !x.is_finite()) || e.windows(2).any(|w| w[0] >= w[1]) {
                return Err("histogram edges must be at least two finite, strictly ascending numbers".into());
            }
            e.clone()
        }
        Bins::Auto | Bins::Count(_) => {
            let k = match bins {
                Bins::Count(k) => (*k).max(1),
                _ => ((finite.len().max(1) as f64).log2().ceil() as usize + 1).clamp(1, 200),
            };
            let min = finite.iter().copied().fold(f64::INFINITY, f64::min);
            let max = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            if finite.is_empty() {
                return Ok(Histogram {
                    edges: vec![0.0, 0.0],
                    counts: vec![0],
                    below: 0,
                    above: 0,
                });
            }
            if min == max {
                vec![min, max]
            } else {
                let w = (max - min) / k as f64;
                let mut e: Vec<f64> = (0..k).map(|i| min + w * i as f64).collect();
                e.push(max);
                e
            }
        }
    };
    let nb = edges.len() - 1;
    let mut counts = vec![0u64; nb];
    let (mut below, mut above) = (0, 0);
    let (lo, hi) = (edges[0], edges[nb]);
    for v in finite {
        if v < lo {
            below += 1;
        } else if v > hi {
            above += 1;
        } else {
            // Last edge <= v: binary search over edges.
            let i = edges.partition_point(|&e| e <= v).saturating_sub(1).min(nb - 1);
            counts[i] += 1;
        }
    }
    Ok(Histogram {
        edges,
        counts,
        below,
        above,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_width_bins_include_the_max() {
        let h = histogram(&[0.0, 1.0, 2.0, 3.0, 4.0], &Bins::Count(2)).unwrap();
        assert_eq!(h.edges, vec![0.0, 2.0, 4.0]);
        assert_eq!(h.counts, vec![2, 3]);
    }

    #[test]
    fn constant_values_make_one_bin() {
        let h = histogram(&[5.0; 7], &Bins::Auto).unwrap();
        assert_eq!(h.counts, vec![7]);
    }

    #[test]
    fn explicit_edges_count_outside_values() {
        let h = histogram(
            &[-1.0, 0.5, 1.5, 9.0, f64::NAN],
            &Bins::Edges(vec![0.0, 1.0, 2.0]),
        )
        .unwrap();
        assert_eq!((h.counts.clone(), h.below, h.above), (vec![1, 1], 1, 1));
        assert!(histogram(&[1.0], &Bins::Edges(vec![1.0, 1.0])).is_err());
    }

    proptest::proptest! {
        #[test]
        fn every_value_is_counted_once(values in proptest::collection::vec(-1e9f64..1e9, 0..300), k in 1usize..40) {
            let h = histogram(&values, &Bins::Count(k)).unwrap();
            proptest::prop_assert_eq!(h.counts.iter().sum::<u64>() as usize + h.below as usize + h.above as usize, values.len());
        }
    }
}
