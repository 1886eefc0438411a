//! Block-device facts from `/sys/dev/block/MAJ:MIN` and `/sys/block/X/{queue,device,…}`.

use crate::model::{DeviceKind, Discard, Disk, NvmeFacts, Partition, QueueLimits, VirtualFacts};
use crate::sysfs::{self, entries, flag, num, read, SysRoot};
use std::path::{Path, PathBuf};

/// A block device located in sysfs: its canonical directory and, for a partition, the disk's.
pub(crate) struct Located {
    /// Canonical sysfs directory of the whole disk.
    pub disk_dir: PathBuf,
    /// The partition, if `MAJ:MIN` named one.
    pub partition: Option<Partition>,
}

/// Finds `MAJ:MIN` in sysfs; `None` when the kernel has no such block device.
pub(crate) fn locate(root: &SysRoot, dev: &str) -> Option<Located> {
    let dir = root.sys.join("dev/block").join(dev).canonicalize().ok()?;
    if dir.join("partition").exists() {
        let partition = Partition {
            name: file_name(&dir),
            dev: dev.to_string(),
            number: num(dir.join("partition")),
            start_sectors: num(dir.join("start")),
            size_bytes: num::<u64>(dir.join("size")).map(|s| s * 512),
        };
        Some(Located {
            disk_dir: dir.parent()?.to_path_buf(),
            partition: Some(partition),
        })
    } else {
        Some(Located {
            disk_dir: dir,
            partition: None,
        })
    }
}

pub(crate) fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What the device is, judged by where the kernel put it in the device tree and its name.
pub(crate) fn kind_of(disk_dir: &Path) -> DeviceKind {
    let path = disk_dir.to_string_lossy();
    let name = file_name(disk_dir);
    let has_component = |pred: &dyn Fn(&str) -> bool| {
        disk_dir
            .components()
            .any(|c| pred(&c.as_os_str().to_string_lossy()))
    };
    if path.contains("/devices/virtual/") {
        let prefixed = |p: &str| {
            name.strip_prefix(p)
                .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()) && !rest.is_empty())
        };
        return if prefixed("loop") {
            DeviceKind::Loop
        } else if prefixed("zram") {
            DeviceKind::Zram
        } else if prefixed("dm-") {
            DeviceKind::DeviceMapper
        } else if prefixed("md") || name.starts_with("md_") {
            DeviceKind::Md
        } else if prefixed("nbd") {
            DeviceKind::Nbd
        } else if prefixed("ram") {
            DeviceKind::Ram
        } else if path.contains("nvme-subsystem") {
            DeviceKind::Nvme
        } else {
            DeviceKind::Unknown
        };
    }
    if has_component(&|c| c == "nvme" || c.starts_with("nvme-subsys")) {
        DeviceKind::Nvme
    } else if has_component(&|c| c.starts_with("virtio")) {
        DeviceKind::Virtio
    } else if has_component(&|c| c.starts_with("usb")) {
        DeviceKind::Usb
    } else if has_component(&|c| {
        c.strip_prefix("ata")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|d| d.is_ascii_digit()))
    }) {
        DeviceKind::Sata
    } else if has_component(&|c| c == "mmc_host") {
        DeviceKind::Mmc
    } else if has_component(&|c| c == "xen" || c.starts_with("vbd-")) || name.starts_with("xvd") {
        DeviceKind::Xen
    } else if name.starts_with("sd") || has_component(&|c| c.starts_with("host")) {
        DeviceKind::Scsi
    } else {
        DeviceKind::Unknown
    }
}

/// The NVMe controller directory of a namespace: `device` for a plain namespace, or the first
/// controller of the subsystem for a multipath head node (`/sys/devices/virtual/nvme-subsystem`).
pub(crate) fn nvme_controller_dir(disk_dir: &Path) -> Option<PathBuf> {
    if let Ok(d) = disk_dir.join("device").canonicalize() {
        if d.join("transport").exists() {
            return Some(d);
        }
    }
    let subsys = disk_dir.parent()?;
    entries(subsys)
        .into_iter()
        .filter(|n| n.starts_with("nvme") && !n.starts_with("nvme-subsys"))
        .filter_map(|n| subsys.join(n).canonicalize().ok())
        .find(|d| d.join("transport").exists())
}

fn nvme_facts(disk_dir: &Path) -> Option<(NvmeFacts, PathBuf)> {
    let ctrl = nvme_controller_dir(disk_dir)?;
    let facts = NvmeFacts {
        controller: file_name(&ctrl),
        transport: read(ctrl.join("transport")),
        state: read(ctrl.join("state")),
        queue_count: num(ctrl.join("queue_count")),
        sqsize: num(ctrl.join("sqsize")),
        nsid: num(disk_dir.join("nsid")),
    };
    Some((facts, ctrl))
}

