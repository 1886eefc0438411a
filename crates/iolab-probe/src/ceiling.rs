//! The path's ceiling: every link from the drive to the CPU through `iolab_link`, the same
//! math the hardware model uses, and the narrowest one.

use crate::chipset::is_amd_chipset_bridge;
use crate::model::{Ceiling, ChipsetVerdict, PathLink, PciDevice, SataFacts};
use crate::pci::upstream_facing;
use iolab_link::{Link, PcieGen, DEFAULT_MAX_PAYLOAD_BYTES, SATA_MAX_FIS_PAYLOAD_BYTES};

/// A PCIe link from a speed in GT/s and a width.
pub(crate) fn pcie_link(gts: Option<f64>, width: Option<u8>) -> Option<Link> {
    Some(Link::pcie(PcieGen::from_gt_per_s(gts?)?, width?))
}

fn min_opt<T: PartialOrd + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y < x { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

fn path_link(label: String, link: Link, capable: Option<Link>, payload: Option<u32>) -> PathLink {
    let (payload_bytes, payload_assumed) = match payload {
        Some(p) => (p, false),
        None => (DEFAULT_MAX_PAYLOAD_BYTES, true),
    };
    PathLink {
        label,
        line_rate: link.line_rate(),
        after_encoding: link.after_encoding(),
        effective: link.effective(payload_bytes),
        link,
        capable: capable.filter(|c| *c != link),
        payload_bytes,
        payload_assumed,
    }
}

/// The PCIe links of a chain as (device, parent, trained link, what both ends support).
pub(crate) fn pcie_links(chain: &[PciDevice]) -> Vec<(usize, Option<Link>, Option<Link>)> {
    upstream_facing(chain)
        .into_iter()
        .map(|i| {
            let (d, p) = (&chain[i], &chain[i + 1]);
            let current = pcie_link(d.current_speed_gts, d.current_width);
            let capable = pcie_link(
                min_opt(d.max_speed_gts, p.max_speed_gts),
                min_opt(d.max_width, p.max_width),
            );
            (i, current, capable)
        })
        .collect()
}

/// Builds the ceiling; `None` when no link on the path is known (virtual devices, or sysfs
/// without link attributes).
pub(crate) fn compute(
    sata: Option<&SataFacts>,
    chain: &[PciDevice],
    chipset: Option<&ChipsetVerdict>,
) -> Option<Ceiling> {
    let mut links = Vec::new();
    if let Some(l) = sata.and_then(|s| s.current_link) {
        let port = sata.map(|s| s.port.as_str()).unwrap_or("?");
        let best = sata.and_then(|s| s.device_supports.last().copied());
        links.push(path_link(
            format!("SATA link {port}"),
            l,
            best.filter(|b| l.is_slower_than(b)),
            Some(SATA_MAX_FIS_PAYLOAD_BYTES),
        ));
    }
    for (i, current, capable) in pcie_links(chain) {
        let Some(current) = current else { continue };
        let d = &chain[i];
        let mut label = format!("PCIe {} → {}", d.address, chain[i + 1].address);
        let parent_is_chipset = chain.get(i + 1).is_some_and(is_amd_chipset_bridge);
        if is_amd_chipset_bridge(d) && !parent_is_chipset {
            label.push_str(" (chipset uplink)");
        }
        let mps = chain[..=i].iter().find_map(|d| d.max_payload_bytes);
        links.push(path_link(label, current, capable, mps));
    }
    let mut partial = false;
    if let Some(v) = chipset.filter(|v| v.behind_chipset) {
        match v.uplink {
            Some(dmi) => links.push(path_link(
                "DMI chipset uplink (generation guessed)".into(),
                dmi,
                None,
                None,
            )),
            // AMD's uplink is a visible hop; an Intel DMI of unknown generation is not.
            None => partial = !chain.iter().any(is_amd_chipset_bridge),
        }
    }
    if links.is_empty() {
        return None;
    }
    let pairs: Vec<(Link, iolab_link::Framing)> = links
        .iter()
        .map(|l| (l.link, iolab_link::Framing::with_payload(l.payload_bytes)))
        .collect();
    let (bottleneck, rate) = iolab_link::bottleneck(pairs.iter().map(|(l, f)| (l, *f)))?;
    Some(Ceiling {
        links,
        bottleneck,
        bytes_per_s: rate.bytes_per_s(),
        partial,
    })
}
