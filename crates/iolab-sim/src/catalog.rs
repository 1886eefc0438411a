//! The catalog: drives and platforms as TOML data, every table citing its public source.
//!
//! Built-in entries live in `catalog/drives/*.toml` and `catalog/platforms/*.toml` at the top of
//! the workspace and are embedded at compile time; a user directory with the same layout adds or
//! overrides entries without touching code. Parsing is strict (`deny_unknown_fields`) and every
//! cross-field rule is checked after parsing, so an inconsistent entry is refused with the file
//! and the key at fault — never run with a silently wrong parameter (MQSim's lenient XML parser
//! is the cautionary tale: a misspelt key there silently keeps its default).

use crate::SimError;
use iolab_link::{DmiGen, Link, PcieGen, SataGen};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// Built-in drive files, embedded so the binary needs no data directory.
const BUILTIN_DRIVES: &[(&str, &str)] = &[
    (
        "c300-256.toml",
        include_str!("../../../catalog/drives/c300-256.toml"),
    ),
    (
        "vertex-le-100.toml",
        include_str!("../../../catalog/drives/vertex-le-100.toml"),
    ),
    (
        "force3-120.toml",
        include_str!("../../../catalog/drives/force3-120.toml"),
    ),
    (
        "force3-240.toml",
        include_str!("../../../catalog/drives/force3-240.toml"),
    ),
    (
        "forcegt-120.toml",
        include_str!("../../../catalog/drives/forcegt-120.toml"),
    ),
    (
        "forcegt-240.toml",
        include_str!("../../../catalog/drives/forcegt-240.toml"),
    ),
    (
        "ssd750-400.toml",
        include_str!("../../../catalog/drives/ssd750-400.toml"),
    ),
    (
        "ssd750-1200.toml",
        include_str!("../../../catalog/drives/ssd750-1200.toml"),
    ),
    (
        "sm951-512.toml",
        include_str!("../../../catalog/drives/sm951-512.toml"),
    ),
    (
        "nvme2018-500.toml",
        include_str!("../../../catalog/drives/nvme2018-500.toml"),
    ),
    (
        "sf1200-6ch.toml",
        include_str!("../../../catalog/drives/sf1200-6ch.toml"),
    ),
    (
        "sf1200-4ch.toml",
        include_str!("../../../catalog/drives/sf1200-4ch.toml"),
    ),
    (
        "sf1200-25.toml",
        include_str!("../../../catalog/drives/sf1200-25.toml"),
    ),
    (
        "sf1200-40.toml",
        include_str!("../../../catalog/drives/sf1200-40.toml"),
    ),
    (
        "sf1200-60.toml",
        include_str!("../../../catalog/drives/sf1200-60.toml"),
    ),
    (
        "sf1200-120.toml",
        include_str!("../../../catalog/drives/sf1200-120.toml"),
    ),
    (
        "revodrive-50.toml",
        include_str!("../../../catalog/drives/revodrive-50.toml"),
    ),
    (
        "revodrive-80.toml",
        include_str!("../../../catalog/drives/revodrive-80.toml"),
    ),
    (
        "revodrive-120.toml",
        include_str!("../../../catalog/drives/revodrive-120.toml"),
    ),
    (
        "revodrive-240.toml",
        include_str!("../../../catalog/drives/revodrive-240.toml"),
    ),
    (
        "revodrive-120-jbod.toml",
        include_str!("../../../catalog/drives/revodrive-120-jbod.toml"),
    ),
    (
        "revodrive-x2-100.toml",
        include_str!("../../../catalog/drives/revodrive-x2-100.toml"),
    ),
    (
        "ibis-100.toml",
        include_str!("../../../catalog/drives/ibis-100.toml"),
    ),
    (
        "ibis-160.toml",
        include_str!("../../../catalog/drives/ibis-160.toml"),
    ),
    (
        "ibis-240.toml",
        include_str!("../../../catalog/drives/ibis-240.toml"),
    ),
    (
        "hdd-7200.toml",
        include_str!("../../../catalog/drives/hdd-7200.toml"),
    ),
    (
        "storemi.toml",
        include_str!("../../../catalog/drives/storemi.toml"),
    ),
    (
        "storemi-ram.toml",
        include_str!("../../../catalog/drives/storemi-ram.toml"),
    ),
    (
        "rst-cache.toml",
        include_str!("../../../catalog/drives/rst-cache.toml"),
    ),
];

/// Built-in platform files.
const BUILTIN_PLATFORMS: &[(&str, &str)] = &[
    (
        "x58.toml",
        include_str!("../../../catalog/platforms/x58.toml"),
    ),
    (
        "p55.toml",
        include_str!("../../../catalog/platforms/p55.toml"),
    ),
    (
        "h55.toml",
        include_str!("../../../catalog/platforms/h55.toml"),
    ),
    (
        "890gx.toml",
        include_str!("../../../catalog/platforms/890gx.toml"),
    ),
    (
        "h67.toml",
        include_str!("../../../catalog/platforms/h67.toml"),
    ),
    (
        "z97.toml",
        include_str!("../../../catalog/platforms/z97.toml"),
    ),
    (
        "z270.toml",
        include_str!("../../../catalog/platforms/z270.toml"),
    ),
    (
        "x470.toml",
        include_str!("../../../catalog/platforms/x470.toml"),
    ),
];

/// What a drive entry models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DriveKind {
    /// A flash SSD.
    Ssd,
    /// A hard disk.
    Hdd,
    /// A card (or box) of member SSDs behind a RAID chip.
    Card,
    /// A tiered volume or a cache over a fast and a slow drive.
    Tiered,
}

impl DriveKind {
    /// The name an entry's `kind` gives it (`ssd`, `hdd`, `card`, `tiered`).
    pub fn name(self) -> &'static str {
        match self {
            DriveKind::Ssd => "ssd",
            DriveKind::Hdd => "hdd",
            DriveKind::Card => "card",
            DriveKind::Tiered => "tiered",
        }
    }
}

/// The drive's host interface.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InterfaceSpec {
    /// Fastest link the drive supports (`sata6`, `pcie3x4`, ...).
    pub link: String,
    /// Command protocol; names the driver on the platform (`ahci`, `nvme`, `sil3124`).
    pub protocol: String,
    /// Max payload per TLP on PCIe (default 256).
    #[serde(default)]
    pub max_payload_bytes: Option<u32>,
    /// Where these values come from.
    pub source: String,
}

/// Capacity of an SSD.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacitySpec {
    /// Bytes the host sees.
    pub usable_bytes: u64,
    /// Where it comes from.
    pub source: String,
}

/// The SSD controller's front end.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerSpec {
    /// Controller part, for descriptions.
    #[serde(default)]
    pub part: String,
    /// Processing time per command on one firmware core (serialised per core).
    pub command_ns: u64,
    /// Firmware cores processing commands in parallel (default 1).
    #[serde(default)]
    pub cores: Option<u32>,
    /// Processing time per write command (default `command_ns`).
    #[serde(default)]
    pub write_command_ns: Option<u64>,
    /// The core that takes a write also receives its data: it opens the data phase only when
    /// free and is busy until the data is in, then runs the command (default false: a DMA
    /// engine takes the data while the cores work on other commands).
    #[serde(default)]
    pub write_data_in_line: bool,
    /// Fixed, unserialised latency per command (FTL lookup, ECC decode pipeline).
    #[serde(default)]
    pub latency_ns: u64,
    /// Internal read datapath ceiling (bytes/s), if narrower than the NAND side.
    #[serde(default)]
    pub read_bytes_per_s: Option<f64>,
    /// Internal write datapath ceiling (bytes/s), e.g. the compression engine or DRAM path.
    #[serde(default)]
    pub write_bytes_per_s: Option<f64>,
    /// Commands the drive accepts at once (AHCI NCQ: 32).
    #[serde(default)]
    pub queue_depth: Option<u32>,
    /// Where these values come from.
    pub source: String,
}

/// The DRAM (or SRAM) write buffer.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BufferSpec {
    /// Bytes of write data held before NAND programs must finish.
    pub bytes: u64,
    /// Power-loss protection (writes are safe once buffered).
    #[serde(default)]
    pub plp: bool,
    /// Where these values come from.
    pub source: String,
}

