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

#[cfg(test)]
mod tests {
    //! The probe's ceilings are `iolab_link`'s figures (the known values), not a copy.
    use super::*;
    use crate::model::{ChipsetVerdict, Confidence};
    use iolab_link::{DmiGen, SataGen};

    fn pci(addr: &str, gts: Option<f64>, width: Option<u8>) -> PciDevice {
        PciDevice {
            address: addr.into(),
            vendor_id: Some(0x8086),
            device_id: None,
            class: None,
            driver: None,
            port_type: None,
            current_speed_gts: gts,
            current_width: width,
            max_speed_gts: gts,
            max_width: width,
            max_payload_bytes: Some(256),
        }
    }

    fn sata6() -> SataFacts {
        SataFacts {
            port: "ata1".into(),
            current: Some("6.0 Gbps".into()),
            current_link: Some(Link::sata(SataGen::Gen3)),
            ..SataFacts::default()
        }
    }

    #[test]
    fn sata_6gbps_is_600_mb_after_8b10b() {
        let c = compute(Some(&sata6()), &[], None).unwrap();
        assert_eq!(c.links.len(), 1);
        let l = &c.links[0];
        assert!((l.line_rate.bits_per_s() - 6e9).abs() < 1.0);
        assert!((l.after_encoding.mb_per_s() - 600.0).abs() < 1e-9);
        assert_eq!(l.payload_bytes, SATA_MAX_FIS_PAYLOAD_BYTES);
        assert_eq!(
            c.bytes_per_s,
            Link::sata(SataGen::Gen3).effective(8192).bytes_per_s()
        );
        assert!(
            (540e6..=560e6).contains(&c.bytes_per_s),
            "{}",
            c.bytes_per_s
        );
        assert!(!c.partial);
    }

    #[test]
    fn pcie_figures_before_and_after_tlp_overhead() {
        // An endpoint trained at PCIe 1.0 x1 under a root port.
        let chain = [
            pci("0000:02:00.0", Some(2.5), Some(1)),
            pci("0000:00:1c.0", Some(2.5), Some(1)),
        ];
        let c = compute(None, &chain, None).unwrap();
        assert!((c.links[0].after_encoding.mb_per_s() - 250.0).abs() < 1e-9);
        assert!(c.bytes_per_s < 250e6);
        // PCIe 3.0 x4: ≈3.94 GB/s before TLP overhead, 256 B payloads after it.
        let chain = [
            pci("0000:01:00.0", Some(8.0), Some(4)),
            pci("0000:00:01.0", Some(8.0), Some(4)),
        ];
        let c = compute(None, &chain, None).unwrap();
        let l = &c.links[0];
        assert!(
            (l.after_encoding.gb_per_s() - 3.938).abs() < 0.002,
            "{}",
            l.after_encoding.gb_per_s()
        );
        assert_eq!(l.payload_bytes, 256);
        assert!(!l.payload_assumed);
        assert_eq!(
            c.bytes_per_s,
            Link::pcie(PcieGen::Gen3, 4).effective(256).bytes_per_s()
        );
    }

    #[test]
    fn dmi2_uplink_is_about_2_gb_and_the_bottleneck() {
        let chain = [
            pci("0000:03:00.0", Some(8.0), Some(4)),
            pci("0000:00:1c.4", Some(8.0), Some(4)),
        ];
        let behind = ChipsetVerdict {
            behind_chipset: true,
            confidence: Confidence::Medium,
            reason: "test".into(),
            uplink: Some(Link::dmi(DmiGen::Dmi2)),
            uplink_confidence: Some(Confidence::Low),
        };
        let c = compute(None, &chain, Some(&behind)).unwrap();
        assert_eq!(c.links.len(), 2);
        assert_eq!(c.bottleneck, 1);
        assert!((c.links[1].after_encoding.gb_per_s() - 2.0).abs() < 1e-9);
        assert!((1.6e9..2.0e9).contains(&c.bytes_per_s), "{}", c.bytes_per_s);
        // An Intel uplink of unknown generation leaves the ceiling partial.
        let unknown = ChipsetVerdict {
            uplink: None,
            ..behind
        };
        assert!(compute(None, &chain, Some(&unknown)).unwrap().partial);
    }

    #[test]
    fn nothing_known_is_no_ceiling() {
        assert!(compute(None, &[], None).is_none());
        let no_attrs = [
            pci("0000:00:02.0", None, None),
            pci("0000:00:00.0", None, None),
        ];
        assert!(compute(None, &no_attrs, None).is_none());
    }
}
