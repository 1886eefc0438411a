//! The PCI devices between a block device and the root complex, and the PCIe links among them.

use crate::model::{PciDevice, PortType};
use crate::sysfs::{hex, link_name, num, read};
use std::fs;
use std::path::{Path, PathBuf};

/// `DDDD:BB:DD.F`.
pub(crate) fn is_pci_address(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12
        && b[4] == b':'
        && b[7] == b':'
        && b[10] == b'.'
        && b.iter()
            .enumerate()
            .all(|(i, c)| matches!(i, 4 | 7 | 10) || c.is_ascii_hexdigit())
}

/// Bus and device numbers of an address.
pub(crate) fn bus_dev_fn(addr: &str) -> Option<(u8, u8, u8)> {
    let bus = u8::from_str_radix(addr.get(5..7)?, 16).ok()?;
    let dev = u8::from_str_radix(addr.get(8..10)?, 16).ok()?;
    let func = u8::from_str_radix(addr.get(11..12)?, 16).ok()?;
    Some((bus, dev, func))
}

/// PCI directories along a canonical sysfs path, innermost (controller) first.
pub(crate) fn chain_dirs(device_path: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut cur = PathBuf::new();
    for c in device_path.components() {
        cur.push(c);
        if is_pci_address(&c.as_os_str().to_string_lossy()) {
            dirs.push(cur.clone());
        }
    }
    dirs.reverse();
    dirs
}

/// `8.0 GT/s PCIe` → 8.0; `Unknown` → None.
pub(crate) fn parse_speed(s: &str) -> Option<f64> {
    s.split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|v: &f64| *v > 0.0)
}

/// Port type and max payload size from config space. Unprivileged reads return only the first
/// 64 bytes, which stops the capability walk: both then stay `None`.
pub(crate) fn from_config(cfg: &[u8]) -> (Option<PortType>, Option<u32>) {
    let u16_at = |o: usize| cfg.get(o..o + 2).map(|b| u16::from_le_bytes([b[0], b[1]]));
    let has_caps = u16_at(0x06).is_some_and(|s| s & 0x10 != 0);
    if !has_caps {
        return (None, None);
    }
    let mut ptr = cfg.get(0x34).map_or(0, |p| usize::from(*p & 0xfc));
    // The list is at most 48 entries in 256 bytes; the bound also stops malformed loops.
    for _ in 0..48 {
        if ptr < 0x40 {
            break;
        }
        let (Some(&id), Some(&next)) = (cfg.get(ptr), cfg.get(ptr + 1)) else {
            break;
        };
        if id == 0x10 {
            let port = u16_at(ptr + 2).and_then(|caps| match (caps >> 4) & 0xf {
                0 | 1 => Some(PortType::Endpoint),
                4 => Some(PortType::RootPort),
                5 => Some(PortType::SwitchUpstream),
                6 => Some(PortType::SwitchDownstream),
                7 => Some(PortType::PcieToPci),
                8 => Some(PortType::PciToPcie),
                9 => Some(PortType::RcIntegrated),
                10 => Some(PortType::RcEventCollector),
                _ => None,
            });
            let mps = u16_at(ptr + 8).map(|ctl| 128u32 << ((ctl >> 5) & 0x7).min(5));
            return (port, mps);
        }
        ptr = usize::from(next & 0xfc);
    }
    (None, None)
}

/// Facts of one PCI function.
pub(crate) fn describe(dir: &Path) -> PciDevice {
    let cfg = fs::read(dir.join("config")).unwrap_or_default();
    let (port_type, max_payload_bytes) = from_config(&cfg);
    PciDevice {
        address: crate::block::file_name(dir),
        vendor_id: hex(dir.join("vendor")),
        device_id: hex(dir.join("device")),
        class: hex(dir.join("class")),
        driver: link_name(dir.join("driver")),
        port_type,
        current_speed_gts: read(dir.join("current_link_speed")).and_then(|s| parse_speed(&s)),
        current_width: num(dir.join("current_link_width")).filter(|w| *w > 0),
        max_speed_gts: read(dir.join("max_link_speed")).and_then(|s| parse_speed(&s)),
        max_width: num(dir.join("max_link_width")).filter(|w| *w > 0),
        max_payload_bytes,
    }
}

/// Indices of devices whose own link status describes the link to the next device in the
/// chain (its parent). Uses port types when known: endpoints, switch upstream ports and
/// PCIe-to-PCI bridges face upstream. Without them (unprivileged), assumes the usual layout
/// endpoint, (downstream, upstream)*, root port, where every other device faces upstream.
pub(crate) fn upstream_facing(chain: &[PciDevice]) -> Vec<usize> {
    let n = chain.len();
    (0..n.saturating_sub(1))
        .filter(|&i| chain[i].current_speed_gts.is_some() && chain[i].current_width.is_some())
        .filter(|&i| match chain[i].port_type {
            Some(t) => matches!(
                t,
                PortType::Endpoint | PortType::SwitchUpstream | PortType::PcieToPci
            ),
            None => i % 2 == 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert!(is_pci_address("0000:3d:00.0"));
        assert!(!is_pci_address("pci0000:00"));
        assert!(!is_pci_address("virtio1"));
        assert_eq!(bus_dev_fn("0000:00:1c.4"), Some((0, 0x1c, 4)));
        let c = chain_dirs(Path::new(
            "/sys/devices/pci0000:00/0000:00:1c.4/0000:3d:00.0/nvme/nvme0",
        ));
        assert_eq!(c.len(), 2);
        assert!(c[0].ends_with("0000:3d:00.0"));
    }

    #[test]
    fn speeds() {
        assert_eq!(parse_speed("8.0 GT/s PCIe"), Some(8.0));
        assert_eq!(parse_speed("2.5 GT/s"), Some(2.5));
        assert_eq!(parse_speed("Unknown"), None);
        assert_eq!(parse_speed(""), None);
    }

    #[test]
    fn config_space_walk() {
        let mut cfg = vec![0u8; 256];
        cfg[0x06] = 0x10; // capabilities list present
        cfg[0x34] = 0x40;
        cfg[0x40] = 0x01; // power management
        cfg[0x41] = 0x70;
        cfg[0x70] = 0x10; // PCIe
        cfg[0x71] = 0x00;
        cfg[0x72] = 0x42; // version 2, port type 4 = root port
        cfg[0x78] = 0x20; // MPS field = 1 → 256 B
        assert_eq!(from_config(&cfg), (Some(PortType::RootPort), Some(256)));
        // Unprivileged 64-byte read: nothing, no panic.
        assert_eq!(from_config(&cfg[..64]), (None, None));
        // A looping list ends.
        cfg[0x71] = 0x40;
        cfg[0x70] = 0x05;
        assert_eq!(from_config(&cfg), (None, None));
    }
}