/// The NAND array.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandSpec {
    /// Part or process, for descriptions.
    #[serde(default)]
    pub part: String,
    /// Populated channels.
    pub channels: u32,
    /// Dies in total (spread evenly over the channels).
    pub dies: u32,
    /// Planes per die (multi-plane operations).
    pub planes: u32,
    /// Page size in bytes.
    pub page_bytes: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Blocks per plane.
    pub blocks_per_plane: u32,
    /// Page read time tR.
    pub read_ns: u64,
    /// Page program time tPROG.
    pub program_ns: u64,
    /// Block erase time tBERS.
    pub erase_ns: u64,
    /// Bits per cell: 1 (every page the same speed, the default) or 2 (MLC: each wordline
    /// holds a fast lower page and a slow upper page; `read_ns` and `program_ns` are then the
    /// datasheet's typical times, the mean over both).
    #[serde(default)]
    pub bits_per_cell: Option<u32>,
    /// Channel bus rate in mega-transfers per second.
    pub bus_mt_per_s: f64,
    /// Bytes per transfer (bus width, default 1).
    #[serde(default)]
    pub bus_bytes: Option<u32>,
    /// `sync` (ONFI NV-DDR, Toggle) or `async` (SDR) bus, for descriptions.
    #[serde(default)]
    pub bus: String,
    /// Where these values come from.
    pub source: String,
}

/// An SLC write cache (Samsung's TurboWrite, Intel's and Micron's "SLC cache"): part of a
/// multi-bit array programmed one bit per cell, fast, until it is full; the drive folds it into
/// the array at its normal program speed when idle.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlcCacheSpec {
    /// Host bytes the cache always holds.
    pub static_bytes: u64,
    /// Host bytes more while the drive has free space: each takes the cells of three (TLC),
    /// so it shrinks as the drive fills (default 0).
    #[serde(default)]
    pub dynamic_bytes: u64,
    /// Program time of a page in SLC mode.
    pub program_ns: u64,
    /// Where these values come from.
    pub source: String,
}

/// Flash translation layer policy.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlSpec {
    /// Free blocks per die below which greedy GC runs (default 2).
    #[serde(default)]
    pub gc_free_blocks: Option<u32>,
    /// Inline compression: `none` or `sandforce` (bytes reaching NAND follow the data's
    /// measured compressibility).
    #[serde(default)]
    pub compression: Option<String>,
    /// Smallest stored fraction of a block's size with compression (headers, metadata).
    #[serde(default)]
    pub min_stored_fraction: Option<f64>,
    /// Whether the drive honours TRIM (default true).
    #[serde(default)]
    pub trim: Option<bool>,
    /// Where these values come from.
    pub source: String,
}

/// Power draw per component.
#[derive(Clone, Debug, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PowerSpec {
    /// Idle power of the whole drive.
    pub idle_w: f64,
    /// Added power while the drive holds at least one host command: its host interface, DRAM
    /// and controller out of their idle states, however little work each command is.
    #[serde(default)]
    pub active_w: f64,
    /// Added power per busy controller core.
    #[serde(default)]
    pub controller_w: f64,
    /// Added power per die while reading.
    #[serde(default)]
    pub die_read_w: f64,
    /// Added power per die while programming.
    #[serde(default)]
    pub die_program_w: f64,
    /// Added power per die while erasing.
    #[serde(default)]
    pub die_erase_w: f64,
    /// Added power per busy channel.
    #[serde(default)]
    pub channel_w: f64,
    /// Added power of an HDD while seeking.
    #[serde(default)]
    pub seek_w: f64,
    /// The most an SSD may draw, sustained (its NVMe power state's Maximum Power): NAND work
    /// waits when it would draw more. Absent: no limit.
    #[serde(default)]
    pub max_w: Option<f64>,
    /// Where these values come from.
    pub source: String,
}

/// A hard disk.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HddSpec {
    /// Capacity.
    pub capacity_bytes: u64,
    /// Spindle speed.
    pub rpm: f64,
    /// Track-to-track seek.
    pub seek_track_ns: u64,
    /// Full-stroke seek.
    pub seek_full_ns: u64,
    /// Media rate at the outer edge.
    pub outer_bytes_per_s: f64,
    /// Media rate at the inner edge.
    pub inner_bytes_per_s: f64,
    /// Command overhead of the drive electronics.
    pub command_ns: u64,
    /// Commands queued (NCQ, default 32).
    #[serde(default)]
    pub queue_depth: Option<u32>,
    /// Bytes of written data the drive acknowledges from its buffer before they are on the
    /// platters (write cache enabled, as drives ship); 0 or left out: written through.
    #[serde(default)]
    pub write_cache_bytes: u64,
    /// Where these values come from.
    pub source: String,
}

/// A card of member SSDs behind a RAID chip.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardSpec {
    /// Drive entry of each member.
    pub member: String,
    /// Members on the card.
    pub count: u32,
    /// Members actually used (JBOD of one, default all).
    #[serde(default)]
    pub used: Option<u32>,
    /// `raid0` or `jbod`.
    pub raid: String,
    /// RAID-0 stripe size.
    #[serde(default)]
    pub stripe_bytes: Option<u64>,
    /// Link between the RAID chip and each member.
    pub member_link: String,
    /// The RAID chip, for descriptions.
    #[serde(default)]
    pub chip: String,
    /// Chip processing time per member command (serialised).
    pub chip_command_ns: u64,
    /// Chip and bridge latency per command (not serialised).
    pub chip_latency_ns: u64,
    /// Commands the card's RAID layer keeps in flight over all its members (default: as many
    /// as the driver sends).
    #[serde(default)]
    pub queue_depth: Option<u32>,
    /// Links from the chip to the card edge (e.g. PCI-X bus, HSDL cable); the card edge itself
    /// is `interface.link`.
    #[serde(default)]
    pub path: Vec<String>,
    /// Where these values come from.
    pub source: String,
}

/// A tiered volume or cache.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TieredSpec {
    /// Fast member (SSD).
    pub fast: String,
    /// Slow member (HDD).
    pub slow: String,
    /// `tier` (capacity is the sum, hot extents move) or `cache` (a copy of hot data).
    pub mode: String,
    /// Bytes of the fast member used (the cache limit, e.g. 60 GB for RST).
    pub fast_bytes: u64,
    /// Extent (tier) or cache-line size.
    pub extent_bytes: u64,
    /// Accesses to an extent before it is promoted.
    pub promote_after: u32,
    /// Optional RAM layer in front (StoreMI: up to 2 GB), in 4 KiB lines; 0 for none.
    #[serde(default)]
    pub ram_bytes: u64,
    /// Copy rate of the RAM layer (bytes/s): what a hit costs. Needed with `ram_bytes`.
    #[serde(default)]
    pub ram_bytes_per_s: f64,
    /// Where these values come from.
    pub source: String,
}

/// A link defined by rate rather than by standard (PCI-X bus, HSDL cable).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// A standard link (`dmi2`, `pcie1x4`); or use `bytes_per_s`.
    #[serde(default)]
    pub link: Option<String>,
    /// Payload rate for a custom pipe.
    #[serde(default)]
    pub bytes_per_s: Option<f64>,
    /// One pipe for both directions (PCI-X, SATA).
    #[serde(default)]
    pub half_duplex: bool,
    /// Max payload per TLP for PCIe-like links.
    #[serde(default)]
    pub max_payload_bytes: Option<u32>,
    /// Latency of crossing the hop.
    #[serde(default)]
    pub latency_ns: u64,
    /// Where these values come from.
    pub source: String,
}

/// A drive entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriveSpec {
    /// Catalog name (`ssd750-1200`).
    pub name: String,
    /// Human title.
    pub title: String,
    /// What it is.
    pub kind: DriveKind,
    /// Overall source.
    pub source: String,
    /// Host interface.
    pub interface: InterfaceSpec,
    /// SSD capacity.
    #[serde(default)]
    pub capacity: Option<CapacitySpec>,
    /// SSD controller.
    #[serde(default)]
    pub controller: Option<ControllerSpec>,
    /// Write buffer.
    #[serde(default)]
    pub buffer: Option<BufferSpec>,
    /// NAND array.
    #[serde(default)]
    pub nand: Option<NandSpec>,
    /// FTL.
    #[serde(default)]
    pub ftl: Option<FtlSpec>,
    /// SLC write cache of a multi-bit array.
    #[serde(default)]
    pub slc_cache: Option<SlcCacheSpec>,
    /// Power.
    #[serde(default)]
    pub power: Option<PowerSpec>,
    /// HDD mechanics.
    #[serde(default)]
    pub hdd: Option<HddSpec>,
    /// Card layout.
    #[serde(default)]
    pub card: Option<CardSpec>,
    /// Tiering.
    #[serde(default)]
    pub tiered: Option<TieredSpec>,
    /// Custom links used by `card.path`.
    #[serde(default)]
    pub links: BTreeMap<String, LinkSpec>,
}

/// Software latency of a driver stack.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriverSpec {
    /// Added latency per I/O (submission plus completion path).
    pub latency_ns: u64,
    /// Host-side queue limit per device (AHCI: 32).
    #[serde(default)]
    pub queue_depth: Option<u32>,
    /// The protocol of the drives it drives (`raidxpert` drives `nvme` drives); default: the
    /// driver's own name. A port's `driver` applies only to drives of this protocol; any other
    /// drive is refused on that port.
    #[serde(default)]
    pub protocol: Option<String>,
    /// Where it comes from.
    pub source: String,
}

