//! Latencies recorded in an HdrHistogram (ns) and summarised in µs as one serialisable struct,
//! the `latency_us` object of the drivers' reports.

use crate::error::{Failure, Result};
use hdrhistogram::Histogram;
use serde::Serialize;
use std::time::Duration;

/// Histogram range: 1 ns to 60 s at 3 significant digits (values exact to 0.1%).
const LOWEST_NS: u64 = 1;
const HIGHEST_NS: u64 = 60_000_000_000;
const SIGNIFICANT_DIGITS: u8 = 3;

/// A histogram for nanosecond samples (record with `saturating_record(nanos(d))`).
pub fn new_histogram() -> Result<Histogram<u64>> {
    Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, SIGNIFICANT_DIGITS)
        .map_err(|e| Failure::new(format!("internal error creating the histogram: {e}")))
}

/// A duration in whole nanoseconds, saturating.
pub fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// `value` rounded to `decimals` decimal places (JSON numbers stay readable).
pub fn round(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}

/// `count` per second over `seconds`; 0 for an empty interval (nothing measured).
pub fn rate(count: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count / seconds
    } else {
        0.0
    }
}

/// Percentiles, extremes, mean and standard deviation in µs, to the nanosecond.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Percentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub min: f64,
    pub mean: f64,
    pub stdev: f64,
}

impl Percentiles {
    /// The summary of nanosecond samples.
    pub fn of(h: &Histogram<u64>) -> Percentiles {
        let us = |ns: f64| round(ns / 1e3, 3);
        let at = |q: f64| us(h.value_at_quantile(q) as f64);
        Percentiles {
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            p999: at(0.999),
            max: us(h.max() as f64),
            min: us(h.min() as f64),
            mean: us(h.mean()),
            stdev: us(h.stdev()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(got: f64, want: f64) {
        assert!((got - want).abs() <= want / 1000.0, "{got} vs {want}");
    }

    #[test]
    fn summaries_are_in_microseconds() {
        let mut h = new_histogram().unwrap();
        // 1..=1000 µs, one sample each: p50 = 500 µs, p99.9 = 999 µs.
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let p = Percentiles::of(&h);
        near(p.p50, 500.0);
        near(p.p90, 900.0);
        near(p.p99, 990.0);
        near(p.p999, 999.0);
        near(p.max, 1000.0);
        near(p.min, 1.0);
        near(p.mean, 500.5);
        near(p.stdev, 288.675);
        let json = serde_json::to_value(&p).unwrap();
        let keys: Vec<_> = json.as_object().unwrap().keys().cloned().collect();
        let mut want = ["p50", "p90", "p99", "p999", "max", "min", "mean", "stdev"];
        want.sort();
        assert_eq!(keys, want);
    }

    #[test]
    fn helpers() {
        assert_eq!(round(1.23456, 3), 1.235);
        assert_eq!(rate(10.0, 0.5), 20.0);
        assert_eq!(rate(10.0, 0.0), 0.0);
        assert_eq!(nanos(Duration::from_micros(3)), 3000);
        assert_eq!(nanos(Duration::MAX), u64::MAX);
        let mut h = new_histogram().unwrap();
        h.saturating_record(nanos(Duration::from_secs(3600)));
        near(Percentiles::of(&h).max, 60e6);
    }
}
