//! Is the drive behind the chipset? A heuristic, because nothing in sysfs says so directly.
//!
//! * **Intel client platforms.** Since the 5-series (2009) the PCH's root ports sit on bus 0 at
//!   device 0x1B, 0x1C and 0x1D, and its SATA/RAID controller at 00:17.0 (100-series on) or
//!   00:1F.2/00:1F.5 (before); the CPU's own ports are at 00:01.x and 00:06.x. Anything under a
//!   PCH function crosses DMI, which sysfs does not show as a link. Its generation is guessed
//!   from the fastest speed a PCH root port supports (2.5 GT/s → DMI 1.0-class 1 GB/s link,
//!   5 → DMI 2.0, 8 → DMI 3.0, 16 → DMI 4.0) — low confidence: Z590 pairs 8 GT/s PCH ports with
//!   a DMI 3.0 x8 link, for instance. Root ports on a bus other than 0 belong to a CPU (server
//!   sockets have one root bus per PCIe stack).
//! * **AMD.** Every root port is on the CPU; the chipset (Promontory) appears as an ordinary
//!   PCIe switch below one, so its uplink *is* a visible hop. We recognise it by its ids:
//!   AMD 0x1022 bridges 0x43B0–0x43FF (300- to 600-series chipsets) and 0x57A0–0x57AF (X570).
//! * **Virtual machines** (virtio, the hypervisor's host bridge) hide the real path: no verdict.
//!
//! Anything else gets no verdict rather than a guess.

use crate::model::{ChipsetVerdict, Confidence, PciDevice};
use crate::pci::bus_dev_fn;
use iolab_link::{DmiGen, Link};

const INTEL: u32 = 0x8086;
const AMD: u32 = 0x1022;
const VIRTIO: u32 = 0x1af4;
const CLASS_BRIDGE_PCI: u32 = 0x0604;

pub(crate) fn is_amd_chipset_bridge(d: &PciDevice) -> bool {
    d.vendor_id == Some(AMD)
        && d.class.map(|c| c >> 8) == Some(CLASS_BRIDGE_PCI)
        && d.device_id
            .is_some_and(|id| (0x43b0..=0x43ff).contains(&id) || (0x57a0..=0x57af).contains(&id))
}

fn dmi_from_port_speed(gts: Option<f64>) -> Option<Link> {
    let gen = match gts? {
        s if s >= 15.0 => DmiGen::Dmi4,
        s if s >= 7.0 => DmiGen::Dmi3,
        s if s >= 4.0 => DmiGen::Dmi2,
        _ => DmiGen::Dmi1,
    };
    Some(Link::dmi(gen))
}