impl DriverSpec {
    /// The protocol of the drives the driver `name` (this one) drives.
    pub fn drives_protocol<'a>(&'a self, name: &'a str) -> &'a str {
        self.protocol.as_deref().unwrap_or(name)
    }
}

/// A host bus adapter (AHCI controller, SATA bridge).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HbaSpec {
    /// Part, for descriptions.
    #[serde(default)]
    pub part: String,
    /// Serialised processing per command.
    pub command_ns: u64,
    /// Unserialised latency per command (DMA descriptor fetches, store and forward).
    pub latency_ns: u64,
    /// Where it comes from.
    pub source: String,
}

/// A RAID volume over other ports of the platform.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RaidSpec {
    /// `raid0` or `jbod`.
    pub level: String,
    /// Ports of the members.
    pub members: Vec<String>,
    /// Stripe size for RAID-0.
    #[serde(default)]
    pub stripe_bytes: Option<u64>,
}

/// A place to attach a drive.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    /// Human title.
    pub title: String,
    /// Link the port offers (negotiated down with the drive's).
    #[serde(default)]
    pub slot: Option<String>,
    /// HBA between the slot and the path.
    #[serde(default)]
    pub hba: Option<String>,
    /// Links from the port to the CPU: standard link specs or names of shared links.
    #[serde(default)]
    pub path: Vec<String>,
    /// Fixed latency of this port (root complex, chipset hop).
    #[serde(default)]
    pub latency_ns: u64,
    /// Driver override (`raidxpert`), for drives of its `protocol` only; default: the drive's
    /// protocol.
    #[serde(default)]
    pub driver: Option<String>,
    /// A RAID volume over other ports.
    #[serde(default)]
    pub raid: Option<RaidSpec>,
    /// The port used when a spec names none.
    #[serde(default)]
    pub default: bool,
    /// Where it comes from.
    pub source: String,
}

/// A platform entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformSpec {
    /// Catalog name (`z97`).
    pub name: String,
    /// Human title.
    pub title: String,
    /// Overall source.
    pub source: String,
    /// Software stacks by name.
    #[serde(default)]
    pub drivers: BTreeMap<String, DriverSpec>,
    /// Shared links by name (DMI).
    #[serde(default)]
    pub links: BTreeMap<String, LinkSpec>,
    /// HBAs by name.
    #[serde(default)]
    pub hbas: BTreeMap<String, HbaSpec>,
    /// Ports by name.
    pub ports: BTreeMap<String, PortSpec>,
}

/// Every drive and platform known, with the file each came from.
#[derive(Clone, Debug, Default)]
pub struct Catalog {
    /// Drives by name, with their file.
    pub drives: BTreeMap<String, (String, DriveSpec)>,
    /// Platforms by name, with their file.
    pub platforms: BTreeMap<String, (String, PlatformSpec)>,
    /// Built-in drives a user file's replacement of a drive they use made inconsistent, by
    /// name, with why (a [`SimError::Catalog`]'s file, key and message): refused when used.
    /// Failing the whole load would break every command for an override the README offers,
    /// over entries the user may never use.
    pub unusable: BTreeMap<String, (String, String, String)>,
    /// Names of the built-in drives.
    builtin: std::collections::BTreeSet<String>,
    /// Built-in drive names a user file replaced, with that file.
    overridden: BTreeMap<String, String>,
    /// The names under which the built-in files were added (`catalog/drives/c300-256.toml`):
    /// embedded in the binary, not files on disk.
    builtin_files: std::collections::BTreeSet<String>,
    /// The files read from a user's catalog directory (one of which may share a built-in's
    /// name, under `--catalog catalog`).
    user_files: std::collections::BTreeSet<String>,
    /// The built-in entries by kind ("drive", "platform") and name, with their file and text.
    builtin_texts: BTreeMap<(&'static str, String), (String, &'static str)>,
    /// Built-in entries a user's file replaced with different contents (see
    /// [`Catalog::replaced_builtins`]).
    replaced: Vec<ReplacedBuiltin>,
}

/// A built-in entry that an entry of the same name in a user's catalog directory replaces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplacedBuiltin {
    /// "drive" or "platform".
    pub kind: &'static str,
    /// The entry's name.
    pub name: String,
    /// The user's file.
    pub user_file: String,
    /// The built-in's file (`catalog/drives/…`, as in iolab's source tree).
    pub builtin_file: String,
}

impl std::fmt::Display for ReplacedBuiltin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} replaces the built-in {} '{}' ({} in iolab's source): its entry is used \
             wherever '{}' is named; remove the file, or give its entry another name, to use \
             the built-in",
            self.user_file, self.kind, self.name, self.builtin_file, self.name
        )
    }
}

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

fn bad(file: &str, key: impl Into<String>, message: impl Into<String>) -> SimError {
    SimError::Catalog {
        file: file.to_string(),
        key: key.into(),
        message: message.into(),
    }
}

/// The longest any one operation of a modelled part may take. A time above it is a unit
/// mistake (seconds or microseconds written as nanoseconds), and adding such times would
/// overflow the model's u64 nanosecond clock.
const MAX_OPERATION_NS: f64 = 1e12;

/// Every number of an entry, by its key as written: finite and not negative; times (`*_ns`)
/// at most [`MAX_OPERATION_NS`]; data rates (`*_bytes_per_s`) at least 1 kB/s and bus rates
/// (`*_mt_per_s`) at least 1 MT/s, since the model turns a rate into nanoseconds per byte and
/// a zero or vanishing one would give infinite times that wrap around; queue depths at least 1.
/// Checked on the TOML itself because NaN and infinities are valid TOML floats.
fn check_numbers(file: &str, table: &toml::Table, prefix: &str) -> Result<(), SimError> {
    for (k, v) in table {
        let key = format!("{prefix}{k}");
        check_value(file, &key, k, v)?;
    }
    Ok(())
}

fn check_value(file: &str, key: &str, name: &str, v: &toml::Value) -> Result<(), SimError> {
    let x = match v {
        toml::Value::Table(t) => return check_numbers(file, t, &format!("{key}.")),
        toml::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_value(file, &format!("{key}[{i}]"), name, item)?;
            }
            return Ok(());
        }
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        _ => return Ok(()),
    };
    let rule = if !x.is_finite() || x < 0.0 {
        Some("must be a finite number, not negative")
    } else if name.ends_with("_ns") && x > MAX_OPERATION_NS {
        Some("is over 1000 s for one operation: times are in nanoseconds")
    } else if name.ends_with("_bytes_per_s") && x < 1e3 {
        Some("must be at least 1 kB/s: rates are in bytes per second (leave an optional rate out for no limit)")
    } else if name.ends_with("_mt_per_s") && x < 1.0 {
        Some("must be at least 1 MT/s: bus rates are in megatransfers per second")
    } else if name == "queue_depth" && x < 1.0 {
        Some("must be at least 1 (or left out where it is optional)")
    } else {
        None
    };
    match rule {
        // Very small or large values in exponent form, as a user would write them.
        Some(r) if x != 0.0 && (x.abs() < 1e-3 || x.abs() >= 1e16) => {
            Err(bad(file, key, format!("{x:e} {r}")))
        }
        Some(r) => Err(bad(file, key, format!("{x} {r}"))),
        None => Ok(()),
    }
}

/// An entry's TOML as a table, for [`check_numbers`] (called once the typed parse has
/// succeeded, so an error here is not expected).
fn raw_table(file: &str, text: &str) -> Result<toml::Table, SimError> {
    text.parse::<toml::Table>().map_err(|e| SimError::Parse {
        file: file.to_string(),
        message: e.to_string(),
    })
}

/// `key` names the table ("" for the entry's top level, whose key is plain `source`).
fn need_source(file: &str, key: &str, s: &str) -> Result<(), SimError> {
    if s.trim().is_empty() {
        return Err(bad(
            file,
            if key.is_empty() {
                "source".to_string()
            } else {
                format!("{key}.source")
            },
            "every table must cite its public source",
        ));
    }
    Ok(())
}

fn check_link(
    file: &str,
    key: &str,
    name: &str,
    local: &BTreeMap<String, LinkSpec>,
) -> Result<(), SimError> {
    if parse_std_link(name).is_some() || local.contains_key(name) {
        Ok(())
    } else {
        Err(bad(
            file,
            key,
            format!(
                "unknown link '{name}': use sata1.5/sata3/sata6, pcie<gen>x<lanes>, dmi1–dmi4, \
                 or define [links.{name}]"
            ),
        ))
    }
}

