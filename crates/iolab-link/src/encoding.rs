//! Line encodings: how many of the bits on the wire carry data.

use serde::{Deserialize, Serialize};

/// A physical-layer line code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// 8b/10b: every data byte is sent as 10 symbols (SATA all generations, PCIe 1.x and 2.x).
    #[serde(rename = "8b10b")]
    B8b10b,
    /// 128b/130b: two sync bits per 128 data bits (PCIe 3.0 and later).
    #[serde(rename = "128b130b")]
    B128b130b,
}

impl Encoding {
    /// Fraction of the line rate left for data: 0.8 for 8b/10b, 128/130 ≈ 0.985 for 128b/130b.
    pub fn efficiency(self) -> f64 {
        match self {
            Encoding::B8b10b => 8.0 / 10.0,
            Encoding::B128b130b => 128.0 / 130.0,
        }
    }

    /// The conventional name, e.g. "8b/10b".
    pub fn name(self) -> &'static str {
        match self {
            Encoding::B8b10b => "8b/10b",
            Encoding::B128b130b => "128b/130b",
        }
    }
}
