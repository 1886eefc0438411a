//! A data rate with its unit fixed: bytes per second (decimal units when printed).

use serde::{Deserialize, Serialize};
use std::fmt;

/// A data rate in bytes per second.
///
/// Link rates are quoted in decimal units (1 MB/s = 10^6 B/s, 1 Gb/s = 10^9 bit/s), as the
/// standards and the reviews do, so `Display` prints decimal MB/s or GB/s.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Rate(f64);

impl Rate {
    /// A rate of `bytes` per second.
    pub const fn from_bytes_per_s(bytes: f64) -> Self {
        Rate(bytes)
    }

    /// A rate of `bits` per second.
    pub fn from_bits_per_s(bits: f64) -> Self {
        Rate(bits / 8.0)
    }

    /// Bytes per second.
    pub const fn bytes_per_s(self) -> f64 {
        self.0
    }

    /// Bits per second.
    pub fn bits_per_s(self) -> f64 {
        self.0 * 8.0
    }

    /// Decimal megabytes per second (10^6 B/s).
    pub fn mb_per_s(self) -> f64 {
        self.0 / 1e6
    }

    /// Decimal gigabytes per second (10^9 B/s).
    pub fn gb_per_s(self) -> f64 {
        self.0 / 1e9
    }

    /// This rate scaled by an efficiency factor (0..=1).
    pub fn scaled(self, factor: f64) -> Self {
        Rate(self.0 * factor)
    }

    /// The slower of two rates: a path runs at the pace of its narrowest pipe.
    pub fn min(self, other: Rate) -> Rate {
        if other.0 < self.0 {
            other
        } else {
            self
        }
    }

    /// Nanoseconds needed to move `bytes` at this rate (infinite for a zero rate).
    pub fn time_ns(self, bytes: u64) -> f64 {
        bytes as f64 / self.0 * 1e9
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 1e9 {
            write!(f, "{:.2} GB/s", self.gb_per_s())
        } else {
            write!(f, "{:.0} MB/s", self.mb_per_s())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_round_trip() {
        let r = Rate::from_bits_per_s(6e9);
        assert_eq!(r.bytes_per_s(), 750e6);
        assert_eq!(r.bits_per_s(), 6e9);
        assert_eq!(r.to_string(), "750 MB/s");
        assert_eq!(Rate::from_bytes_per_s(3.94e9).to_string(), "3.94 GB/s");
        assert!((Rate::from_bytes_per_s(1e9).time_ns(4096) - 4096.0).abs() < 1e-9);
    }
}