fn check_link_spec(file: &str, key: &str, l: &LinkSpec) -> Result<(), SimError> {
    need_source(file, key, &l.source)?;
    match (&l.link, l.bytes_per_s) {
        (Some(s), None) => {
            let Some(std) = parse_std_link(s) else {
                return Err(bad(
                    file,
                    format!("{key}.link"),
                    format!(
                        "unknown link '{s}': use sata1.5/sata3/sata6, pcie<gen>x<lanes> (gen 1–5, \
                         x1/x2/x4/x8/x16), dmi1–dmi4, or give bytes_per_s instead for a pipe of \
                         your own"
                    ),
                ));
            };
            // A standard link's directions are its standard's: SATA is one pipe, PCIe and DMI
            // carry both ways at once.
            if l.half_duplex {
                return Err(bad(
                    file,
                    format!("{key}.half_duplex"),
                    format!(
                        "a standard link's duplex is its standard's ({s} is {}): remove it, or \
                         give bytes_per_s for a custom pipe",
                        if matches!(std, Link::Sata { .. }) {
                            "half-duplex already"
                        } else {
                            "full-duplex"
                        }
                    ),
                ));
            }
            check_payload_is_read(file, &format!("{key}.max_payload_bytes"), Some(std), l)?;
        }
        (None, Some(r)) if r > 0.0 && r.is_finite() => {
            check_payload_is_read(file, &format!("{key}.max_payload_bytes"), None, l)?;
        }
        _ => {
            return Err(bad(
                file,
                key,
                "give either link (a standard link) or a positive bytes_per_s",
            ))
        }
    }
    check_max_payload(
        file,
        &format!("{key}.max_payload_bytes"),
        l.max_payload_bytes,
    )
}

/// A payload size counts the TLPs of a PCIe-like link; a SATA link (FISes) or a custom pipe
/// (`bytes_per_s`, `std` = `None`) has none, and the size would be silently ignored.
fn check_payload_is_read(
    file: &str,
    key: &str,
    std: Option<Link>,
    l: &LinkSpec,
) -> Result<(), SimError> {
    match (l.max_payload_bytes, std) {
        (Some(_), None | Some(Link::Sata { .. })) => Err(bad(
            file,
            key,
            "only a PCIe or DMI link has a max payload size (its TLPs): remove it",
        )),
        _ => Ok(()),
    }
}

/// A PCIe max payload size is a power of two from 128 to 4096 bytes (the model counts a
/// transfer's packets with it, and would divide by zero on 0).
fn check_max_payload(file: &str, key: &str, mps: Option<u32>) -> Result<(), SimError> {
    match mps {
        Some(mps) if !mps.is_power_of_two() || !(128..=4096).contains(&mps) => Err(bad(
            file,
            key,
            format!("{mps} is not a PCIe max payload size (128, 256, … 4096)"),
        )),
        _ => Ok(()),
    }
}

impl DriveSpec {
    /// `interface.max_payload_bytes` sizes the TLPs of a PCIe interface; a SATA one has none,
    /// and a tiered drive's members attach with their own interfaces.
    fn check_interface_payload_is_read(&self, file: &str) -> Result<(), SimError> {
        let key = "interface.max_payload_bytes";
        if self.interface.max_payload_bytes.is_none() {
            return Ok(());
        }
        if self.kind == DriveKind::Tiered {
            return Err(bad(
                file,
                key,
                "a tiered drive's members attach with their own interfaces: give it in the \
                 fast or slow drive's entry",
            ));
        }
        if matches!(
            parse_std_link(&self.interface.link),
            Some(Link::Sata { .. })
        ) {
            return Err(bad(
                file,
                key,
                "only a PCIe interface has a max payload size (its TLPs): remove it",
            ));
        }
        Ok(())
    }

