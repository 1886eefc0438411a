//! Probes of fabricated sysfs trees: hardware this VM does not have (PCIe links, SATA ports,
//! chipset bridges), built the way the kernel lays them out.

use iolab_link::{DmiGen, Link, PcieGen, SataGen};
use iolab_probe::{probe_device, DeviceKind, SysRoot};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, format!("{content}\n")).unwrap();
}

fn pci(
    root: &Path,
    dir: &str,
    vendor: &str,
    device: &str,
    class: &str,
    link: Option<(&str, u8, &str, u8)>,
) {
    write(root, &format!("{dir}/vendor"), vendor);
    write(root, &format!("{dir}/device"), device);
    write(root, &format!("{dir}/class"), class);
    if let Some((cur, cw, max, mw)) = link {
        write(
            root,
            &format!("{dir}/current_link_speed"),
            &format!("{cur} GT/s PCIe"),
        );
        write(root, &format!("{dir}/current_link_width"), &cw.to_string());
        write(
            root,
            &format!("{dir}/max_link_speed"),
            &format!("{max} GT/s PCIe"),
        );
        write(root, &format!("{dir}/max_link_width"), &mw.to_string());
    }
}

fn sys_root(d: &Path) -> SysRoot {
    SysRoot {
        sys: d.join("sys"),
        mountinfo: d.join("mountinfo"),
        dev: d.join("dev"),
    }
}

/// An NVMe SSD that supports 8 GT/s x4 in a PCH slot that trained at 2.5 GT/s x1.
#[test]
fn nvme_downtrained_behind_pch() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let rp = "sys/devices/pci0000:00/0000:00:1c.4";
    let ep = format!("{rp}/0000:3d:00.0");
    pci(
        r,
        rp,
        "0x8086",
        "0xa114",
        "0x060400",
        Some(("2.5", 1, "8.0", 4)),
    );
    pci(
        r,
        &ep,
        "0x144d",
        "0xa808",
        "0x010802",
        Some(("2.5", 1, "8.0", 4)),
    );
    let ctrl = format!("{ep}/nvme/nvme0");
    write(r, &format!("{ctrl}/model"), "Samsung SSD 970 EVO 1TB");
    write(r, &format!("{ctrl}/firmware_rev"), "2B2QEXE7");
    write(r, &format!("{ctrl}/transport"), "pcie");
    write(r, &format!("{ctrl}/state"), "live");
    let ns = format!("{ctrl}/nvme0n1");
    write(r, &format!("{ns}/dev"), "259:0");
    write(r, &format!("{ns}/size"), "1953525168");
    write(r, &format!("{ns}/nsid"), "1");
    write(r, &format!("{ns}/queue/rotational"), "0");
    write(r, &format!("{ns}/queue/scheduler"), "[none] mq-deadline");
    write(r, &format!("{ns}/queue/discard_max_bytes"), "2199023255040");
    write(r, &format!("{ns}/queue/write_cache"), "write back");
    symlink(r.join(&ctrl), r.join(&ns).join("device")).unwrap();
    fs::create_dir_all(r.join("sys/dev/block")).unwrap();
    symlink(r.join(&ns), r.join("sys/dev/block/259:0")).unwrap();

    let p = probe_device(&sys_root(r), "259:0");
    let d = p.disk.as_ref().unwrap();
    assert_eq!(d.kind, DeviceKind::Nvme);
    assert_eq!(d.model.as_deref(), Some("Samsung SSD 970 EVO 1TB"));
    assert_eq!(d.firmware.as_deref(), Some("2B2QEXE7"));
    assert_eq!(d.capacity_bytes, Some(1953525168 * 512));
    assert_eq!(d.rotational, Some(false));
    assert_eq!(d.scheduler.as_deref(), Some("none"));
    assert_eq!(d.nvme.as_ref().unwrap().transport.as_deref(), Some("pcie"));
    assert_eq!(p.pci_path.len(), 2);
    assert_eq!(p.controller.as_ref().unwrap().address, "0000:3d:00.0");
    let chip = p.chipset.as_ref().unwrap();
    assert!(chip.behind_chipset);
    // PCH root ports that top out at 8 GT/s suggest DMI 3.0.
    assert_eq!(chip.uplink, Some(Link::dmi(DmiGen::Dmi3)));
    let c = p.ceiling.as_ref().unwrap();
    assert_eq!(c.links.len(), 2);
    assert_eq!(c.links[0].link, Link::pcie(PcieGen::Gen1, 1));
    assert_eq!(c.links[0].capable, Some(Link::pcie(PcieGen::Gen3, 4)));
    assert_eq!(c.bottleneck, 0);
    // 250 MB/s after 8b/10b, × 256/276 for TLP framing (MPS assumed: config unreadable).
    let ceiling = p.ceiling_bytes_per_s().unwrap();
    assert!((ceiling - 250e6 * 256.0 / 276.0).abs() < 1.0, "{ceiling}");
    let msgs: Vec<&str> = p.findings.iter().map(|f| f.message.as_str()).collect();
    assert!(
        msgs.iter()
            .any(|m| m.contains("link trained at 2.5 GT/s x1 but the device supports 8 GT/s x4")),
        "{msgs:?}"
    );
    assert!(
        msgs.iter().any(|m| m.contains("behind the chipset uplink")),
        "{msgs:?}"
    );
    let s = p.summary();
    assert!(s.contains("nvme0n1") && s.contains("behind chipset"), "{s}");
    // JSON round trip.
    let j = serde_json::to_string(&p).unwrap();
    let back: iolab_probe::Probe = serde_json::from_str(&j).unwrap();
    assert_eq!(back.ceiling_bytes_per_s(), p.ceiling_bytes_per_s());
}

