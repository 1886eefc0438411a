//! The tables of a catalog entry, as TOML gives them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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
    /// Program data the controller hands to its NAND channels at most (bytes/s, after
    /// compression, parity included): its flash-side write path, where narrower than its
    /// channels and dies (default: no limit).
    #[serde(default)]
    pub nand_write_bytes_per_s: Option<f64>,
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
    /// The rate program data goes into the dies (data-in), where a controller is measured to
    /// feed it slower than its channels bring data out; `bus_mt_per_s` when left out.
    #[serde(default)]
    pub bus_write_mt_per_s: Option<f64>,
    /// Bytes per transfer (bus width, default 1).
    #[serde(default)]
    pub bus_bytes: Option<u32>,
    /// `sync` (ONFI NV-DDR, Toggle) or `async` (SDR) bus, for descriptions.
    #[serde(default)]
    pub bus: String,
    /// The controller drives its channels in lockstep: every operation takes the die at the
    /// same position on each channel (a way), each channel moving its share of the data, so
    /// the array works as `dies / channels` ways of `channels` dies. Off by default (each die
    /// on its own).
    #[serde(default)]
    pub lockstep: bool,
    /// Where these values come from.
    pub source: String,
}

/// Blocks per plane that hold data: all of them, less the parity die's worth (spread over the
/// dies, as the stripes are) where the FTL keeps one (`parity_die`).
pub fn data_blocks_per_plane(nand: &NandSpec, ftl: &FtlSpec) -> u32 {
    if ftl.parity_die {
        nand.blocks_per_plane - nand.blocks_per_plane / nand.dies.max(1)
    } else {
        nand.blocks_per_plane
    }
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
    /// RAISE-style parity across the dies (SandForce): a die's worth of the raw array holds
    /// the parity of the others, so every program unit of data carries a share of a parity
    /// program and the array keeps that much less room for data and spare (default off).
    #[serde(default)]
    pub parity_die: bool,
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
    /// How many separate runs of written data (segments) the write cache holds at most; a
    /// write continuing one joins it. Left out: as many as its bytes allow.
    #[serde(default)]
    pub write_cache_segments: Option<u32>,
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
    /// Sequential cutoff: a request that continues a sequential stream (same direction)
    /// whose bytes, with its own, reach this many is not copied to the fast member and does
    /// not count towards promotion; 0 for none.
    #[serde(default)]
    pub seq_cutoff_bytes: u64,
    /// Tier mode: the mover's background rate (bytes/s), one extent at a time, paced
    /// whether or not the host is busy; left out (0), the mover is unpaced (paced only
    /// while the slow drive's writes wait).
    #[serde(default)]
    pub promote_bytes_per_s: f64,
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
    /// A custom pipe's transactions (a bus such as PCI-X): data crosses in bursts that each
    /// cost bus time beyond their data, and data toward the drive is the device's reads of
    /// host memory, each request a transaction of its own. Left out, data flows at
    /// `bytes_per_s` whole.
    #[serde(default)]
    pub bursts: Option<BurstSpec>,
    /// Latency of crossing the hop.
    #[serde(default)]
    pub latency_ns: u64,
    /// Where these values come from.
    pub source: String,
}

/// How a custom pipe moves data: bursts and read requests (see [`LinkSpec::bursts`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstSpec {
    /// Data bytes per burst at most.
    pub bytes: u32,
    /// Bus time of a burst that carries no data (its address and attribute phases, the
    /// target's response, the idle clock before the next).
    pub overhead_ns: f64,
    /// Bytes one read request of the device asks for at most (data toward the drive).
    pub read_request_bytes: u32,
    /// Bus time of one read request, a transaction without data.
    pub read_request_ns: f64,
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
