//! What the probe should tell a reader: mismatches, chipset uplinks, virtual devices.

use crate::ceiling::pcie_links;
use crate::model::{Confidence, DeviceKind, Finding, Probe, Severity};
use iolab_link::Link;

fn speed_width(l: &Link) -> String {
    match l.pcie_equivalent() {
        Some((g, lanes)) => format!("{} GT/s x{lanes}", g.gt_per_s()),
        None => l.to_string(),
    }
}

/// All findings for a probe whose facts are filled in.
pub(crate) fn collect(p: &Probe) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(d) = &p.disk {
        virtual_device(p, d.kind, &mut out);
        if d.discard.supported == Some(false) {
            out.push(Finding::new(
                Severity::Info,
                "no_discard",
                format!(
                    "{} does not accept discards (queue/discard_max_bytes = 0): TRIM cannot reach it",
                    d.name
                ),
            ));
        }
    } else if let Some(m) = &p.filesystem {
        out.push(Finding::new(
            Severity::Info,
            "no_block_device",
            format!(
                "{} on {} has no block device of its own (source '{}'): there is no drive path to \
                 show",
                m.fs_type,
                m.mount_point.display(),
                m.source
            ),
        ));
    }
    for (i, current, capable) in pcie_links(&p.pci_path) {
        let (Some(cur), Some(cap)) = (current, capable) else {
            continue;
        };
        let d = &p.pci_path[i];
        let dev_max = crate::ceiling::pcie_link(d.max_speed_gts, d.max_width);
        if let Some(dev_max) = dev_max.filter(|m| cur.is_slower_than(m)) {
            let why = if cap.is_slower_than(&dev_max) {
                format!("the port above it supports only {}", speed_width(&cap))
            } else {
                "both ends support more: check seating, risers, the firmware's link-speed setting \
                 or power management"
                    .to_string()
            };
            out.push(Finding::new(
                Severity::Warn,
                "pcie_downtrained",
                format!(
                    "{}: link trained at {} but the device supports {} ({why})",
                    d.address,
                    speed_width(&cur),
                    speed_width(&dev_max)
                ),
            ));
        }
    }
    if let Some(s) = &p.sata {
        if let (Some(cur), Some(best)) = (s.current_link, s.device_supports.last()) {
            if cur.is_slower_than(best) {
                out.push(Finding::new(
                    Severity::Warn,
                    "sata_downtrained",
                    format!(
                        "SATA link at {} but the drive supports {} (host port limit: {})",
                        cur,
                        best,
                        s.host_limit.as_deref().unwrap_or("unknown")
                    ),
                ));
            }
        }
    }
    if let Some(v) = p.chipset.as_ref().filter(|v| v.behind_chipset) {
        let uplink = v
            .uplink
            .map(|l| format!(" ({l}, generation guessed)"))
            .unwrap_or_default();
        out.push(Finding::new(
            if v.confidence >= Confidence::Medium {
                Severity::Warn
            } else {
                Severity::Info
            },
            "behind_chipset",
            format!(
                "behind the chipset uplink{uplink}: its bandwidth is shared with every other \
                 chipset device [{} confidence: {}]",
                v.confidence.label(),
                v.reason
            ),
        ));
    }
    if p.ceiling.as_ref().is_some_and(|c| c.partial) {
        out.push(Finding::new(
            Severity::Info,
            "ceiling_partial",
            "a link on the path could not be identified; the real ceiling may be lower",
        ));
    }
    out
}

fn virtual_device(p: &Probe, kind: DeviceKind, out: &mut Vec<Finding>) {
    let Some(d) = &p.disk else { return };
    let v = d.virt.clone().unwrap_or_default();
    let msg = match kind {
        DeviceKind::Virtio => format!(
            "{} is a virtio disk: the hypervisor hides the real drive and its links, so no \
             ceiling can be computed",
            d.name
        ),
        DeviceKind::Xen => format!("{} is a Xen virtual disk: the real drive is hidden", d.name),
        DeviceKind::Loop => format!(
            "{} is a loop device over '{}': it runs at the speed of that file's filesystem and disk",
            d.name,
            v.backing_file.as_deref().unwrap_or("?")
        ),
        DeviceKind::Zram => format!(
            "{} is a compressed RAM disk ({}): no drive, its speed is CPU and memory",
            d.name,
            v.compression.as_deref().unwrap_or("algorithm unknown")
        ),
        DeviceKind::Ram => format!("{} is a RAM disk: no drive behind it", d.name),
        DeviceKind::DeviceMapper => format!(
            "{} is device-mapper '{}' over [{}]: probe those devices for their paths",
            d.name,
            v.name.as_deref().unwrap_or("?"),
            v.lower_devices.join(", ")
        ),
        DeviceKind::Md => format!(
            "{} is md RAID ({}) over [{}]: probe those devices for their paths",
            d.name,
            v.name.as_deref().unwrap_or("level unknown"),
            v.lower_devices.join(", ")
        ),
        DeviceKind::Nbd => format!("{} is a network block device", d.name),
        _ => return,
    };
    out.push(Finding::new(Severity::Info, "virtual_device", msg));
}