    /// Checks every cross-field rule; `file` names the entry in errors.
    pub fn validate(&self, file: &str) -> Result<(), SimError> {
        need_source(file, "", &self.source)?;
        need_source(file, "interface", &self.interface.source)?;
        for (n, l) in &self.links {
            check_link_spec(file, &format!("links.{n}"), l)?;
        }
        // The interface is what a port negotiates with (SATA generations, PCIe generations and
        // lanes), so it is a standard link; [links] are the hops of a card's own path, which no
        // port negotiates with.
        if parse_std_link(&self.interface.link).is_none() {
            let name = &self.interface.link;
            return Err(bad(
                file,
                "interface.link",
                if self.links.contains_key(name) {
                    format!(
                        "'{name}' names one of this entry's [links], which serve card.path only: \
                         a drive's interface is a standard link a port negotiates with (sata1.5, \
                         sata3, sata6 or pcie<gen>x<lanes>)"
                    )
                } else {
                    format!(
                        "unknown link '{name}': a drive's interface is a standard link a port \
                         negotiates with (sata1.5, sata3, sata6 or pcie<gen>x<lanes>)"
                    )
                },
            ));
        }
        check_max_payload(
            file,
            "interface.max_payload_bytes",
            self.interface.max_payload_bytes,
        )?;
        self.check_interface_payload_is_read(file)?;
        // The model reads each table for some kinds only: one of another kind (a table left
        // from a copied entry, or a mistyped kind) would be silently ignored.
        let tables = [
            ("capacity", self.capacity.is_some(), "an SSD's"),
            ("controller", self.controller.is_some(), "an SSD's"),
            ("buffer", self.buffer.is_some(), "an SSD's"),
            ("nand", self.nand.is_some(), "an SSD's"),
            ("ftl", self.ftl.is_some(), "an SSD's"),
            ("slc_cache", self.slc_cache.is_some(), "an SSD's"),
            ("power", self.power.is_some(), "an SSD's or a hard disk's"),
            ("hdd", self.hdd.is_some(), "a hard disk's"),
            ("card", self.card.is_some(), "a card's"),
            ("links", !self.links.is_empty(), "a card's (for card.path)"),
            ("tiered", self.tiered.is_some(), "a tiered drive's"),
        ];
        let takes: &[&str] = match self.kind {
            DriveKind::Ssd => &[
                "capacity",
                "controller",
                "buffer",
                "nand",
                "ftl",
                "slc_cache",
                "power",
            ],
            DriveKind::Hdd => &["hdd", "power"],
            DriveKind::Card => &["card", "links"],
            DriveKind::Tiered => &["tiered"],
        };
        if let Some((t, _, whose)) = tables
            .iter()
            .find(|(t, present, _)| *present && !takes.contains(t))
        {
            return Err(bad(
                file,
                *t,
                format!(
                    "a drive of kind \"{}\" has no [{t}] table ([{t}] is {whose}): remove it, \
                     or correct kind",
                    self.kind.name()
                ),
            ));
        }
        let missing = |k: &str| {
            bad(
                file,
                k,
                format!(
                    "a drive of kind \"{}\" needs a [{k}] table",
                    self.kind.name()
                ),
            )
        };
        match self.kind {
            DriveKind::Ssd => {
                let cap = self.capacity.as_ref().ok_or_else(|| missing("capacity"))?;
                let ctl = self
                    .controller
                    .as_ref()
                    .ok_or_else(|| missing("controller"))?;
                let nand = self.nand.as_ref().ok_or_else(|| missing("nand"))?;
                let ftl = self.ftl.as_ref().ok_or_else(|| missing("ftl"))?;
                let buf = self.buffer.as_ref().ok_or_else(|| missing("buffer"))?;
                need_source(file, "capacity", &cap.source)?;
                need_source(file, "controller", &ctl.source)?;
                need_source(file, "nand", &nand.source)?;
                need_source(file, "ftl", &ftl.source)?;
                need_source(file, "buffer", &buf.source)?;
                let positive = [
                    ("nand.channels", nand.channels as u64),
                    ("nand.dies", nand.dies as u64),
                    ("nand.planes", nand.planes as u64),
                    ("nand.page_bytes", nand.page_bytes as u64),
                    ("nand.pages_per_block", nand.pages_per_block as u64),
                    ("nand.blocks_per_plane", nand.blocks_per_plane as u64),
                    ("nand.read_ns", nand.read_ns),
                    ("nand.program_ns", nand.program_ns),
                ];
                for (k, v) in positive {
                    if v == 0 {
                        return Err(bad(file, k, "must be positive"));
                    }
                }
                if cap.usable_bytes < MIN_DRIVE_BYTES {
                    return Err(bad(
                        file,
                        "capacity.usable_bytes",
                        format!("must be at least {MIN_DRIVE_BYTES} (1 MiB)"),
                    ));
                }
                if cap.usable_bytes > MAX_SSD_BYTES {
                    return Err(bad(
                        file,
                        "capacity.usable_bytes",
                        format!(
                            "at most {MAX_SSD_BYTES} (16 TB): the model maps every 4 KiB page, \
                             4 bytes each, in memory"
                        ),
                    ));
                }
                // 0 cores would process nothing; it was taken as 1 without a word.
                if ctl.cores.is_some_and(|c| c == 0 || c > MAX_CORES) {
                    return Err(bad(
                        file,
                        "controller.cores",
                        format!("must be 1 to {MAX_CORES} (or left out: 1)"),
                    ));
                }
                if nand.bus_bytes.is_some_and(|b| !(1..=8).contains(&b)) {
                    return Err(bad(
                        file,
                        "nand.bus_bytes",
                        "must be 1 to 8: the NAND bus's width in bytes (1 for ONFI and Toggle)",
                    ));
                }
                // Bounds far outside any NAND, so the arithmetic on the geometry and the
                // energy of booked work stay meaningful.
                let at_most = [
                    ("nand.planes", nand.planes as u64, 16),
                    ("nand.pages_per_block", nand.pages_per_block as u64, 1 << 14),
                    ("nand.page_bytes", nand.page_bytes as u64, 1 << 16),
                    (
                        "nand.blocks_per_plane",
                        nand.blocks_per_plane as u64,
                        1 << 20,
                    ),
                    ("nand.dies", nand.dies as u64, 1 << 12),
                    ("nand.read_ns", nand.read_ns, 10_000_000),
                    ("nand.program_ns", nand.program_ns, 100_000_000),
                    ("nand.erase_ns", nand.erase_ns, 1_000_000_000),
                ];
                for (k, v, max) in at_most {
                    if v > max {
                        return Err(bad(
                            file,
                            k,
                            format!("{v} is more than any NAND has: at most {max}"),
                        ));
                    }
                }
                if ftl
                    .min_stored_fraction
                    .is_some_and(|f| !(f > 0.0 && f <= 1.0))
                {
                    return Err(bad(
                        file,
                        "ftl.min_stored_fraction",
                        "must be above 0 and at most 1: the least share of its bytes that \
                         compressed data keeps on NAND",
                    ));
                }
                if nand.dies % nand.channels != 0 {
                    return Err(bad(
                        file,
                        "nand.dies",
                        format!(
                            "{} dies cannot be spread evenly over {} channels",
                            nand.dies, nand.channels
                        ),
                    ));
                }
                if !matches!(nand.bits_per_cell, None | Some(1) | Some(2)) {
                    return Err(bad(
                        file,
                        "nand.bits_per_cell",
                        "the model knows 1 (uniform pages) or 2 (MLC lower and upper pages); \
                         for TLC or QLC leave it out and the typical times apply to every page",
                    ));
                }
                if nand.page_bytes % 4096 != 0 {
                    return Err(bad(file, "nand.page_bytes", "must be a multiple of 4096"));
                }
                if nand.bus_mt_per_s.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                    return Err(bad(file, "nand.bus_mt_per_s", "must be positive"));
                }
                let raw = [
                    nand.planes as u64,
                    nand.pages_per_block as u64,
                    nand.page_bytes as u64,
                    nand.blocks_per_plane as u64,
                    nand.dies as u64,
                ]
                .iter()
                .try_fold(1u64, |acc, &x| acc.checked_mul(x))
                .filter(|&raw| raw <= u64::MAX / 2)
                .ok_or_else(|| {
                    bad(
                        file,
                        "nand",
                        "dies × planes × blocks × pages × page size is more bytes than the \
                         model can count",
                    )
                })?;
                if cap.usable_bytes > raw {
                    return Err(bad(
                        file,
                        "capacity.usable_bytes",
                        format!(
                            "{} usable bytes is above the raw NAND capacity of {raw} bytes \
                             (dies × planes × blocks × pages × page size)",
                            cap.usable_bytes
                        ),
                    ));
                }
                // The FTL collects when a die's free space drops below this many blocks: at 0
                // it never does, and the drive writes on without reclaiming anything.
                if ftl.gc_free_blocks == Some(0) {
                    return Err(bad(
                        file,
                        "ftl.gc_free_blocks",
                        "must be at least 1: garbage collection runs when a die has fewer free \
                         blocks than this, so at 0 the drive would never collect (or leave it \
                         out: 2)",
                    ));
                }
                let gc = ftl.gc_free_blocks.unwrap_or(2) as u64;
                let spare_blocks = (raw - cap.usable_bytes) / block_bytes(nand);
                if spare_blocks < (gc + 2) * nand.dies as u64 {
                    return Err(bad(
                        file,
                        "capacity.usable_bytes",
                        format!(
                            "only {spare_blocks} spare blocks for {} dies: the FTL needs at least \
                             {} per die (GC threshold + open blocks)",
                            nand.dies,
                            gc + 2
                        ),
                    ));
                }
                match ftl.compression.as_deref() {
                    None | Some("none") | Some("sandforce") => {}
                    Some(o) => {
                        return Err(bad(
                            file,
                            "ftl.compression",
                            format!("unknown compression '{o}': use none or sandforce"),
                        ))
                    }
                }
                if let Some(c) = &self.slc_cache {
                    need_source(file, "slc_cache", &c.source)?;
                    if c.program_ns == 0 || c.program_ns >= nand.program_ns {
                        return Err(bad(
                            file,
                            "slc_cache.program_ns",
                            format!(
                                "an SLC program must be positive and faster than the array's \
                                 nand.program_ns ({} ns)",
                                nand.program_ns
                            ),
                        ));
                    }
                    let bytes = c.static_bytes.saturating_add(c.dynamic_bytes);
                    if bytes == 0 || bytes > cap.usable_bytes {
                        return Err(bad(
                            file,
                            "slc_cache.static_bytes",
                            format!(
                                "the cache ({bytes} bytes with dynamic_bytes) must hold something \
                                 and no more than the drive's {} usable bytes",
                                cap.usable_bytes
                            ),
                        ));
                    }
                }
                if let Some(p) = &self.power {
                    need_source(file, "power", &p.source)?;
                    let busy_w = p.idle_w
                        + p.active_w
                        + p.controller_w * ctl.cores.unwrap_or(1).max(1) as f64;
                    if p.max_w.is_some_and(|m| !(m.is_finite() && m > busy_w)) {
                        return Err(bad(
                            file,
                            "power.max_w",
                            format!(
                                "must be above idle_w, active_w and controller_w for every \
                                 core ({busy_w} W): the limit has to leave the NAND some power"
                            ),
                        ));
                    }
                }
            }
            DriveKind::Hdd => {
                let h = self.hdd.as_ref().ok_or_else(|| missing("hdd"))?;
                need_source(file, "hdd", &h.source)?;
                // A command waits up to a revolution (60e9 / rpm ns) for its sector: at
                // 0.001 rpm that is 17 hours, and the disk does no I/O at all.
                if !(MIN_RPM..=MAX_RPM).contains(&h.rpm) {
                    return Err(bad(
                        file,
                        "hdd.rpm",
                        format!(
                            "{} is no disk's spindle speed: use {MIN_RPM} to {MAX_RPM} (disks spin \
                             3600 to 15000 rpm; the model waits up to a revolution, 60e9 / rpm ns, \
                             per command)",
                            h.rpm
                        ),
                    ));
                }
                if h.outer_bytes_per_s <= 0.0 || h.inner_bytes_per_s <= 0.0 {
                    return Err(bad(file, "hdd", "media rates must be positive"));
                }
                if h.capacity_bytes < MIN_DRIVE_BYTES {
                    return Err(bad(
                        file,
                        "hdd.capacity_bytes",
                        format!("must be at least {MIN_DRIVE_BYTES} (1 MiB)"),
                    ));
                }
                if h.seek_full_ns < h.seek_track_ns {
                    return Err(bad(
                        file,
                        "hdd.seek_full_ns",
                        format!(
                            "a full-stroke seek cannot be shorter than a track-to-track one \
                             (seek_track_ns = {})",
                            h.seek_track_ns
                        ),
                    ));
                }
                if h.write_cache_bytes > h.capacity_bytes {
                    return Err(bad(
                        file,
                        "hdd.write_cache_bytes",
                        format!(
                            "{} is more than the disk holds ({} bytes): a write cache is a \
                             buffer of a few MiB to a few hundred (0 writes through)",
                            h.write_cache_bytes, h.capacity_bytes
                        ),
                    ));
                }
                if h.inner_bytes_per_s > h.outer_bytes_per_s {
                    return Err(bad(
                        file,
                        "hdd.inner_bytes_per_s",
                        "must not exceed outer_bytes_per_s: the outer zones hold more sectors \
                         per track, so the media rate falls towards the spindle",
                    ));
                }
            }
            DriveKind::Card => {
                let c = self.card.as_ref().ok_or_else(|| missing("card"))?;
                need_source(file, "card", &c.source)?;
                if parse_std_link(&c.member_link).is_none() {
                    return Err(bad(
                        file,
                        "card.member_link",
                        format!(
                            "'{}' must be a standard link (sata1.5, sata3, sata6 or \
                             pcie<gen>x<lanes>): the members' own ports on the card's chip, not \
                             one of the card's [links]",
                            c.member_link
                        ),
                    ));
                }
                if c.count > MAX_CARD_MEMBERS {
                    return Err(bad(
                        file,
                        "card.count",
                        format!("at most {MAX_CARD_MEMBERS} members: each is a whole drive model"),
                    ));
                }
                for (i, p) in c.path.iter().enumerate() {
                    check_link(file, &format!("card.path[{i}]"), p, &self.links)?;
                }
                if c.count == 0 {
                    return Err(bad(file, "card.count", "must be at least 1"));
                }
                if c.used.unwrap_or(c.count) == 0 || c.used.unwrap_or(c.count) > c.count {
                    return Err(bad(file, "card.used", "must be between 1 and card.count"));
                }
                if c.queue_depth == Some(0) {
                    return Err(bad(
                        file,
                        "card.queue_depth",
                        "must be at least 1 (or left out: as many as the driver sends)",
                    ));
                }
                match c.raid.as_str() {
                    "raid0" => {
                        if c.stripe_bytes.is_none_or(|s| s == 0 || s % 512 != 0) {
                            return Err(bad(
                                file,
                                "card.stripe_bytes",
                                "raid0 needs a stripe size that is a positive multiple of 512",
                            ));
                        }
                    }
                    "jbod" => check_jbod_has_no_stripe(file, "card.stripe_bytes", c.stripe_bytes)?,
                    o => {
                        return Err(bad(
                            file,
                            "card.raid",
                            format!("unknown RAID level '{o}': use raid0 or jbod"),
                        ))
                    }
                }
            }
            DriveKind::Tiered => {
                let t = self.tiered.as_ref().ok_or_else(|| missing("tiered"))?;
                need_source(file, "tiered", &t.source)?;
                if !matches!(t.mode.as_str(), "tier" | "cache") {
                    return Err(bad(file, "tiered.mode", "use tier or cache"));
                }
                if t.extent_bytes == 0 || t.extent_bytes % 4096 != 0 {
                    return Err(bad(
                        file,
                        "tiered.extent_bytes",
                        "must be a positive multiple of 4096",
                    ));
                }
                // The fast member holds fast_bytes / extent_bytes extents (or cache lines): with
                // none, nothing is ever promoted and the volume runs as its slow drive alone.
                if t.fast_bytes < t.extent_bytes {
                    return Err(bad(
                        file,
                        "tiered.fast_bytes",
                        format!(
                            "{} holds no extent of tiered.extent_bytes = {}: give the fast drive \
                             at least one",
                            t.fast_bytes, t.extent_bytes
                        ),
                    ));
                }
                // The tier counts an extent's accesses in a byte, stopping at 255, and promotes
                // when the count reaches this: at 0 (counted before compared) or above 255 it
                // never does, and the volume runs as its slow drive alone.
                if !(1..=MAX_PROMOTE_AFTER).contains(&t.promote_after) {
                    return Err(bad(
                        file,
                        "tiered.promote_after",
                        format!(
                            "{} accesses: use 1 to {MAX_PROMOTE_AFTER} (1 promotes an extent on \
                             its first access)",
                            t.promote_after
                        ),
                    ));
                }
                if t.mode == "cache" && t.extent_bytes > 32 * 4096 {
                    return Err(bad(
                        file,
                        "tiered.extent_bytes",
                        "a cache tracks the 4 KiB blocks it holds of each line: at most 131072 (128 KiB)",
                    ));
                }
                if t.ram_bytes > MAX_RAM_TIER_BYTES {
                    return Err(bad(
                        file,
                        "tiered.ram_bytes",
                        format!("at most {MAX_RAM_TIER_BYTES} (1 TiB)"),
                    ));
                }
                if t.ram_bytes % 4096 != 0 {
                    return Err(bad(
                        file,
                        "tiered.ram_bytes",
                        "must be a multiple of 4096 (the RAM layer keeps 4 KiB lines); 0 for none",
                    ));
                }
                if t.ram_bytes > 0 && !(t.ram_bytes_per_s.is_finite() && t.ram_bytes_per_s > 0.0) {
                    return Err(bad(
                        file,
                        "tiered.ram_bytes_per_s",
                        "a RAM layer needs its copy rate in bytes/s (e.g. half the memory's peak bandwidth)",
                    ));
                }
            }
        }
        Ok(())
    }
}

