//! A link on the host path and its three rates: line, after encoding, effective.

use crate::{Encoding, PcieGen, Rate, SataGen, TlpParams, SATA_MAX_FIS_PAYLOAD_BYTES};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Intel's chipset uplink (Direct Media Interface). Electrically a PCIe link, so its math is
/// that of the equivalent PCIe link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DmiGen {
    /// DMI 1.0 = PCIe 1.x x4 (1 GB/s after encoding): ICH7–ICH10 and the 5-series PCH of the
    /// 2010 testbed (P55/H55). From Intel's datasheets, not from our reference file.
    Dmi1,
    /// DMI 2.0 = PCIe 2.0 x4, "2 GB/s in each direction" (Intel datasheet via [18]); 5- to
    /// 9-series chipsets. Observed ceiling 1.6–1.8 GB/s.
    Dmi2,
    /// DMI 3.0 = PCIe 3.0 x4 (≈3.94 GB/s after encoding); 100- to 400-series chipsets [18][19].
    Dmi3,
    /// DMI 4.0 = PCIe 4.0 x8 (500/600-series chipsets; from Intel's datasheets, not from our
    /// reference file — listed so a modern host is not mis-described).
    Dmi4,
}

impl DmiGen {
    /// The PCIe generation and lane count this DMI version is equivalent to.
    pub fn as_pcie(self) -> (PcieGen, u8) {
        match self {
            DmiGen::Dmi1 => (PcieGen::Gen1, 4),
            DmiGen::Dmi2 => (PcieGen::Gen2, 4),
            DmiGen::Dmi3 => (PcieGen::Gen3, 4),
            DmiGen::Dmi4 => (PcieGen::Gen4, 8),
        }
    }
}

/// One link between a drive and the CPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Link {
    /// A SATA link at a negotiated generation.
    Sata {
        /// Negotiated generation.
        gen: SataGen,
    },
    /// A PCIe link at a trained generation and width.
    Pcie {
        /// Trained generation.
        gen: PcieGen,
        /// Trained width (lanes); 0 is treated as a dead link.
        lanes: u8,
    },
    /// An Intel DMI chipset uplink.
    Dmi {
        /// DMI version.
        gen: DmiGen,
    },
}

/// What one transfer unit on a link carries, for [`Link::effective`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Framing {
    /// PCIe/DMI: max payload size per TLP in bytes (128–4096). SATA: payload per Data FIS
    /// (at most 8192; larger values are clamped).
    pub payload_bytes: u32,
    /// PCIe/DMI TLP header and CRC options (ignored for SATA).
    pub tlp: TlpParams,
    /// SATA: handshake+framing gap per Data FIS in ns; `None` = the calibrated default of the
    /// generation ([`SataGen::fis_gap_ns`]). Ignored for PCIe.
    pub fis_gap_ns: Option<f64>,
}

impl Framing {
    /// Default framing with the given payload per packet (TLP or FIS).
    pub fn with_payload(payload_bytes: u32) -> Self {
        Framing {
            payload_bytes,
            tlp: TlpParams::default(),
            fis_gap_ns: None,
        }
    }
}

impl Link {
    /// A SATA link.
    pub fn sata(gen: SataGen) -> Link {
        Link::Sata { gen }
    }

    /// A PCIe link.
    pub fn pcie(gen: PcieGen, lanes: u8) -> Link {
        Link::Pcie { gen, lanes }
    }

    /// A DMI link.
    pub fn dmi(gen: DmiGen) -> Link {
        Link::Dmi { gen }
    }

    /// The PCIe generation and width this link behaves like (`None` for SATA).
    pub fn pcie_equivalent(&self) -> Option<(PcieGen, u8)> {
        match *self {
            Link::Sata { .. } => None,
            Link::Pcie { gen, lanes } => Some((gen, lanes)),
            Link::Dmi { gen } => Some(gen.as_pcie()),
        }
    }

    /// The line code of this link.
    pub fn encoding(&self) -> Encoding {
        match *self {
            Link::Sata { gen } => gen.encoding(),
            _ => self
                .pcie_equivalent()
                .map_or(Encoding::B8b10b, |(g, _)| g.encoding()),
        }
    }

