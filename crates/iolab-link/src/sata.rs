//! SATA generations and the FIS framing/handshake factor.
//!
//! Figures (the SATA specification's line rates; ceilings as reviews measure them):
//! * line rates 1.5/3/6 Gb/s, 8b/10b encoding → 150/300/600 MB/s of payload bandwidth;
//! * practical ceilings 275–285 MB/s on 3 Gb/s and 550–557 MB/s on 6 Gb/s.
//!
//! Framing alone (SOF/CRC/EOF, the 1-DW Data FIS header, ALIGN pairs every ≤256 DW) costs only
//! 1–2 %, so the observed 92–95 % needs a per-FIS handshake gap (X_RDY/R_RDY/R_OK/HOLD and the
//! bus turnaround). Calibrated (derived) gaps per Data FIS, framing included: ≈1.2 µs at 6 Gb/s
//! (8 KiB takes 13.65 µs at 600 MB/s against 14.9 µs at 550 MB/s) and ≈2 µs at 3 Gb/s. No figure
//! exists for 1.5 Gb/s; we extrapolate 4 µs (twice the 3 Gb/s gap, like the bit time).

use crate::Encoding;
use serde::{Deserialize, Serialize};

/// Largest payload one SATA Data FIS carries: 2048 DW = 8 KiB.
pub const SATA_MAX_FIS_PAYLOAD_BYTES: u32 = 8192;

/// A SATA generation (negotiated link speed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SataGen {
    /// SATA 1.x, 1.5 Gb/s.
    #[serde(rename = "sata_1.5gbps")]
    Gen1,
    /// SATA 2.x, 3 Gb/s.
    #[serde(rename = "sata_3gbps")]
    Gen2,
    /// SATA 3.x, 6 Gb/s.
    #[serde(rename = "sata_6gbps")]
    Gen3,
}

impl SataGen {
    /// All generations, slowest first.
    pub const ALL: [SataGen; 3] = [SataGen::Gen1, SataGen::Gen2, SataGen::Gen3];

    /// Line rate in Gb/s (10^9 bit/s).
    pub fn gbps(self) -> f64 {
        match self {
            SataGen::Gen1 => 1.5,
            SataGen::Gen2 => 3.0,
            SataGen::Gen3 => 6.0,
        }
    }

    /// The generation with this line rate in Gb/s, if it is one (tolerates rounding, e.g. 1.5).
    pub fn from_gbps(gbps: f64) -> Option<SataGen> {
        SataGen::ALL
            .into_iter()
            .find(|g| (g.gbps() - gbps).abs() < 0.05)
    }

    /// SATA uses 8b/10b at every generation.
    pub fn encoding(self) -> Encoding {
        Encoding::B8b10b
    }

    /// Per-Data-FIS handshake and framing gap in nanoseconds (see the module docs for sources).
    pub fn fis_gap_ns(self) -> f64 {
        match self {
            SataGen::Gen1 => 4000.0,
            SataGen::Gen2 => 2000.0,
            SataGen::Gen3 => 1200.0,
        }
    }
}