/// A name a target spec can address (`sim:DRIVE@PLATFORM/PORT`): letters, digits, `-`, `_`
/// and `.`, not empty.
fn check_name(file: &str, key: &str, name: &str) -> Result<(), SimError> {
    let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if name.is_empty() || !name.chars().all(fits) {
        return Err(bad(
            file,
            key,
            format!(
                "'{name}' cannot be addressed as sim:DRIVE@PLATFORM/PORT: use letters, digits, \
                 '-', '_' and '.'"
            ),
        ));
    }
    Ok(())
}

/// The smallest drive the model takes: a job needs room for a few blocks.
const MIN_DRIVE_BYTES: u64 = 1 << 20;

/// The largest SSD the model takes: its page map is 4 bytes per 4 KiB page in memory (16 GB
/// for 16 TB).
const MAX_SSD_BYTES: u64 = 16_000_000_000_000;

/// Controller cores at most (each is a resource of the model).
const MAX_CORES: u32 = 256;

/// A catalog file's bytes as text, or an error naming the file and the first byte that is not
/// UTF-8 (the reader's own "stream did not contain valid UTF-8" said neither).
fn utf8_text(file: &str, bytes: Vec<u8>) -> Result<String, SimError> {
    String::from_utf8(bytes).map_err(|e| SimError::Parse {
        file: file.to_string(),
        message: format!(
            "not UTF-8 text (byte {} is not): save the file as UTF-8, as TOML requires",
            e.utf8_error().valid_up_to()
        ),
    })
}

/// Refuses a file with nothing in it but blanks and comments, saying what an entry needs (the
/// parser's "missing field `name`" did not say the file was empty).
fn not_empty(file: &str, text: &str, needs: &str, folder: &str) -> Result<(), SimError> {
    let has_content = text
        .lines()
        .map(str::trim)
        .any(|l| !l.is_empty() && !l.starts_with('#'));
    if has_content {
        return Ok(());
    }
    Err(SimError::Parse {
        file: file.to_string(),
        message: format!(
            "the file has no entry: {needs} (`iolab sim list` names the built-in entries; \
             their files are catalog/{folder}/*.toml in iolab's source); remove the file or \
             fill it in"
        ),
    })
}

/// The slowest spindle the model takes: disks spin 3600 to 15000 rpm, and a command waits up to
/// a revolution for its sector (60 ms at 1000 rpm).
const MIN_RPM: f64 = 1000.0;

/// The fastest spindle the model takes (the fastest disks spin at 15000 rpm).
const MAX_RPM: f64 = 20000.0;

/// Members of a card at most (each is a whole drive model).
const MAX_CARD_MEMBERS: u32 = 64;

/// Extents (and fast slots) a tier keeps at most: about 9 bytes each in memory (9.7 GB at the
/// limit, about a 10 TB SSD's page map), indexed by u32.
const MAX_TIER_EXTENTS: u64 = 1 << 30;

/// The most accesses a tier may wait for before it promotes an extent (its count is a byte).
const MAX_PROMOTE_AFTER: u32 = u8::MAX as u32;

/// A RAM tier at most (the model keeps a line per 4 KiB).
const MAX_RAM_TIER_BYTES: u64 = 1 << 40;

/// Bytes in one multi-plane block (all planes of a die erased together).
pub fn block_bytes(n: &NandSpec) -> u64 {
    n.planes as u64 * n.pages_per_block as u64 * n.page_bytes as u64
}

/// Raw NAND capacity.
pub fn nand_raw_bytes(n: &NandSpec) -> u64 {
    n.dies as u64 * n.blocks_per_plane as u64 * block_bytes(n)
}

/// A JBOD concatenates its members: a stripe size given for one would be silently ignored.
fn check_jbod_has_no_stripe(file: &str, key: &str, stripe: Option<u64>) -> Result<(), SimError> {
    match stripe {
        Some(_) => Err(bad(
            file,
            key,
            "a jbod concatenates its members and stripes nothing: remove it, or use raid0",
        )),
        None => Ok(()),
    }
}