    /// Raw signalling rate summed over all lanes (bits on the wire, before encoding), one
    /// direction.
    pub fn line_rate(&self) -> Rate {
        match *self {
            Link::Sata { gen } => Rate::from_bits_per_s(gen.gbps() * 1e9),
            _ => {
                let (gen, lanes) = self.pcie_equivalent().unwrap_or((PcieGen::Gen1, 0));
                Rate::from_bits_per_s(gen.gt_per_s() * 1e9 * f64::from(lanes))
            }
        }
    }

    /// Payload bandwidth after the line code, one direction: what spec sheets call the link's
    /// bandwidth (SATA 6 Gb/s → 600 MB/s, PCIe 3.0 x4 → 3.94 GB/s).
    pub fn after_encoding(&self) -> Rate {
        self.line_rate().scaled(self.encoding().efficiency())
    }

    /// Fraction of the after-encoding rate left for data with this framing (0..=1).
    pub fn protocol_efficiency(&self, framing: &Framing) -> f64 {
        match *self {
            Link::Sata { gen } => {
                let payload = framing.payload_bytes.min(SATA_MAX_FIS_PAYLOAD_BYTES);
                if payload == 0 {
                    return 0.0;
                }
                let data_ns = self.after_encoding().time_ns(u64::from(payload));
                let gap = framing.fis_gap_ns.unwrap_or_else(|| gen.fis_gap_ns());
                data_ns / (data_ns + gap)
            }
            _ => framing.tlp.efficiency(framing.payload_bytes),
        }
    }

    /// Sustained one-direction data rate with `payload_bytes` per packet and default framing:
    /// the max payload size for PCIe/DMI (e.g. 256), the Data FIS size for SATA (e.g. 8192).
    pub fn effective(&self, payload_bytes: u32) -> Rate {
        self.effective_with(&Framing::with_payload(payload_bytes))
    }

    /// [`Link::effective`] with explicit framing parameters.
    pub fn effective_with(&self, framing: &Framing) -> Rate {
        self.after_encoding()
            .scaled(self.protocol_efficiency(framing))
    }

    /// Time in ns to move `bytes` of payload across this link with the given framing: whole
    /// packets (TLPs or FISes) each pay their overhead, so small transfers are less efficient
    /// than [`Link::effective`] suggests. For the simulator's link pipes.
    pub fn transfer_ns(&self, bytes: u64, framing: &Framing) -> f64 {
        if bytes == 0 {
            return 0.0;
        }
        let after = self.after_encoding();
        match *self {
            Link::Sata { gen } => {
                let chunk = u64::from(framing.payload_bytes.clamp(1, SATA_MAX_FIS_PAYLOAD_BYTES));
                let fises = bytes.div_ceil(chunk);
                let gap = framing.fis_gap_ns.unwrap_or_else(|| gen.fis_gap_ns());
                after.time_ns(bytes) + fises as f64 * gap
            }
            _ => {
                let mps = u64::from(framing.payload_bytes.max(1));
                let tlps = bytes.div_ceil(mps);
                let wire = bytes + tlps * u64::from(framing.tlp.overhead_bytes());
                after.time_ns(wire)
            }
        }
    }

    /// Whether this link carries less than `other` after encoding (e.g. trained vs capable).
    pub fn is_slower_than(&self, other: &Link) -> bool {
        self.after_encoding().bytes_per_s() < other.after_encoding().bytes_per_s()
    }
}

impl fmt::Display for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Link::Sata { gen } => write!(f, "SATA {} Gb/s", gen.gbps()),
            Link::Pcie { gen, lanes } => {
                write!(
                    f,
                    "PCIe {}.0 x{lanes} ({} GT/s)",
                    gen.number(),
                    gen.gt_per_s()
                )
            }
            Link::Dmi { gen } => {
                let (p, lanes) = gen.as_pcie();
                let v = match gen {
                    DmiGen::Dmi1 => "1.0",
                    DmiGen::Dmi2 => "2.0",
                    DmiGen::Dmi3 => "3.0",
                    DmiGen::Dmi4 => "4.0",
                };
                write!(f, "DMI {v} (= PCIe {}.0 x{lanes})", p.number())
            }
        }
    }
}
