//! Standard links (SATA, PCIe, DMI) by name, and what a port and a drive negotiate.

use super::BurstSpec;
use iolab_link::{DmiGen, Link, PcieGen, SataGen};

/// A parsed link hop: a standard link (SATA, PCIe, DMI) or a custom pipe.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LinkKind {
    /// A standard link with its math from `iolab-link`.
    Std(Link),
    /// A custom pipe of a given payload rate.
    Raw {
        /// Payload bytes per second.
        bytes_per_s: f64,
        /// One pipe for both directions.
        half_duplex: bool,
        /// Its bursts and read requests, if they cost bus time of their own.
        bursts: Option<BurstSpec>,
    },
}

/// Parses a standard link name: `sata1.5`, `sata3`, `sata6`, `pcie{1-5}x{lanes}`, `dmi{1-4}`.
pub fn parse_std_link(s: &str) -> Option<Link> {
    if let Some(g) = s.strip_prefix("sata") {
        let gbps: f64 = g.parse().ok()?;
        return SataGen::from_gbps(gbps).map(Link::sata);
    }
    if let Some(rest) = s.strip_prefix("pcie") {
        let (g, l) = rest.split_once('x')?;
        let gen = match g {
            "1" => PcieGen::Gen1,
            "2" => PcieGen::Gen2,
            "3" => PcieGen::Gen3,
            "4" => PcieGen::Gen4,
            "5" => PcieGen::Gen5,
            _ => return None,
        };
        let lanes: u8 = l.parse().ok()?;
        if !matches!(lanes, 1 | 2 | 4 | 8 | 16) {
            return None;
        }
        return Some(Link::pcie(gen, lanes));
    }
    match s {
        "dmi1" => Some(Link::dmi(DmiGen::Dmi1)),
        "dmi2" => Some(Link::dmi(DmiGen::Dmi2)),
        "dmi3" => Some(Link::dmi(DmiGen::Dmi3)),
        "dmi4" => Some(Link::dmi(DmiGen::Dmi4)),
        _ => None,
    }
}

/// The link two ends train to: the lower generation and the narrower width; `None` if they
/// cannot talk (SATA against PCIe).
pub fn negotiate(a: Link, b: Link) -> Option<Link> {
    match (a, b) {
        (Link::Sata { gen: x }, Link::Sata { gen: y }) => Some(Link::sata(x.min(y))),
        _ => {
            let (ga, la) = a.pcie_equivalent()?;
            let (gb, lb) = b.pcie_equivalent()?;
            Some(Link::pcie(ga.min(gb), la.min(lb)))
        }
    }
}
