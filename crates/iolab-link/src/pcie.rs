//! PCIe generations and transaction-layer (TLP) overhead.
//!
//! Rates and encodings (the PCI Express base specifications' signalling rates): 2.5/5/8/16/32 GT/s per
//! lane; 8b/10b for 1.x/2.x, 128b/130b from 3.0 → 250 MB/s, 500 MB/s, 985 MB/s, 1.97 GB/s and
//! 3.94 GB/s per lane.
//!
//! TLP overhead (§3.2, Intel AN 456 and the PLX PEX8532 datasheet [17]): every TLP carries
//! framing (STP/END for 1.x/2.x, the 4-byte STP token from 3.0), a 2-byte sequence number (inside
//! the token from 3.0), a 3-DW or 4-DW header and a 4-byte LCRC, optionally a 4-byte ECRC:
//! 20 bytes with a 3-DW header, 24 with a 4-DW header (64-bit addresses). Posted-write efficiency
//! is `payload / (payload + overhead)`: 86.5 % at 128 B and 92.8 % at 256 B with a 3-DW header
//! (Intel quotes 92 % for 256 B). SKP ordered sets take about 0.3 % of every lane
//! ([`PcieGen::skp_fraction`]). Reverse-direction ACK/flow-control DLLPs and read requests travel
//! against the data of a one-way stream and are not included; observed ceilings are about 86 % of
//! the after-encoding rate (PCIe 3.0 x4 ≈ 3.4 GB/s).

use crate::Encoding;
use serde::{Deserialize, Serialize};

/// Max payload size assumed when the real one is unknown. 256 B is the common setting on desktop
/// root ports (the range is 128–4096 B); it is what Intel's 92 % figure uses.
pub const DEFAULT_MAX_PAYLOAD_BYTES: u32 = 256;

/// A PCIe generation (per-lane signalling rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PcieGen {
    /// PCIe 1.x, 2.5 GT/s.
    Gen1,
    /// PCIe 2.x, 5 GT/s.
    Gen2,
    /// PCIe 3.x, 8 GT/s.
    Gen3,
    /// PCIe 4.0, 16 GT/s.
    Gen4,
    /// PCIe 5.0, 32 GT/s.
    Gen5,
}

impl PcieGen {
    /// All generations, slowest first.
    pub const ALL: [PcieGen; 5] = [
        PcieGen::Gen1,
        PcieGen::Gen2,
        PcieGen::Gen3,
        PcieGen::Gen4,
        PcieGen::Gen5,
    ];

    /// Transfers per second per lane, in GT/s.
    pub fn gt_per_s(self) -> f64 {
        match self {
            PcieGen::Gen1 => 2.5,
            PcieGen::Gen2 => 5.0,
            PcieGen::Gen3 => 8.0,
            PcieGen::Gen4 => 16.0,
            PcieGen::Gen5 => 32.0,
        }
    }

    /// The generation signalling at `gt` GT/s, if any (tolerates rounding).
    pub fn from_gt_per_s(gt: f64) -> Option<PcieGen> {
        PcieGen::ALL
            .into_iter()
            .find(|g| (g.gt_per_s() - gt).abs() < 0.05)
    }

    /// The generation number, 1–5.
    pub fn number(self) -> u8 {
        self as u8 + 1
    }

    /// Fraction of each lane's symbol times taken by SKP ordered sets (clock compensation),
    /// which every transmitter inserts whatever the traffic. Up to 2.x a 4-symbol SKP ordered
    /// set every 1,180–1,538 symbol times; from 3.0 one 16-symbol SKP block every 370–375
    /// 128b/130b blocks (PCI Express Base Specification, §4.2.7). The longest intervals are
    /// taken, as pcie-bench's model does (Neugebauer et al., SIGCOMM 2018: `SKIP_Interval =
    /// 1538`, `SKIP_Length = 4`).
    pub fn skp_fraction(self) -> f64 {
        match self {
            PcieGen::Gen1 | PcieGen::Gen2 => 4.0 / (1538.0 + 4.0),
            _ => 1.0 / (375.0 + 1.0),
        }
    }

    /// 8b/10b up to 2.x, 128b/130b from 3.0.
    pub fn encoding(self) -> Encoding {
        match self {
            PcieGen::Gen1 | PcieGen::Gen2 => Encoding::B8b10b,
            _ => Encoding::B128b130b,
        }
    }
}

/// TLP header format: 3 DW for 32-bit addresses, 4 DW for 64-bit ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TlpHeader {
    /// 12-byte header (32-bit address).
    ThreeDw,
    /// 16-byte header (64-bit address).
    FourDw,
}

/// The knobs of PCIe transaction-layer efficiency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TlpParams {
    /// Header format of data TLPs.
    pub header: TlpHeader,
    /// Whether an end-to-end CRC (ECRC, 4 bytes) is appended.
    pub ecrc: bool,
}

impl Default for TlpParams {
    /// 3-DW header without ECRC: the case behind Intel's 92 %-at-256-B figure.
    fn default() -> Self {
        TlpParams {
            header: TlpHeader::ThreeDw,
            ecrc: false,
        }
    }
}

impl TlpParams {
    /// Memory writes into host memory above 4 GiB: the PCI Express Base Specification
    /// (§2.2.4.1) allows the 3-DW header only for addresses below 4 GiB, so a device writing a
    /// 64-bit OS's buffers on a host with more RAM than that sends 4-DW headers (pcie-bench's
    /// model assumes 64-bit addresses by default).
    pub const HOST_MEMORY_WRITE: TlpParams = TlpParams {
        header: TlpHeader::FourDw,
        ecrc: false,
    };

    /// Completions with data, the TLPs that carry what a device reads from host memory: their
    /// header is always 3 DW, whatever the address (PCI Express Base Specification, §2.2.9).
    pub const COMPLETION: TlpParams = TlpParams {
        header: TlpHeader::ThreeDw,
        ecrc: false,
    };

    /// Bytes each TLP adds to its payload: framing + sequence (4) + header (12/16) + LCRC (4)
    /// + ECRC (0/4).
    pub fn overhead_bytes(self) -> u32 {
        let header = match self.header {
            TlpHeader::ThreeDw => 12,
            TlpHeader::FourDw => 16,
        };
        4 + header + 4 + if self.ecrc { 4 } else { 0 }
    }

    /// Posted-write efficiency for TLPs carrying `payload_bytes` each (0 payload → 0).
    pub fn efficiency(self, payload_bytes: u32) -> f64 {
        if payload_bytes == 0 {
            return 0.0;
        }
        let p = f64::from(payload_bytes);
        p / (p + f64::from(self.overhead_bytes()))
    }
}