fn virtual_facts(disk_dir: &Path, kind: DeviceKind) -> Option<VirtualFacts> {
    let lower_devices = entries(disk_dir.join("slaves"));
    let v = match kind {
        DeviceKind::Loop => VirtualFacts {
            backing_file: read(disk_dir.join("loop/backing_file")),
            offset_bytes: num(disk_dir.join("loop/offset")),
            direct_io: flag(disk_dir.join("loop/dio")),
            ..Default::default()
        },
        DeviceKind::Zram => VirtualFacts {
            compression: sysfs::selector(disk_dir.join("comp_algorithm")).and_then(|(a, _)| a),
            ..Default::default()
        },
        DeviceKind::DeviceMapper => VirtualFacts {
            name: read(disk_dir.join("dm/name")),
            uuid: read(disk_dir.join("dm/uuid")),
            lower_devices,
            ..Default::default()
        },
        DeviceKind::Md => VirtualFacts {
            name: read(disk_dir.join("md/level")),
            lower_devices,
            ..Default::default()
        },
        _ if !lower_devices.is_empty() => VirtualFacts {
            lower_devices,
            ..Default::default()
        },
        _ => return None,
    };
    Some(v)
}

fn queue_limits(q: &Path, disk_dir: &Path) -> QueueLimits {
    let mq = entries(disk_dir.join("mq"));
    QueueLimits {
        nr_requests: num(q.join("nr_requests")),
        hw_queues: (!mq.is_empty()).then_some(mq.len() as u32),
        max_sectors_kb: num(q.join("max_sectors_kb")),
        max_hw_sectors_kb: num(q.join("max_hw_sectors_kb")),
        max_segments: num(q.join("max_segments")),
        minimum_io_bytes: num(q.join("minimum_io_size")),
        optimal_io_bytes: num(q.join("optimal_io_size")),
        read_ahead_kb: num(q.join("read_ahead_kb")),
    }
}

fn discard(q: &Path) -> Discard {
    let max_bytes: Option<u64> = num(q.join("discard_max_bytes"));
    Discard {
        supported: max_bytes.map(|m| m > 0),
        granularity_bytes: num(q.join("discard_granularity")),
        max_bytes,
        max_hw_bytes: num(q.join("discard_max_hw_bytes")),
    }
}

/// Facts of the whole disk at `disk_dir`. Also returns the directory whose canonical path leads
/// to the controller (the NVMe controller for NVMe, else the disk itself).
pub(crate) fn describe(disk_dir: &Path) -> (Disk, PathBuf) {
    let kind = kind_of(disk_dir);
    let q = disk_dir.join("queue");
    let dev_dir = disk_dir.join("device");
    let (nvme, hw_dir) = match (kind == DeviceKind::Nvme)
        .then(|| nvme_facts(disk_dir))
        .flatten()
    {
        Some((f, ctrl)) => (Some(f), ctrl),
        None => (None, disk_dir.to_path_buf()),
    };
    // NVMe keeps model/firmware on the controller; SCSI/ATA on the scsi_device.
    let info_dir = if nvme.is_some() {
        hw_dir.clone()
    } else {
        dev_dir
    };
    let (scheduler, schedulers) = sysfs::selector(q.join("scheduler")).unwrap_or_default();
    let write_cache = read(q.join("write_cache")).map(|s| s == "write back");
    let disk = Disk {
        name: file_name(disk_dir),
        dev: read(disk_dir.join("dev")).unwrap_or_default(),
        kind,
        model: read(info_dir.join("model")),
        vendor: read(info_dir.join("vendor")),
        firmware: read(info_dir.join("firmware_rev")).or_else(|| read(info_dir.join("rev"))),
        capacity_bytes: num::<u64>(disk_dir.join("size")).map(|s| s * 512),
        logical_block_bytes: num(q.join("logical_block_size")),
        physical_block_bytes: num(q.join("physical_block_size")),
        rotational: flag(q.join("rotational")),
        removable: flag(disk_dir.join("removable")),
        read_only: flag(disk_dir.join("ro")),
        scheduler,
        schedulers,
        queue: queue_limits(&q, disk_dir),
        discard: discard(&q),
        volatile_write_cache: write_cache,
        fua: flag(q.join("fua")),
        zoned: read(q.join("zoned")),
        nvme,
        virt: virtual_facts(disk_dir, kind),
    };
    (disk, hw_dir)
}
