//! The probe's result: plain serde data, every fact optional because sysfs differs per kernel
//! and driver. Units are in the field names.

use iolab_host::Mount;
use iolab_link::{Link, Rate};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Version of the JSON shape of [`Probe`]; bump on incompatible changes.
pub const PROBE_SCHEMA_VERSION: u32 = 1;

/// Everything iolab learned about the path from a target to the CPU.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Probe {
    /// [`PROBE_SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The target as given.
    pub target: PathBuf,
    /// What the target is.
    pub target_kind: TargetKind,
    /// The filesystem holding the target (for files and directories), or mounted from it.
    pub filesystem: Option<Mount>,
    /// The partition, when the filesystem or target is one.
    pub partition: Option<Partition>,
    /// The whole block device (disk, or virtual device).
    pub disk: Option<Disk>,
    /// The PCI function driving the disk (NVMe, AHCI, virtio, …).
    pub controller: Option<PciDevice>,
    /// PCI devices from the controller up to the root port or root-complex, controller first.
    pub pci_path: Vec<PciDevice>,
    /// The SATA link, for ATA disks.
    pub sata: Option<SataFacts>,
    /// Whether the path crosses a chipset uplink, and how sure we are.
    pub chipset: Option<ChipsetVerdict>,
    /// The links on the path with their rates, and the narrowest one.
    pub ceiling: Option<Ceiling>,
    /// Things worth knowing: mismatches, virtual devices, missing support.
    pub findings: Vec<Finding>,
}

/// What kind of object the target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetKind {
    /// A regular file (or the nearest existing directory of one not yet created).
    File,
    /// A directory.
    Directory,
    /// A block device node.
    BlockDevice,
}

/// A partition of a disk.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Partition {
    /// Kernel name (`sda2`, `nvme0n1p1`).
    pub name: String,
    /// `MAJ:MIN`.
    pub dev: String,
    /// Partition number.
    pub number: Option<u32>,
    /// First sector, in 512-byte units (sysfs always counts 512-byte sectors).
    pub start_sectors: Option<u64>,
    /// Size in bytes.
    pub size_bytes: Option<u64>,
}

/// What a block device is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceKind {
    /// NVMe namespace.
    Nvme,
    /// ATA disk through libata (SATA/PATA, AHCI or another host adapter).
    Sata,
    /// SCSI/SAS disk.
    Scsi,
    /// USB mass storage (UAS or BOT).
    Usb,
    /// MMC/SD/eMMC.
    Mmc,
    /// virtio-blk or virtio-scsi disk of a virtual machine.
    Virtio,
    /// Xen virtual block device.
    Xen,
    /// Loop device over a file.
    Loop,
    /// Compressed RAM disk.
    Zram,
    /// RAM disk (brd).
    Ram,
    /// Device-mapper (LVM, dm-crypt, dm-linear, …).
    DeviceMapper,
    /// Linux software RAID.
    Md,
    /// Network block device.
    Nbd,
    /// Anything else.
    Unknown,
}

impl DeviceKind {
    /// Whether the device is a software construct (no drive of its own behind it).
    pub fn is_virtual(self) -> bool {
        matches!(
            self,
            DeviceKind::Virtio
                | DeviceKind::Xen
                | DeviceKind::Loop
                | DeviceKind::Zram
                | DeviceKind::Ram
                | DeviceKind::DeviceMapper
                | DeviceKind::Md
                | DeviceKind::Nbd
        )
    }

    /// A short human name.
    pub fn label(self) -> &'static str {
        match self {
            DeviceKind::Nvme => "NVMe",
            DeviceKind::Sata => "SATA/ATA",
            DeviceKind::Scsi => "SCSI/SAS",
            DeviceKind::Usb => "USB",
            DeviceKind::Mmc => "MMC/SD",
            DeviceKind::Virtio => "virtio",
            DeviceKind::Xen => "Xen virtual",
            DeviceKind::Loop => "loop",
            DeviceKind::Zram => "zram",
            DeviceKind::Ram => "RAM disk",
            DeviceKind::DeviceMapper => "device-mapper",
            DeviceKind::Md => "md RAID",
            DeviceKind::Nbd => "network block device",
            DeviceKind::Unknown => "unknown",
        }
    }
}