/// Testbed A: a 6 Gbps SATA drive on a Marvell 88SE9128 card whose x1 link runs at PCIe 1.0,
/// on a CPU root port; the drive negotiated 6 Gb/s.
#[test]
fn sata_behind_marvell_on_pcie1() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let rp = "sys/devices/pci0000:00/0000:00:01.0";
    let hba = format!("{rp}/0000:02:00.0");
    pci(
        r,
        rp,
        "0x8086",
        "0x0101",
        "0x060400",
        Some(("2.5", 1, "5.0", 16)),
    );
    pci(
        r,
        &hba,
        "0x1b4b",
        "0x9123",
        "0x010601",
        Some(("2.5", 1, "5.0", 1)),
    );
    let port = format!("{hba}/ata3");
    write(
        r,
        &format!("{port}/link3/ata_link/link3/sata_spd"),
        "6.0 Gbps",
    );
    write(
        r,
        &format!("{port}/link3/ata_link/link3/hw_sata_spd_limit"),
        "6.0 Gbps",
    );
    let mut words = vec![0u16; 256];
    words[76] = 0b1_0000_1110;
    words[75] = 31;
    words[169] = 1;
    words[69] = (1 << 14) | (1 << 5);
    let id: String = words.iter().map(|w| format!("{w:04x} ")).collect();
    write(r, &format!("{port}/link3/dev3.0/ata_device/dev3.0/id"), &id);
    let disk = format!("{port}/host2/target2:0:0/2:0:0:0/block/sda");
    let sdev = format!("{port}/host2/target2:0:0/2:0:0:0");
    write(r, &format!("{sdev}/model"), "C300-CTFDDAC256MAG");
    write(r, &format!("{sdev}/vendor"), "ATA");
    write(r, &format!("{sdev}/rev"), "0006");
    write(r, &format!("{disk}/dev"), "8:0");
    write(r, &format!("{disk}/size"), "500118192");
    write(r, &format!("{disk}/queue/rotational"), "0");
    symlink(r.join(&sdev), r.join(&disk).join("device")).unwrap();
    let part = format!("{disk}/sda1");
    write(r, &format!("{part}/partition"), "1");
    write(r, &format!("{part}/start"), "2048");
    write(r, &format!("{part}/size"), "1000");
    fs::create_dir_all(r.join("sys/dev/block")).unwrap();
    symlink(r.join(&part), r.join("sys/dev/block/8:1")).unwrap();

    let p = probe_device(&sys_root(r), "8:1");
    assert_eq!(p.partition.as_ref().unwrap().start_sectors, Some(2048));
    let d = p.disk.as_ref().unwrap();
    assert_eq!(d.name, "sda");
    assert_eq!(d.kind, DeviceKind::Sata);
    assert_eq!(d.firmware.as_deref(), Some("0006"));
    let s = p.sata.as_ref().unwrap();
    assert_eq!(s.current_link, Some(Link::sata(SataGen::Gen3)));
    assert_eq!(s.ncq_depth, Some(32));
    assert_eq!(s.trim_supported, Some(true));
    assert_eq!(s.zeroes_after_trim, Some(true));
    let c = p.ceiling.as_ref().unwrap();
    assert_eq!(c.links.len(), 2);
    assert_eq!(c.bottleneck, 1, "the PCIe 1.0 x1 hop, not the SATA link");
    assert!(c.bytes_per_s < 250e6);
    assert!(!p.chipset.as_ref().unwrap().behind_chipset);
    assert!(p.findings.iter().any(|f| f
        .message
        .contains("link trained at 2.5 GT/s x1 but the device supports 5 GT/s x1")));
}

/// Odd and missing attributes never panic: an empty device directory still probes.
#[test]
fn odd_sysfs_content_is_none() {
    let t = tempfile::tempdir().unwrap();
    let r = t.path();
    let disk = "sys/devices/virtual/block/loop9";
    write(r, &format!("{disk}/size"), "not a number");
    write(r, &format!("{disk}/queue/scheduler"), "");
    write(r, &format!("{disk}/queue/rotational"), "2");
    fs::create_dir_all(r.join("sys/dev/block")).unwrap();
    symlink(r.join(disk), r.join("sys/dev/block/7:9")).unwrap();
    let p = probe_device(&sys_root(r), "7:9");
    let d = p.disk.as_ref().unwrap();
    assert_eq!(d.kind, DeviceKind::Loop);
    assert_eq!(d.capacity_bytes, None);
    assert_eq!(d.rotational, None);
    assert!(p.ceiling.is_none());
    let missing = probe_device(&sys_root(r), "1:2");
    assert!(missing.disk.is_none());
    assert!(!missing.summary().is_empty());
}