/// A RAID port's members attach through their own ports (slot, HBA, path up to the CPU):
/// the volume's port has none of its own, and one given there would be silently ignored.
fn check_raid_port_has_no_link(file: &str, key: &str, p: &PortSpec) -> Result<(), SimError> {
    let own = [
        ("slot", p.slot.is_some()),
        ("hba", p.hba.is_some()),
        ("path", !p.path.is_empty()),
    ];
    match own.iter().find(|(_, given)| *given) {
        Some((k, _)) => Err(bad(
            file,
            format!("{key}.{k}"),
            format!(
                "a RAID port has no {k} of its own: its members attach through their ports \
                 (raid.members), so give the {k} there; a RAID port takes raid, driver, \
                 latency_ns, default, title and source"
            ),
        )),
        None => Ok(()),
    }
}

impl PlatformSpec {
    /// Checks every cross-field rule.
    pub fn validate(&self, file: &str) -> Result<(), SimError> {
        need_source(file, "", &self.source)?;
        for (n, d) in &self.drivers {
            need_source(file, &format!("drivers.{n}"), &d.source)?;
        }
        for (n, l) in &self.links {
            check_link_spec(file, &format!("links.{n}"), l)?;
        }
        for (n, h) in &self.hbas {
            need_source(file, &format!("hbas.{n}"), &h.source)?;
        }
        if self.ports.is_empty() {
            return Err(bad(file, "ports", "a platform needs at least one port"));
        }
        if self.ports.values().filter(|p| p.default).count() > 1 {
            return Err(bad(file, "ports", "at most one port may be the default"));
        }
        for (n, p) in &self.ports {
            let key = format!("ports.{n}");
            need_source(file, &key, &p.source)?;
            if let Some(s) = &p.slot {
                if parse_std_link(s).is_none() {
                    return Err(bad(
                        file,
                        format!("{key}.slot"),
                        format!(
                            "unknown link '{s}': a slot is a standard link the drive negotiates \
                             with: sata1.5, sata3, sata6 or pcie<gen>x<lanes> (gen 1–5, \
                             x1/x2/x4/x8/x16); the hops behind it go in path"
                        ),
                    ));
                }
            }
            for (i, h) in p.path.iter().enumerate() {
                check_link(file, &format!("{key}.path[{i}]"), h, &self.links)?;
            }
            if let Some(h) = &p.hba {
                if !self.hbas.contains_key(h) {
                    let known = if self.hbas.is_empty() {
                        "none".to_string()
                    } else {
                        self.hbas.keys().cloned().collect::<Vec<_>>().join(", ")
                    };
                    return Err(bad(
                        file,
                        format!("{key}.hba"),
                        format!(
                            "unknown hba '{h}' (this platform's: {known}): define [hbas.{h}] \
                             (part, command_ns, latency_ns, source) or name one of them"
                        ),
                    ));
                }
            }
            if let Some(d) = &p.driver {
                if !self.drivers.contains_key(d) {
                    return Err(bad(
                        file,
                        format!("{key}.driver"),
                        format!("unknown driver '{d}': define [drivers.{d}]"),
                    ));
                }
            }
            match (&p.raid, &p.slot) {
                (Some(r), _) => {
                    check_raid_port_has_no_link(file, &key, p)?;
                    if !matches!(r.level.as_str(), "raid0" | "jbod") {
                        return Err(bad(file, format!("{key}.raid.level"), "use raid0 or jbod"));
                    }
                    if r.members.is_empty() {
                        return Err(bad(file, format!("{key}.raid.members"), "needs members"));
                    }
                    for (i, m) in r.members.iter().enumerate() {
                        if r.members[..i].contains(m) {
                            return Err(bad(
                                file,
                                format!("{key}.raid.members"),
                                format!("'{m}' is listed twice: a port holds one drive"),
                            ));
                        }
                        match self.ports.get(m) {
                            Some(mp) if mp.raid.is_none() && mp.slot.is_some() => {}
                            _ => {
                                return Err(bad(
                                    file,
                                    format!("{key}.raid.members"),
                                    format!("'{m}' is not a plain port of this platform"),
                                ))
                            }
                        }
                    }
                    // One drive model fills every member port, so one drive must attach to
                    // each: a SATA and a PCIe slot in one volume leave no drive that fits (a
                    // slot that is no link at all is reported at its own port).
                    let slots: Vec<(&String, Link)> = r
                        .members
                        .iter()
                        .filter_map(|m| Some((m, parse_std_link(self.ports[m].slot.as_deref()?)?)))
                        .collect();
                    if let Some(((first, a), rest)) = slots.split_first() {
                        if let Some((m, b)) = rest.iter().find(|(_, b)| negotiate(*a, *b).is_none())
                        {
                            return Err(bad(
                                file,
                                format!("{key}.raid.members"),
                                format!(
                                    "'{first}' is a {a} port and '{m}' a {b} one: no drive \
                                     attaches to both, so none could fill the volume; list \
                                     ports of one kind (all SATA or all PCIe)"
                                ),
                            ));
                        }
                    }
                    if r.level == "jbod" {
                        check_jbod_has_no_stripe(
                            file,
                            &format!("{key}.raid.stripe_bytes"),
                            r.stripe_bytes,
                        )?;
                    }
                    if r.level == "raid0" && r.stripe_bytes.is_none_or(|s| s == 0 || s % 512 != 0) {
                        return Err(bad(
                            file,
                            format!("{key}.raid.stripe_bytes"),
                            "raid0 needs a positive stripe size, a multiple of 512",
                        ));
                    }
                }
                (None, None) => {
                    return Err(bad(
                        file,
                        format!("{key}.slot"),
                        "a port needs a slot or a raid",
                    ))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl Catalog {
    /// The built-in catalog, plus every `drives/*.toml` and `platforms/*.toml` under `dir`
    /// (a user entry with a built-in's name replaces it).
    pub fn load(dir: Option<&Path>) -> Result<Catalog, SimError> {
        let mut c = Catalog::default();
        for (f, text) in BUILTIN_DRIVES {
            let file = format!("catalog/drives/{f}");
            let name = c.add_drive(&file, text)?;
            c.builtin_texts.insert(("drive", name), (file, text));
        }
        for (f, text) in BUILTIN_PLATFORMS {
            let file = format!("catalog/platforms/{f}");
            let name = c.add_platform(&file, text)?;
            c.builtin_texts.insert(("platform", name), (file, text));
        }
        c.builtin = c.drives.keys().cloned().collect();
        c.builtin_files = c
            .drives
            .values()
            .map(|(f, _)| f)
            .chain(c.platforms.values().map(|(f, _)| f))
            .cloned()
            .collect();
        if let Some(dir) = dir {
            // A mistyped directory must not silently fall back to the built-in catalog.
            if !dir.join("drives").is_dir() && !dir.join("platforms").is_dir() {
                return Err(SimError::Io {
                    path: dir.display().to_string(),
                    cause: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no drives/ or platforms/ directory with catalog TOML files here",
                    ),
                });
            }
            for (sub, is_drive) in [("drives", true), ("platforms", false)] {
                let mut user_files = BTreeMap::new();
                let d = dir.join(sub);
                if !d.is_dir() {
                    continue;
                }
                let mut files: Vec<_> = std::fs::read_dir(&d)
                    .map_err(|e| SimError::Io {
                        path: d.display().to_string(),
                        cause: e,
                    })?
                    .filter_map(|e| e.ok().map(|e| e.path()))
                    // `.toml` in any case (`SSD.TOML`), as job files are taken: a file the
                    // user put here must not be skipped without a word.
                    .filter(|p| {
                        p.extension()
                            .and_then(|x| x.to_str())
                            .is_some_and(|x| x.eq_ignore_ascii_case("toml"))
                    })
                    .collect();
                // Sorted, so that which file wins a name clash never depends on the directory.
                files.sort();
                for p in files {
                    let bytes = std::fs::read(&p).map_err(|e| SimError::Io {
                        path: p.display().to_string(),
                        cause: e,
                    })?;
                    let file = p.display().to_string();
                    let text = utf8_text(&file, bytes)?;
                    c.user_files.insert(file.clone());
                    let entry = if is_drive {
                        let name = c.add_drive(&file, &text)?;
                        if c.builtin.contains(&name) {
                            c.overridden.insert(name.clone(), file.clone());
                        }
                        name
                    } else {
                        c.add_platform(&file, &text)?
                    };
                    // Replacing a built-in is what a user's file may do, but not unsaid: a
                    // file copied to make a new drive and not yet renamed replaced the
                    // original wherever it was named. The same text (`--catalog catalog`, the
                    // source tree's own) replaces nothing.
                    let kind = if is_drive { "drive" } else { "platform" };
                    if let Some((builtin_file, builtin_text)) =
                        c.builtin_texts.get(&(kind, entry.clone()))
                    {
                        if *builtin_text != text {
                            c.replaced.push(ReplacedBuiltin {
                                kind,
                                name: entry.clone(),
                                user_file: file.clone(),
                                builtin_file: builtin_file.clone(),
                            });
                        }
                    }
                    // Replacing a built-in entry is what a user file is for; two of the
                    // user's own files naming one entry is a mistake that would otherwise
                    // hide one of them.
                    if let Some(other) = user_files.insert(entry, file.clone()) {
                        return Err(SimError::Catalog {
                            file,
                            key: "name".into(),
                            message: format!(
                                "{other} already defines an entry of this name; rename one of them"
                            ),
                        });
                    }
                }
            }
        }
        c.cross_check()?;
        Ok(c)
    }

    /// The built-in entries the user's catalog directory replaces (with entries of the same
    /// name and other contents), in the order they were read: what a command loading it says.
    pub fn replaced_builtins(&self) -> &[ReplacedBuiltin] {
        &self.replaced
    }

    /// Whether `file`, an entry's file, is one of the built-in files embedded in the binary
    /// (its name, `catalog/drives/…`, is where it was in the source tree, not a file on disk).
    pub fn is_builtin_file(&self, file: &str) -> bool {
        self.builtin_files.contains(file) && !self.user_files.contains(file)
    }

    /// Parses and validates one drive file; returns the entry's name. An entry of the same
    /// name is replaced.
    pub fn add_drive(&mut self, file: &str, text: &str) -> Result<String, SimError> {
        not_empty(
            file,
            text,
            "a drive needs at least name, title, kind, source and the tables its kind reads",
            "drives",
        )?;
        let d: DriveSpec = toml::from_str(text).map_err(|e| SimError::Parse {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        check_numbers(file, &raw_table(file, text)?, "")?;
        check_name(file, "name", &d.name)?;
        d.validate(file)?;
        let name = d.name.clone();
        self.drives.insert(name.clone(), (file.to_string(), d));
        Ok(name)
    }

    /// Parses and validates one platform file; returns the entry's name. An entry of the same
    /// name is replaced.
    pub fn add_platform(&mut self, file: &str, text: &str) -> Result<String, SimError> {
        not_empty(
            file,
            text,
            "a platform needs at least name, title, source, its drivers and its ports",
            "platforms",
        )?;
        let p: PlatformSpec = toml::from_str(text).map_err(|e| SimError::Parse {
            file: file.to_string(),
            message: e.to_string(),
        })?;
        check_numbers(file, &raw_table(file, text)?, "")?;
        check_name(file, "name", &p.name)?;
        for port in p.ports.keys() {
            check_name(file, &format!("ports.{port}"), port)?;
        }
        p.validate(file)?;
        let name = p.name.clone();
        self.platforms.insert(name.clone(), (file.to_string(), p));
        Ok(name)
    }

    /// The error for using drive `name`, if a user file's replacement of a drive it uses made
    /// it inconsistent (see [`Catalog::unusable`]).
    pub fn unusable_error(&self, name: &str) -> Option<SimError> {
        self.unusable
            .get(name)
            .map(|(file, key, message)| SimError::Catalog {
                file: file.clone(),
                key: key.clone(),
                message: message.clone(),
            })
    }

    /// Rules that span entries: card members and tier members must exist and be SSDs/HDDs, a
    /// card's members must train to its `member_link`, stripes and extents must fit them.
    ///
    /// A built-in entry broken by a user's replacement of a drive it uses is not an error
    /// here: it goes to [`Catalog::unusable`] and is refused when used, naming the user's file.
    pub fn cross_check(&mut self) -> Result<(), SimError> {
        let mut unusable = BTreeMap::new();
        for (name, (file, d)) in &self.drives {
            let Err(e) = self.check_against_others(file, d) else {
                continue;
            };
            let replaced = [
                d.card.as_ref().map(|c| &c.member),
                d.tiered.as_ref().map(|t| &t.fast),
                d.tiered.as_ref().map(|t| &t.slow),
            ]
            .into_iter()
            .flatten()
            .find_map(|m| Some((m, self.overridden.get(m)?)));
            let builtin = self.builtin.contains(name) && !self.overridden.contains_key(name);
            let (Some((member, user_file)), true) = (replaced, builtin) else {
                return Err(e);
            };
            let why = match e {
                SimError::Catalog { key, message, .. } => format!("{key}: {message}"),
                other => other.to_string(),
            };
            let dir = Path::new(user_file)
                .parent()
                .map_or_else(|| "drives/".to_string(), |p| p.display().to_string());
            unusable.insert(
                name.clone(),
                (
                    user_file.clone(),
                    "name".to_string(),
                    format!(
                        "replacing the built-in '{member}' breaks the built-in entry {name} \
                         ({file}, built in), which depends on it ({why}). To use {name} with \
                         this catalog, override it too (an entry named {name} in {dir}), or give \
                         your entry another name than '{member}'"
                    ),
                ),
            );
        }
        self.unusable = unusable;
        Ok(())
    }

    /// The rules of [`Catalog::cross_check`] for one drive entry.
    fn check_against_others(&self, file: &str, d: &DriveSpec) -> Result<(), SimError> {
        if let Some(c) = &d.card {
            match self.drives.get(&c.member) {
                Some((member_file, m)) if m.kind == DriveKind::Ssd => {
                    // The members attach to the chip's ports as a drive to a platform's:
                    // their interface negotiates with member_link, or nothing is built (and
                    // the error on use would blame the port, not this key).
                    let own = parse_std_link(&m.interface.link);
                    let chip = parse_std_link(&c.member_link);
                    if let (Some(own), Some(chip)) = (own, chip) {
                        if negotiate(own, chip).is_none() {
                            return Err(bad(
                                file,
                                "card.member_link",
                                format!(
                                    "'{}' cannot carry the member '{}' ({member_file}), whose \
                                         interface is {}: use a link its interface trains to \
                                         (a SATA link for a SATA drive, PCIe for PCIe)",
                                    c.member_link, c.member, m.interface.link
                                ),
                            ));
                        }
                    }
                    let member = m.capacity.as_ref().map_or(0, |c| c.usable_bytes);
                    if c.stripe_bytes.is_some_and(|s| s > member) {
                        return Err(bad(
                            file,
                            "card.stripe_bytes",
                            format!(
                                "larger than a member '{}' ({member_file}: {member} bytes): \
                                     the volume would hold nothing",
                                c.member
                            ),
                        ));
                    }
                }
                _ => {
                    return Err(bad(
                        file,
                        "card.member",
                        format!("'{}' is not an SSD in the catalog", c.member),
                    ))
                }
            }
        }
        if let Some(t) = &d.tiered {
            for (k, n) in [("tiered.fast", &t.fast), ("tiered.slow", &t.slow)] {
                match self.drives.get(n) {
                    Some((_, m)) if matches!(m.kind, DriveKind::Ssd | DriveKind::Hdd) => {}
                    _ => {
                        return Err(bad(
                            file,
                            k,
                            format!("'{n}' is not an SSD or HDD in the catalog"),
                        ))
                    }
                }
            }
            // The drives named may be a user's replacements of built-in ones: the message
            // says which file holds each.
            let size_of = |name: &str| {
                let (f, d) = &self.drives[name];
                let size = d
                    .capacity
                    .as_ref()
                    .map(|c| c.usable_bytes)
                    .or(d.hdd.as_ref().map(|h| h.capacity_bytes));
                (size, f.as_str())
            };
            if let (Some(size), slow_file) = size_of(&t.slow) {
                if t.extent_bytes > size {
                    return Err(bad(
                        file,
                        "tiered.extent_bytes",
                        format!(
                            "{} is more than the slow drive '{}' ({slow_file}) holds ({size}): \
                                 the volume would have no extent",
                            t.extent_bytes, t.slow
                        ),
                    ));
                }
            }
            if let (Some(size), fast_file) = size_of(&t.fast) {
                if t.fast_bytes > size {
                    return Err(bad(
                        file,
                        "tiered.fast_bytes",
                        format!(
                            "{} is more than the fast drive '{}' ({fast_file}) holds ({size}); \
                                 use at most that",
                            t.fast_bytes, t.fast
                        ),
                    ));
                }
            }
            // The tier keeps a table entry for every extent of the slow drive and every slot
            // of the fast share, indexed by u32: a huge disk under small extents would not fit.
            if let (Some(slow), slow_file) = size_of(&t.slow) {
                let extents = slow / t.extent_bytes + t.fast_bytes / t.extent_bytes;
                if extents > MAX_TIER_EXTENTS {
                    return Err(bad(
                        file,
                        "tiered.extent_bytes",
                        format!(
                            "{} makes {extents} extents of the slow drive '{}' ({slow_file}: \
                             {slow} bytes) and the fast share: the model keeps at most \
                             {MAX_TIER_EXTENTS}, a few bytes each in memory; use larger extents \
                             or a smaller drive",
                            t.extent_bytes, t.slow
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