/// A whole block device.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Disk {
    /// Kernel name (`sda`, `nvme0n1`, `loop3`).
    pub name: String,
    /// `MAJ:MIN`.
    pub dev: String,
    /// What it is.
    pub kind: DeviceKind,
    /// Model string.
    pub model: Option<String>,
    /// Vendor string (SCSI vendor, or the PCI vendor id for virtio).
    pub vendor: Option<String>,
    /// Firmware revision.
    pub firmware: Option<String>,
    /// Capacity in bytes.
    pub capacity_bytes: Option<u64>,
    /// Logical sector size in bytes (the addressing unit).
    pub logical_block_bytes: Option<u32>,
    /// Physical sector size in bytes (the smallest write without read-modify-write).
    pub physical_block_bytes: Option<u32>,
    /// Whether the kernel believes it rotates.
    pub rotational: Option<bool>,
    /// Removable media.
    pub removable: Option<bool>,
    /// Read-only.
    pub read_only: Option<bool>,
    /// Active I/O scheduler (`none`, `mq-deadline`, …); `None` for bio-based devices.
    pub scheduler: Option<String>,
    /// Schedulers on offer.
    pub schedulers: Vec<String>,
    /// Queue limits.
    pub queue: QueueLimits,
    /// Discard (TRIM/UNMAP/Deallocate) support.
    pub discard: Discard,
    /// Volatile write cache: `Some(true)` = "write back", `Some(false)` = "write through".
    pub volatile_write_cache: Option<bool>,
    /// Whether the device honours FUA (force unit access) writes.
    pub fua: Option<bool>,
    /// Zoned model (`none`, `host-managed`, `host-aware`).
    pub zoned: Option<String>,
    /// NVMe specifics.
    pub nvme: Option<NvmeFacts>,
    /// Facts of a virtual device (loop backing file, dm name, zram algorithm, …).
    pub virt: Option<VirtualFacts>,
}

/// Block-queue limits from `queue/`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct QueueLimits {
    /// Requests the block layer keeps per hardware queue (`nr_requests`).
    pub nr_requests: Option<u32>,
    /// Hardware queues (entries of `mq/`).
    pub hw_queues: Option<u32>,
    /// Largest request the kernel will build, KiB.
    pub max_sectors_kb: Option<u32>,
    /// Largest request the hardware accepts, KiB.
    pub max_hw_sectors_kb: Option<u32>,
    /// Scatter-gather segments per request.
    pub max_segments: Option<u32>,
    /// Preferred minimum I/O size, bytes.
    pub minimum_io_bytes: Option<u32>,
    /// Optimal I/O size, bytes (0 = not reported).
    pub optimal_io_bytes: Option<u32>,
    /// Read-ahead, KiB.
    pub read_ahead_kb: Option<u32>,
}

/// Discard support as the block layer sees it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Discard {
    /// Whether discards are accepted (`discard_max_bytes` > 0).
    pub supported: Option<bool>,
    /// Discard granularity, bytes.
    pub granularity_bytes: Option<u64>,
    /// Largest discard the kernel sends, bytes.
    pub max_bytes: Option<u64>,
    /// Largest discard the hardware accepts, bytes.
    pub max_hw_bytes: Option<u64>,
}

/// NVMe controller facts from `/sys/class/nvme/nvmeN`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct NvmeFacts {
    /// Controller name (`nvme0`).
    pub controller: String,
    /// Transport (`pcie`, `tcp`, `rdma`, `fc`, `loop`).
    pub transport: Option<String>,
    /// Controller state (`live`, …).
    pub state: Option<String>,
    /// I/O queues plus the admin queue, as created by the driver.
    pub queue_count: Option<u32>,
    /// Submission queue size (entries).
    pub sqsize: Option<u32>,
    /// Namespace id.
    pub nsid: Option<u32>,
}

/// The SATA link of an ATA disk.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SataFacts {
    /// libata port (`ata3`).
    pub port: String,
    /// Current link speed as the kernel prints it (`6.0 Gbps`, `<unknown>`).
    pub current: Option<String>,
    /// Negotiated link, when the speed is known.
    pub current_link: Option<Link>,
    /// The host port's hardware limit (`hw_sata_spd_limit`).
    pub host_limit: Option<String>,
    /// Generations the drive supports (IDENTIFY word 76), fastest last.
    pub device_supports: Vec<Link>,
    /// TRIM supported (IDENTIFY word 169 bit 0).
    pub trim_supported: Option<bool>,
    /// Deterministic read after TRIM (word 69 bit 14).
    pub deterministic_read_after_trim: Option<bool>,
    /// Read zeroes after TRIM (word 69 bit 5).
    pub zeroes_after_trim: Option<bool>,
    /// NCQ queue depth (word 75 + 1), when NCQ is supported (word 76 bit 8).
    pub ncq_depth: Option<u32>,
}