/// The verdict for a PCI chain (controller first, root port or integrated function last).
pub(crate) fn judge(chain: &[PciDevice]) -> Option<ChipsetVerdict> {
    let top = chain.last()?;
    if chain.iter().any(|d| d.vendor_id == Some(VIRTIO)) {
        return None;
    }
    if let Some(bridge) = chain.iter().find(|d| is_amd_chipset_bridge(d)) {
        return Some(ChipsetVerdict {
            behind_chipset: true,
            confidence: Confidence::Medium,
            reason: format!(
                "{} is an AMD chipset bridge (id {:04x}); its upstream link is the chipset uplink",
                bridge.address,
                bridge.device_id.unwrap_or(0)
            ),
            uplink: None,
            uplink_confidence: None,
        });
    }
    let (bus, dev, func) = bus_dev_fn(&top.address)?;
    match top.vendor_id? {
        AMD => Some(ChipsetVerdict {
            behind_chipset: false,
            confidence: Confidence::Medium,
            reason: format!(
                "root port {} is an AMD CPU port and no chipset bridge is on the path",
                top.address
            ),
            uplink: None,
            uplink_confidence: None,
        }),
        INTEL if bus != 0 => Some(ChipsetVerdict {
            behind_chipset: false,
            confidence: Confidence::Low,
            reason: format!(
                "root port {} is on bus {bus:02x}: a CPU PCIe stack on a multi-root (server) \
                 platform",
                top.address
            ),
            uplink: None,
            uplink_confidence: None,
        }),
        INTEL => {
            let pch_port = matches!(dev, 0x1b..=0x1d);
            let pch_sata = dev == 0x17 || (dev == 0x1f && matches!(func, 2 | 5));
            let cpu_port = matches!(dev, 0x01 | 0x06);
            if pch_port || pch_sata {
                let what = if pch_port {
                    "PCH root port"
                } else {
                    "PCH SATA controller"
                };
                let speed = if pch_port { top.max_speed_gts } else { None };
                let uplink = dmi_from_port_speed(speed);
                Some(ChipsetVerdict {
                    behind_chipset: true,
                    confidence: Confidence::Medium,
                    reason: format!(
                        "{} at 00:{dev:02x}.{func} is where Intel puts the {what}; traffic \
                         crosses DMI",
                        top.address
                    ),
                    uplink_confidence: uplink.map(|_| Confidence::Low),
                    uplink,
                })
            } else if cpu_port {
                Some(ChipsetVerdict {
                    behind_chipset: false,
                    confidence: Confidence::Medium,
                    reason: format!(
                        "root port {} at 00:{dev:02x}.{func} is where Intel puts the CPU's own \
                         PCIe ports",
                        top.address
                    ),
                    uplink: None,
                    uplink_confidence: None,
                })
            } else {
                None
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(addr: &str, vendor: u32, device: u32, class: u32, max: Option<f64>) -> PciDevice {
        PciDevice {
            address: addr.into(),
            vendor_id: Some(vendor),
            device_id: Some(device),
            class: Some(class),
            driver: None,
            port_type: None,
            current_speed_gts: None,
            current_width: None,
            max_speed_gts: max,
            max_width: None,
            max_payload_bytes: None,
        }
    }

    #[test]
    fn intel_pch_and_cpu_ports() {
        let nvme = dev("0000:3d:00.0", 0x144d, 0xa808, 0x010802, Some(8.0));
        let pch = dev("0000:00:1c.4", INTEL, 0xa114, 0x060400, Some(8.0));
        let v = judge(&[nvme.clone(), pch]).unwrap();
        assert!(v.behind_chipset);
        assert_eq!(v.uplink, Some(Link::dmi(DmiGen::Dmi3)));
        let cpu = dev("0000:00:01.0", INTEL, 0x1901, 0x060400, Some(8.0));
        assert!(!judge(&[nvme, cpu]).unwrap().behind_chipset);
        let ahci = dev("0000:00:1f.2", INTEL, 0x3b22, 0x010601, None);
        let v = judge(&[ahci]).unwrap();
        assert!(v.behind_chipset);
        assert_eq!(v.uplink, None); // generation unknown without a PCH root port to look at
    }

    #[test]
    fn amd_chipset_switch() {
        let nvme = dev("0000:05:00.0", 0x144d, 0xa808, 0x010802, None);
        let down = dev("0000:04:04.0", AMD, 0x43c7, 0x060400, None);
        let up = dev("0000:03:00.2", AMD, 0x43c6, 0x060400, None);
        let rp = dev("0000:00:01.3", AMD, 0x1453, 0x060400, None);
        assert!(
            judge(&[nvme.clone(), down, up, rp.clone()])
                .unwrap()
                .behind_chipset
        );
        assert!(!judge(&[nvme, rp]).unwrap().behind_chipset);
    }

    #[test]
    fn virtual_and_unknown() {
        let virtio = dev("0000:00:02.0", VIRTIO, 0x1042, 0x018000, None);
        assert!(judge(&[virtio]).is_none());
        let other = dev("0000:00:02.0", 0x1234, 1, 0x010802, None);
        assert!(judge(&[other]).is_none());
        assert!(judge(&[]).is_none());
    }
}