/// Facts of a software block device.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct VirtualFacts {
    /// Loop: the backing file.
    pub backing_file: Option<String>,
    /// Loop: offset into the backing file, bytes.
    pub offset_bytes: Option<u64>,
    /// Loop: whether it uses direct I/O on the backing file.
    pub direct_io: Option<bool>,
    /// Device-mapper: name; md: level.
    pub name: Option<String>,
    /// Device-mapper: uuid (its prefix names the target stack: `CRYPT-`, `LVM-`).
    pub uuid: Option<String>,
    /// zram: active compression algorithm.
    pub compression: Option<String>,
    /// Devices underneath (`slaves/`).
    pub lower_devices: Vec<String>,
}

/// One PCI function on the path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PciDevice {
    /// Address `DDDD:BB:DD.F`.
    pub address: String,
    /// Vendor id.
    pub vendor_id: Option<u32>,
    /// Device id.
    pub device_id: Option<u32>,
    /// Class code (24 bits).
    pub class: Option<u32>,
    /// Bound driver.
    pub driver: Option<String>,
    /// PCIe port type from the capability register, when config space was readable.
    pub port_type: Option<PortType>,
    /// Trained link speed, GT/s.
    pub current_speed_gts: Option<f64>,
    /// Trained width.
    pub current_width: Option<u8>,
    /// This function's own maximum speed, GT/s.
    pub max_speed_gts: Option<f64>,
    /// This function's own maximum width.
    pub max_width: Option<u8>,
    /// Max payload size in effect (Device Control), bytes.
    pub max_payload_bytes: Option<u32>,
}

/// PCIe device/port type (PCIe capability, bits 7:4 of the capabilities register).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortType {
    /// Endpoint (or legacy endpoint).
    Endpoint,
    /// Root port of a root complex.
    RootPort,
    /// Upstream port of a switch.
    SwitchUpstream,
    /// Downstream port of a switch.
    SwitchDownstream,
    /// PCIe-to-PCI/PCI-X bridge.
    PcieToPci,
    /// PCI-to-PCIe bridge.
    PciToPcie,
    /// Root-complex integrated endpoint (no link).
    RcIntegrated,
    /// Root-complex event collector.
    RcEventCollector,
}

/// How sure a heuristic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// A guess; treat as a hint.
    Low,
    /// Known layouts match; exceptions exist.
    Medium,
    /// Read from the hardware.
    High,
}

impl Confidence {
    /// `low`, `medium` or `high`.
    pub fn label(self) -> &'static str {
        match self {
            Confidence::Low => "low",
            Confidence::Medium => "medium",
            Confidence::High => "high",
        }
    }
}

/// Whether the path crosses the chipset's uplink to the CPU.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChipsetVerdict {
    /// `true`: behind the chipset; `false`: on CPU lanes.
    pub behind_chipset: bool,
    /// How sure.
    pub confidence: Confidence,
    /// Why we think so.
    pub reason: String,
    /// The uplink, when it is not itself a visible PCIe hop (Intel DMI).
    pub uplink: Option<Link>,
    /// How sure we are of the uplink's generation.
    pub uplink_confidence: Option<Confidence>,
}

/// One link on the path with its rates.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PathLink {
    /// Where the link is (`SATA link ata3`, `PCIe 0000:3d:00.0 ↔ 0000:00:1c.4`, `DMI`).
    pub label: String,
    /// The link as trained.
    pub link: Link,
    /// What both ends could train at, when known and different.
    pub capable: Option<Link>,
    /// Payload per packet used for the effective rate (MPS or FIS size), bytes.
    pub payload_bytes: u32,
    /// Whether `payload_bytes` is an assumption rather than read from the hardware.
    pub payload_assumed: bool,
    /// Raw signalling rate.
    pub line_rate: Rate,
    /// After the line code.
    pub after_encoding: Rate,
    /// After protocol framing.
    pub effective: Rate,
}

/// The narrowest link of the path.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ceiling {
    /// Every link, drive first.
    pub links: Vec<PathLink>,
    /// Index into `links` of the bottleneck.
    pub bottleneck: usize,
    /// Effective rate of the bottleneck, bytes/s (one direction).
    pub bytes_per_s: f64,
    /// Whether links may be missing (e.g. an uplink we could not see), so the true ceiling may
    /// be lower.
    pub partial: bool,
}

/// How much a finding matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Context.
    Info,
    /// Costs performance or hides the truth.
    Warn,
}

/// Something the probe noticed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Finding {
    /// How much it matters.
    pub severity: Severity,
    /// Stable machine-readable code (`pcie_downtrained`, `behind_chipset`, `virtual_device`, …).
    pub code: String,
    /// The sentence for humans.
    pub message: String,
}

impl Finding {
    pub(crate) fn new(severity: Severity, code: &str, message: impl Into<String>) -> Self {
        Finding {
            severity,
            code: code.to_string(),
            message: message.into(),
        }
    }
}
