//! The model: a tree of components whose resources each have a "busy until" time.
//!
//! ```text
//!  host ── driver latency ── [RAID / tier split] ── path pipes (DMI, PCIe, PCI-X, SATA) ── HBA
//!                                                        │
//!                       SSD: controller cores → write buffer / FTL → channels × dies (tR, tPROG, tBERS)
//!                       HDD: one actuator: seek + rotation + zoned transfer
//! ```
//!
//! A request reserves time on each resource along its path; it completes when its last
//! reservation ends. Reservations are made eagerly wherever arrivals reach a resource in time
//! order (the host path going down, controller cores, dies); where they do not — after the dies,
//! whose reads finish out of order, on the way back up through channels and links — typed
//! events, processed in time order (first queued first among equals), make the reservations:
//! one when a die's read ends (its channel), one when the data starts leaving the channel (the
//! links up to the host).
//! Single-threaded, integer nanoseconds, no globals (anchors-style.md §10).

use crate::buffered::BufferedLpns;
use crate::catalog::LinkKind;
use crate::earliest::Earliest;
use crate::ftl::{Ftl, GcCost};
use crate::timeq::TimeQueue;
use iolab_core::job::Direction;
use iolab_core::rng::Rng;
use iolab_link::{Framing, Link, TlpParams};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};

/// Index of a resource.
pub type ResId = u32;

/// What a resource is, for power and bottleneck reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum ResKind {
    /// A link pipe (SATA, PCIe, DMI, PCI-X, cable).
    Link,
    /// A host bus adapter or RAID chip.
    Hba,
    /// SSD controller cores.
    Controller,
    /// SSD internal datapath.
    DataPath,
    /// NAND channel.
    Channel,
    /// NAND die.
    Die,
    /// HDD actuator.
    Disk,
    /// Host memory (a tiered volume's RAM layer).
    Memory,
}

/// One resource: busy until a time, with its accumulated busy time.
#[derive(Clone, Debug)]
pub struct Res {
    /// Time it is busy until.
    pub busy_until: u64,
    /// Total busy time.
    pub busy_ns: u64,
    /// Kind.
    pub kind: ResKind,
    /// Group name (resources of one kind in one component share it).
    pub group: String,
}

/// A pipe: a resource with a transfer-time law `bytes × ns_per_byte + packets × per_packet_ns`.
#[derive(Clone, Debug)]
pub struct Pipe {
    /// Its resource.
    pub res: ResId,
    ns_per_byte: f64,
    packet: u64,
    /// `log2(packet)` when the packet is a power of two, as in every link of the catalog (PCIe
    /// payload sizes, the 8 KiB SATA data FIS, 4 KiB datapath chunks): packets are then
    /// counted with a shift, where the division drew more perf samples than any other
    /// instruction of a request's path.
    packet_shift: Option<u32>,
    per_packet_ns: f64,
    /// Time of one full packet (every transfer's first hop on to the next pipe).
    packet_ns: u64,
    /// Time of a 4 KiB transfer, the size of every random test: looked up instead of worked
    /// out in floating point, which cost 32 instructions per modelled 4 KiB write.
    time_4k: u64,
    /// Latency of crossing the hop.
    pub hop_ns: u64,
}

impl Pipe {
    /// A pipe for a link, with the link math of `iolab-link` (encoding, TLP or FIS framing).
    pub fn new(res: ResId, kind: LinkKind, mps: u32, hop_ns: u64) -> Pipe {
        match kind {
            LinkKind::Std(link) => {
                let framing = Framing {
                    payload_bytes: match link {
                        Link::Sata { .. } => iolab_link::SATA_MAX_FIS_PAYLOAD_BYTES,
                        _ => mps,
                    },
                    tlp: TlpParams::default(),
                    fis_gap_ns: None,
                };
                let packet = framing.payload_bytes as u64;
                let ns_per_byte = link.after_encoding().time_ns(1);
                let per_packet_ns =
                    link.transfer_ns(packet, &framing) - packet as f64 * ns_per_byte;
                Pipe::with(res, ns_per_byte, packet, per_packet_ns, hop_ns)
            }
            LinkKind::Raw { bytes_per_s, .. } => {
                Pipe::with(res, 1e9 / bytes_per_s, 4096, 0.0, hop_ns)
            }
        }
    }

    /// A pure rate pipe (SSD datapath).
    pub fn rate(res: ResId, bytes_per_s: f64) -> Pipe {
        Pipe::with(res, 1e9 / bytes_per_s, 4096, 0.0, 0)
    }

    fn with(res: ResId, ns_per_byte: f64, packet: u64, per_packet_ns: f64, hop_ns: u64) -> Pipe {
        let mut p = Pipe {
            res,
            ns_per_byte,
            packet,
            packet_shift: packet.is_power_of_two().then(|| packet.trailing_zeros()),
            per_packet_ns,
            packet_ns: 0,
            time_4k: 0,
            hop_ns,
        };
        p.packet_ns = p.time_of(packet);
        p.time_4k = p.time_of(4096);
        p
    }

    #[inline]
    fn time(&self, bytes: u64) -> u64 {
        if bytes == 4096 {
            self.time_4k
        } else {
            self.time_of(bytes)
        }
    }

    /// The transfer-time law.
    #[inline]
    fn time_of(&self, bytes: u64) -> u64 {
        let packets = match self.packet_shift {
            Some(shift) => (bytes + self.packet - 1) >> shift,
            None => bytes.div_ceil(self.packet),
        };
        (bytes as f64 * self.ns_per_byte + packets as f64 * self.per_packet_ns) as u64
    }

    /// Time of the first packet of a `bytes` transfer, given the transfer's time `whole`.
    #[inline]
    fn first_packet(&self, bytes: u64, whole: u64) -> u64 {
        if bytes >= self.packet {
            self.packet_ns
        } else {
            whole
        }
    }

    /// Payload rate in bytes/s for large transfers.
    pub fn bytes_per_s(&self) -> f64 {
        self.packet as f64 / (self.packet as f64 * self.ns_per_byte + self.per_packet_ns) * 1e9
    }
}

/// Moves `bytes` through a chain of pipes arriving at `t`; cut-through: a hop starts once the
/// first packet has crossed the previous one, ends no earlier than the previous hop's end plus
/// one packet, and is occupied only for its own transfer time (other flows' packets interleave
/// on a packet link). Returns when the last byte has crossed the chain.
#[inline]
pub fn transfer(res: &mut [Res], chain: &[Pipe], t: u64, bytes: u64) -> u64 {
    transfer_through(res, chain.iter(), t, t, bytes)
}

/// [`transfer`] over any sequence of pipes (a host path followed by a drive's datapath), for
/// data whose first bytes are available at `head` and whose last bytes arrive at `tail` (data
/// still streaming in from a NAND channel).
#[inline]
fn transfer_through<'p>(
    res: &mut [Res],
    chain: impl Iterator<Item = &'p Pipe>,
    head: u64,
    tail: u64,
    bytes: u64,
) -> u64 {
    let mut head = head;
    let mut tail = tail.max(head);
    for p in chain {
        let d = p.time(bytes);
        let first = p.first_packet(bytes, d);
        let r = &mut res[p.res as usize];
        let start = head.max(r.busy_until);
        r.busy_until = start + d;
        r.busy_ns += d;
        let end = (start + d).max(tail + first);
        head = start + first + p.hop_ns;
        tail = end + p.hop_ns;
    }
    tail
}

/// Reserves `dur` on the earliest-free of `ids` from `t`; returns the end.
#[inline]
fn reserve_any(res: &mut [Res], ids: &[ResId], t: u64, dur: u64) -> u64 {
    let mut best = ids[0];
    for &i in &ids[1..] {
        if res[i as usize].busy_until < res[best as usize].busy_until {
            best = i;
        }
    }
    reserve(res, best, t, dur)
}

/// Marks resource `id` busy for `dur` from `start`, a time already chosen (in a gap, or after
/// what it waits for); returns the end.
#[inline]
fn occupy(res: &mut [Res], id: ResId, start: u64, dur: u64) -> u64 {
    let r = &mut res[id as usize];
    r.busy_until = r.busy_until.max(start + dur);
    r.busy_ns += dur;
    start + dur
}

#[inline]
fn reserve(res: &mut [Res], id: ResId, t: u64, dur: u64) -> u64 {
    let start = t.max(res[id as usize].busy_until);
    occupy(res, id, start, dur)
}

/// Garbage collection booked on one die: page copies (tR + tPROG each), then erases. They are
/// separate NAND operations, so a host read waits for the one in progress, not for the whole
/// collection; every read taken in between pushes the rest of the collection back.
#[derive(Clone, Copy, Debug, Default)]
struct GcWork {
    /// Start of the first copy (moved back by the reads taken in between).
    start: u64,
    /// One copy: tR + tPROG.
    copy_ns: u64,
    /// End of the copies; the erases follow.
    copies_end: u64,
    /// One erase.
    erase_ns: u64,
    /// End of the collection.
    end: u64,
}

impl GcWork {
    /// When the operation in progress at `t` ends (`t` itself if no collection runs then).
    fn op_end(&self, t: u64) -> u64 {
        if t < self.start || t >= self.end {
            return t;
        }
        let (from, op) = if t < self.copies_end {
            (self.start, self.copy_ns)
        } else {
            (self.copies_end, self.erase_ns)
        };
        if op == 0 {
            return t;
        }
        (from + (t - from).div_ceil(op) * op).min(self.end)
    }

    /// Moves what is left of the collection back by `ns`.
    fn delay(&mut self, ns: u64) {
        self.start += ns;
        self.copies_end += ns;
        self.end += ns;
    }
}

/// The earliest start at or after `t` for `dur` that overlaps none of `booked` (intervals in
/// start order: programs on a die, their data loads on a channel); forgets those over by
/// `now`. Host reads use it to go ahead of work booked for later, as firmware schedules them.
#[inline]
fn fit_before_booked(booked: &mut VecDeque<(u64, u64)>, now: u64, t: u64, dur: u64) -> u64 {
    forget_over(booked, now);
    // Bookings do not overlap, so their ends rise with their starts: those over by `t` cannot
    // hold it up (a channel's loads run dozens ahead in steady state).
    if booked.back().is_none_or(|&(_, e)| e <= t) {
        return t;
    }
    let first = booked.partition_point(|&(_, e)| e <= t);
    let mut start = t;
    for &(s, e) in booked.range(first..) {
        if start + dur <= s {
            break;
        }
        start = start.max(e);
    }
    start
}

/// Drops the bookings over by `now`: they cannot hold up anything that arrives later.
fn forget_over(booked: &mut VecDeque<(u64, u64)>, now: u64) {
    while booked.front().is_some_and(|&(_, end)| end <= now) {
        booked.pop_front();
    }
}

/// Write buffer: space is taken when a write is admitted and given back when the NAND program
/// holding its data ends.
#[derive(Clone, Debug)]
struct WriteBuffer {
    cap: u64,
    used: u64,
    /// Program ends and the bytes each frees, as [`WriteBuffer::release_key`]s, earliest first.
    releases: BinaryHeap<Reverse<u128>>,
    /// When the space counted free became free: the latest release taken back.
    free_since: u64,
}

impl WriteBuffer {
    /// A buffer of `cap` bytes, empty.
    fn new(cap: u64) -> WriteBuffer {
        WriteBuffer {
            cap,
            used: 0,
            releases: BinaryHeap::new(),
            free_since: 0,
        }
    }

    /// `(end, bytes)` as one integer that orders as the pair does: the heap compares keys
    /// without the pair's branches (the release heap's pops cost 34 instructions per
    /// modelled write with pairs).
    #[inline]
    fn release_key(end: u64, bytes: u64) -> u128 {
        (end as u128) << 64 | bytes as u128
    }

    /// The `(end, bytes)` of a [`WriteBuffer::release_key`].
    #[inline]
    fn release_of(key: u128) -> (u64, u64) {
        ((key >> 64) as u64, key as u64)
    }

    /// A program ending at `end` gives `bytes` back.
    #[inline]
    fn release_at(&mut self, end: u64, bytes: u64) {
        self.releases.push(Reverse(Self::release_key(end, bytes)));
    }

    /// Empties the buffer: nothing held, nothing pending.
    fn clear(&mut self) {
        self.used = 0;
        self.releases.clear();
        self.free_since = 0;
    }

    /// When `bytes` fit in the buffer, at `t` or later. Writes are admitted in the order they
    /// arrive: when a write waits for a program to end, the space that program frees beyond
    /// its needs goes to the writes behind it, from then on, not before.
    #[inline]
    fn admit(&mut self, t: u64, bytes: u64) -> u64 {
        while let Some(&Reverse(key)) = self.releases.peek() {
            let (rt, b) = Self::release_of(key);
            if rt <= t || self.used + bytes > self.cap {
                self.releases.pop();
                self.used -= b;
                self.free_since = self.free_since.max(rt);
            } else {
                break;
            }
        }
        self.used += bytes;
        t.max(self.free_since)
    }
}

/// An SLC write cache: program units go to the array in SLC mode, fast, while it has room;
/// the drive folds what it holds into the array at the array's program speed whenever all
/// its dies are idle. It holds LPNs, not bytes written: overwriting an LPN still in it leaves
/// a stale copy that costs no folding (CrystalDiskMark rewriting its 1 GiB file stays in it).
#[derive(Clone, Debug)]
pub struct SlcCache {
    /// Program time of a unit in SLC mode.
    pub program_ns: u64,
    /// Host bytes it always holds.
    pub static_bytes: u64,
    /// Host bytes more while the drive has free space (each takes the cells of three).
    pub dynamic_bytes: u64,
    /// Which LPNs have their current copy in it (one bit each).
    held: Vec<u64>,
    /// Held LPNs, oldest first: the order they fold in.
    order: VecDeque<u32>,
    /// Folding is accounted up to this time.
    folded_to: u64,
}

impl SlcCache {
    /// A new, empty cache.
    pub fn new(program_ns: u64, static_bytes: u64, dynamic_bytes: u64) -> SlcCache {
        SlcCache {
            program_ns,
            static_bytes,
            dynamic_bytes,
            held: Vec::new(),
            order: VecDeque::new(),
            folded_to: 0,
        }
    }

    /// Host bytes of its entries, stale ones included until folding reaches them (the SLC
    /// blocks they sit in are not free before).
    fn used(&self) -> u64 {
        self.order.len() as u64 * 4096
    }

    /// Whether a program unit of `unit_bytes` fits when `free_bytes` of the drive's user space
    /// hold no data: the dynamic part lives in free TLC cells, three of which hold one SLC bit.
    fn has_room(&self, unit_bytes: u64, free_bytes: u64) -> bool {
        self.used() + unit_bytes <= self.static_bytes + self.dynamic_bytes.min(free_bytes / 3)
    }

    fn is_held(&self, lpn: u64) -> bool {
        self.held
            .get((lpn / 64) as usize)
            .is_some_and(|w| w & (1 << (lpn % 64)) != 0)
    }

    fn set_held(&mut self, lpn: u64, on: bool) {
        let i = (lpn / 64) as usize;
        if i >= self.held.len() {
            self.held.resize(i + 1, 0);
        }
        if on {
            self.held[i] |= 1 << (lpn % 64);
        } else {
            self.held[i] &= !(1 << (lpn % 64));
        }
    }

    /// `lpn` was written into an SLC program unit (`in_slc`) or into the array.
    fn note_write(&mut self, lpn: u64, in_slc: bool) {
        match (in_slc, self.is_held(lpn)) {
            (true, false) => {
                self.set_held(lpn, true);
                self.order.push_back(lpn as u32);
            }
            // Its older copy in the cache is stale now; the LPN leaves the fold order when
            // folding reaches it.
            (false, true) => self.set_held(lpn, false),
            _ => {}
        }
    }

    /// Folds up to `bytes` of held LPNs into the array, oldest first; stale entries cost
    /// nothing.
    fn fold(&mut self, bytes: u64) {
        let mut left = bytes;
        while left > 0 {
            let Some(&lpn) = self.order.front() else {
                break;
            };
            self.order.pop_front();
            if self.is_held(lpn as u64) {
                self.set_held(lpn as u64, false);
                left = left.saturating_sub(4096);
            }
        }
    }

    /// Empty, as after a secure erase or with time to fold.
    fn clear(&mut self) {
        self.held.clear();
        self.order.clear();
    }
}

/// The program unit being filled: one multi-plane page on one die.
#[derive(Clone, Copy, Debug)]
struct OpenUnit {
    die: u32,
    fill: u64,
    ready: u64,
    /// Programmed in SLC mode (the drive's SLC cache had room when it opened).
    slc: bool,
}

/// An LPN of the open program unit the host wrote in part, held in the write buffer until the
/// unit is programmed.
#[derive(Clone, Copy, Debug)]
struct PartialLpn {
    lpn: u64,
    /// Its 512-byte sectors the host has written since it entered the buffer, one bit each.
    sectors: u8,
    /// Where its previous copy is, when the host has not written all of it: the rest is read
    /// from there before the unit is programmed, and a read that wants the rest before then
    /// goes there.
    old: Option<OldCopy>,
}

/// The copy an LPN had before the host rewrote part of it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct OldCopy {
    /// Its block node when it was rewritten (collection may have moved it since, on its die).
    node: u32,
    die: u32,
    /// Stored bytes.
    bytes: u32,
}

/// Where a host read finds an LPN's data.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ReadFrom {
    /// The write buffer (written, not yet programmed).
    Buffer,
    /// The old copy of an LPN the host rewrote in part (its node followed to where collection
    /// has moved it): the read wants sectors the new data lacks.
    OldCopy(OldCopy),
    /// Where the map says (NAND, or nowhere for data never written).
    Mapped,
}

/// Every sector of an LPN (eight of 512 bytes).
const WHOLE_LPN: u8 = u8::MAX;

/// The 512-byte sectors of `lpn` that `[offset, offset + len)` wholly covers, one bit each.
fn sectors_covered(lpn: u64, offset: u64, len: u64) -> u8 {
    let (lo, hi) = bytes_within(lpn, offset, len);
    sector_bits(lo.div_ceil(512), hi / 512)
}

/// The 512-byte sectors of `lpn` that `[offset, offset + len)` touches, one bit each.
fn sectors_touched(lpn: u64, offset: u64, len: u64) -> u8 {
    let (lo, hi) = bytes_within(lpn, offset, len);
    sector_bits(lo / 512, hi.div_ceil(512))
}

/// The part of `[offset, offset + len)` within `lpn`, as byte offsets into it.
fn bytes_within(lpn: u64, offset: u64, len: u64) -> (u64, u64) {
    let base = lpn * 4096;
    let lo = offset.max(base) - base;
    let hi = (offset + len).min(base + 4096) - base;
    (lo, hi)
}

/// Sectors `first..end` of an LPN, one bit each.
fn sector_bits(first: u64, end: u64) -> u8 {
    if end <= first {
        return 0;
    }
    ((1u16 << end) - (1u16 << first)) as u8
}

/// Power coefficients of an SSD or HDD.
#[derive(Clone, Debug, Default)]
pub struct Power {
    /// Idle watts.
    pub idle_w: f64,
    /// Per busy controller core.
    pub controller_w: f64,
    /// Per die reading.
    pub die_read_w: f64,
    /// Per die programming.
    pub die_program_w: f64,
    /// Per die erasing.
    pub die_erase_w: f64,
    /// Per busy channel.
    pub channel_w: f64,
    /// HDD seeking and transferring.
    pub seek_w: f64,
}

/// Busy-time counters used for power.
#[derive(Clone, Copy, Debug, Default)]
pub struct Energy {
    /// Die read time summed over dies.
    pub read_ns: u64,
    /// Die program time summed.
    pub program_ns: u64,
    /// Die erase time summed.
    pub erase_ns: u64,
}

impl Energy {
    fn add(&mut self, o: Energy) {
        self.read_ns += o.read_ns;
        self.program_ns += o.program_ns;
        self.erase_ns += o.erase_ns;
    }

    fn share(self, f: f64) -> Energy {
        let part = |x: u64| (x as f64 * f) as u64;
        Energy {
            read_ns: part(self.read_ns),
            program_ns: part(self.program_ns),
            erase_ns: part(self.erase_ns),
        }
    }
}

/// An SSD.
#[derive(Clone, Debug)]
pub struct Ssd {
    /// Name.
    pub name: String,
    cores: Vec<ResId>,
    command_ns: u64,
    write_command_ns: u64,
    latency_ns: u64,
    read_path: Option<Pipe>,
    write_path: Option<Pipe>,
    dies: Vec<ResId>,
    chans: Vec<ResId>,
    /// tR of a lower and an upper page (equal for single-level timing).
    read_ns: [u64; 2],
    /// tPROG of a lower and an upper page.
    program_ns: [u64; 2],
    /// Programs issued per die: their parity says which page of the wordline is next.
    programs: Vec<u32>,
    /// Garbage collection booked per die.
    gc: Vec<GcWork>,
    /// Programs booked per die (start, end), oldest first: a read waits for the one in
    /// progress when it arrives, not for those booked to start later.
    programs_booked: Vec<VecDeque<(u64, u64)>>,
    /// End of the last read booked per die (reads on a die run one after another).
    read_until: Vec<u64>,
    /// What each die's page register holds.
    registers: Vec<PageRegister>,
    /// Program data loads booked per channel (start, end), oldest first.
    loads_booked: Vec<VecDeque<(u64, u64)>>,
    /// End of the last read data-out booked per channel.
    chan_read_until: Vec<u64>,
    /// When each die is free of everything booked on it (its reads, programs and collection),
    /// and which frees up first: where the next program unit goes.
    die_free: Earliest,
    erase_ns: u64,
    chan_ns_per_byte: f64,
    /// Bytes in one program unit (page × planes).
    pub unit_bytes: u64,
    block_bytes: u64,
    buffer: WriteBuffer,
    open: Option<OpenUnit>,
    /// The LPNs of the open unit the host wrote in part (empty when none is open).
    partial_lpns: Vec<PartialLpn>,
    /// The LPNs whose data is still only in the buffer.
    buffered: BufferedLpns,
    /// Bytes written by the host (before compression): write amplification's denominator.
    pub host_bytes: u64,
    /// Bytes read by the host, and those of them served from the write buffer.
    pub read_bytes: u64,
    /// See [`Ssd::read_bytes`].
    pub buffer_read_bytes: u64,
    /// The FTL.
    pub ftl: Ftl,
    compress: bool,
    min_stored: f64,
    trim: bool,
    /// Usable bytes.
    pub size: u64,
    /// Power law.
    pub power: Power,
    /// Energy counters.
    pub energy: Energy,
    /// SLC write cache of a multi-bit array.
    pub slc: Option<SlcCache>,
    /// Collection work that was in progress when an analytic steady state was set, charged
    /// to the next job, during which it runs.
    carried: Carried,
}

/// The program unit a die's page register holds after a read, and for how long. The register
/// keeps the page until the die's next operation, and CHANGE READ COLUMN (05h-E0h, in Micron's
/// parallel NAND command set, simulators-and-interfaces.md [22]) clocks out any other part of
/// it without a new tR: a read of the same unit meanwhile (small sequential reads, several to a
/// page) costs only its data-out. That firmware uses it is assumed.
#[derive(Clone, Copy, Debug, PartialEq)]
struct PageRegister {
    /// The unit: the FTL node holding it and its logical unit number. LPNs of one logical
    /// unit in one node are taken to share a physical unit, as sequential writes leave them
    /// (random writes scatter them over other nodes).
    unit: (u32, u64),
    /// When the read's tR ends and the data is in the register.
    ready: u64,
    /// When the next operation booked on the die starts and replaces it.
    until: u64,
}

/// A register that holds nothing.
const EMPTY_REGISTER: PageRegister = PageRegister {
    unit: (crate::ftl::UNMAPPED, u64::MAX),
    ready: 0,
    until: 0,
};

/// Collections in progress at an analytic steady state (see [`Ssd::stagger_collections`]):
/// the share still to run of each, as busy time, energy and pages moved and erased.
#[derive(Clone, Debug, Default)]
struct Carried {
    die_busy: Vec<(ResId, u64)>,
    energy: Energy,
    gc_units: u64,
    erased_units: u64,
}

/// Parameters to build an SSD.
pub struct SsdParams {
    /// Name.
    pub name: String,
    /// Usable bytes.
    pub size: u64,
    /// Controller cores.
    pub cores: u32,
    /// Per read command per core.
    pub command_ns: u64,
    /// Per write command per core.
    pub write_command_ns: u64,
    /// Unserialised latency.
    pub latency_ns: u64,
    /// Read datapath ceiling.
    pub read_bps: Option<f64>,
    /// Write datapath ceiling.
    pub write_bps: Option<f64>,
    /// Channels.
    pub channels: u32,
    /// Dies.
    pub dies: u32,
    /// Planes.
    pub planes: u32,
    /// Page bytes.
    pub page_bytes: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Blocks per plane.
    pub blocks_per_plane: u32,
    /// tR.
    pub read_ns: u64,
    /// tPROG.
    pub program_ns: u64,
    /// MLC: lower and upper pages differ in speed around the typical tR and tPROG.
    pub mlc_pages: bool,
    /// tBERS.
    pub erase_ns: u64,
    /// Channel bytes/s.
    pub chan_bps: f64,
    /// Write buffer bytes.
    pub buffer_bytes: u64,
    /// GC threshold in blocks per die.
    pub gc_free_blocks: u32,
    /// SandForce-style compression.
    pub compress: bool,
    /// Smallest stored fraction when compressing.
    pub min_stored: f64,
    /// TRIM honoured.
    pub trim: bool,
    /// Power law.
    pub power: Power,
    /// SLC write cache of a multi-bit array.
    pub slc: Option<SlcCache>,
}

/// Stored share of a buffer as an inline compressor would see it: 16-byte runs of zeros
/// compress away, anything else is kept. Cheap (one pass of 16-byte compares) and exact for the
/// workload generator's layouts (random bytes followed by zeros per 512-byte segment), which
/// zstd also compresses to within a few points (iolab-core data.rs tests).
pub fn stored_share(buf: &[u8]) -> f64 {
    if buf.is_empty() {
        return 1.0;
    }
    let mut zero = 0usize;
    let chunks = buf.chunks_exact(16);
    let n = chunks.len();
    for c in chunks {
        if c.iter().all(|&b| b == 0) {
            zero += 1;
        }
    }
    if n == 0 {
        return 1.0;
    }
    1.0 - zero as f64 / n as f64
}

/// A hard disk.
#[derive(Clone, Debug)]
pub struct Hdd {
    /// Name.
    pub name: String,
    res: ResId,
    /// Capacity.
    pub size: u64,
    rev_ns: u64,
    seek_track_ns: u64,
    seek_full_ns: u64,
    outer_npb: f64,
    inner_npb: f64,
    command_ns: u64,
    head: u64,
    last_end: u64,
    last_done: u64,
    rng: Rng,
    /// Power law.
    pub power: Power,
    /// Seek+transfer busy time.
    pub busy_ns: u64,
    /// Commands received and not started (NCQ), in arrival order.
    queue: Vec<HddCmd>,
    /// How many of them are the host's (not destages).
    host_queued: u32,
    /// A command is on the actuator: its completion starts the next.
    in_flight: bool,
    /// Commands the drive chooses among (its NCQ depth).
    reorder_window: u32,
    /// Write cache: bytes it holds for written data.
    cache_bytes: u64,
    /// Write cache: bytes acknowledged and not yet on the platters, but for those of the
    /// destage on the actuator, which leave at `destage_end`.
    dirty_bytes: u64,
    /// The destage on the actuator: its end and its bytes.
    destage_end: u64,
    destage_bytes: u64,
    /// Writes waiting for room in the write cache: tag, offset, length.
    cache_waiting: VecDeque<(u32, u64, u64)>,
}

/// A command queued in a hard disk.
#[derive(Clone, Copy, Debug)]
struct HddCmd {
    tag: u32,
    arrive: u64,
    offset: u64,
    len: u64,
    /// Bytes it sends up to the host (a read's data).
    host_bytes: u32,
    /// Writes data the drive has already acknowledged from its write cache.
    destage: bool,
}

/// How the head gets to a command's first sector.
#[derive(Clone, Copy, Debug)]
struct Positioning {
    /// Read look-ahead (or the write cache) streams it on from the previous command.
    streaming: bool,
    seek_ns: u64,
    rotation_ns: u64,
}

impl Hdd {
    /// Room in the write cache at `t` (the destage on the actuator frees its bytes at its end).
    fn cache_room(&self, t: u64) -> u64 {
        let leaving = if t < self.destage_end {
            self.destage_bytes
        } else {
            0
        };
        self.cache_bytes.saturating_sub(self.dirty_bytes + leaving)
    }

    /// Whether `[offset, offset + len)` lies within one write still waiting in the write cache
    /// for its destage (a read of it is served from the cache).
    fn holds_dirty(&self, offset: u64, len: u64) -> bool {
        self.dirty_bytes > 0
            && self
                .queue
                .iter()
                .any(|c| c.destage && c.offset <= offset && offset + len <= c.offset + c.len)
    }

    /// Takes a write into the write cache at `t` and queues its destage; returns when the
    /// drive acknowledges it.
    fn cache_write(&mut self, offset: u64, len: u64, t: u64) -> u64 {
        self.dirty_bytes += len;
        self.queue.push(HddCmd {
            tag: INTERNAL,
            arrive: t,
            offset,
            len,
            host_bytes: 0,
            destage: true,
        });
        t + self.command_ns
    }
}

/// Parameters to build an HDD.
pub struct HddParams {
    /// Name.
    pub name: String,
    /// Capacity.
    pub size: u64,
    /// RPM.
    pub rpm: f64,
    /// Track-to-track seek.
    pub seek_track_ns: u64,
    /// Full-stroke seek.
    pub seek_full_ns: u64,
    /// Outer media rate.
    pub outer_bps: f64,
    /// Inner media rate.
    pub inner_bps: f64,
    /// Command overhead.
    pub command_ns: u64,
    /// Write cache bytes (0: written through).
    pub write_cache_bytes: u64,
    /// Commands it queues and reorders (NCQ depth).
    pub queue_depth: u32,
    /// Seed of the rotational position.
    pub seed: u64,
    /// Power law.
    pub power: Power,
}

/// A member device.
#[derive(Clone, Debug)]
pub enum Dev {
    /// An SSD.
    Ssd(Box<Ssd>),
    /// A hard disk.
    Hdd(Box<Hdd>),
}

impl Dev {
    /// Usable bytes.
    pub fn size(&self) -> u64 {
        match self {
            Dev::Ssd(s) => s.size,
            Dev::Hdd(h) => h.size,
        }
    }
}

/// A device with its flattened host path.
#[derive(Clone, Debug)]
pub struct Leaf {
    /// Pipes from the CPU down to the device.
    pub down: Vec<Pipe>,
    /// Pipes from the device up to the CPU.
    pub up: Vec<Pipe>,
    /// Fixed latency on the way down (port, HBA, chip).
    pub lat_down_ns: u64,
    /// Fixed latency on the way up.
    pub lat_up_ns: u64,
    /// Serialised command stages before the device (HBA, RAID chip): resource and time.
    pub cmd_stages: Vec<(ResId, u64)>,
    /// SATA link occupancy per command (command, DMA setup and status FIS handshakes).
    pub sata_cmd: Option<(ResId, u64)>,
    /// The device.
    pub dev: Dev,
    /// Path description, device first.
    pub describe: Vec<String>,
}

/// How a volume spreads over its members.
#[derive(Clone, Debug)]
pub enum Vol {
    /// One device.
    Leaf(u32),
    /// RAID-0 or JBOD over members.
    Raid {
        /// Stripe bytes (RAID-0) or `None` (JBOD: concatenation).
        stripe: Option<u64>,
        /// Bytes of each member used.
        member_bytes: u64,
        /// Members.
        members: Vec<Vol>,
    },
    /// Tiered volume or cache.
    Tier(Box<Tier>),
}

/// A tiered volume (StoreMI-like) or a cache (RST-like).
#[derive(Clone, Debug)]
pub struct Tier {
    /// Fast member.
    pub fast: Vol,
    /// Slow member.
    pub slow: Vol,
    /// True: tier (capacity is the sum, extents move); false: cache (a copy).
    pub tiering: bool,
    /// Extent bytes.
    pub extent: u64,
    /// Accesses before promotion.
    pub promote_after: u32,
    /// Extents the fast member can hold.
    pub fast_slots: u64,
    /// Logical extent → (on fast, slot).
    loc: Vec<(bool, u32)>,
    /// Which logical extent lives in each fast slot.
    slot_owner: Vec<u32>,
    /// Access counts.
    hits: Vec<u8>,
    /// Tier mode: extents found hot, waiting for the mover.
    hot: VecDeque<u32>,
    /// Eviction order of the fast slots.
    clock: SecondChance,
    /// Cache mode: which 4 KiB blocks of each fast slot hold data (a cache copies what was
    /// read, not whole lines).
    valid: Vec<u32>,
    /// Slow-member extents.
    pub slow_extents: u64,
    /// Promotions done.
    pub promotions: u64,
    /// Host RAM in front of both members, if any.
    pub ram: Option<RamCache>,
}

/// Second-chance ("clock") replacement over a fixed set of slots.
#[derive(Clone, Debug)]
struct SecondChance {
    hand: usize,
    referenced: Vec<bool>,
}

impl SecondChance {
    fn new(slots: usize) -> SecondChance {
        SecondChance {
            hand: 0,
            referenced: vec![false; slots],
        }
    }

    fn touch(&mut self, slot: usize) {
        self.referenced[slot] = true;
    }

    /// The next slot that is `free` or unused since the hand last passed it; slots passed on
    /// the way lose their reference. Needs at least one slot.
    fn victim(&mut self, free: impl Fn(usize) -> bool) -> usize {
        loop {
            let s = self.hand;
            self.hand = (self.hand + 1) % self.referenced.len();
            if free(s) || !self.referenced[s] {
                return s;
            }
            self.referenced[s] = false;
        }
    }
}

/// Line size of a RAM layer: the host's page.
const RAM_LINE: u64 = 4096;
/// An empty RAM slot.
const NO_LINE: u64 = u64::MAX;

/// Host RAM in front of a tiered volume (StoreMI's optional RAM layer): 4 KiB lines with clock
/// eviction. Written through: a write updates the RAM copy and goes on to the volume as well,
/// so a power loss costs nothing (no source says StoreMI holds writes in RAM only). Reads that
/// miss keep their lines on the way up. A hit costs a memory copy.
#[derive(Clone, Debug)]
pub struct RamCache {
    /// The memory copy (host DRAM bandwidth for a copy).
    pub copy: Pipe,
    slot_of: HashMap<u64, u32>,
    line_of: Vec<u64>,
    clock: SecondChance,
}

impl RamCache {
    /// An empty RAM layer of `bytes` (whole lines) copying through `copy`.
    pub fn new(copy: Pipe, bytes: u64) -> RamCache {
        let slots = (bytes / RAM_LINE) as usize;
        RamCache {
            copy,
            slot_of: HashMap::with_capacity(slots),
            line_of: vec![NO_LINE; slots],
            clock: SecondChance::new(slots),
        }
    }

    /// Capacity in bytes.
    pub fn bytes(&self) -> u64 {
        self.line_of.len() as u64 * RAM_LINE
    }

    /// Whether `line` is held; a hit marks it recently used.
    fn hit(&mut self, line: u64) -> bool {
        match self.slot_of.get(&line) {
            Some(&s) => {
                self.clock.touch(s as usize);
                true
            }
            None => false,
        }
    }

    /// Holds `line`, evicting the first line the clock finds unreferenced.
    fn keep(&mut self, line: u64) {
        if self.line_of.is_empty() || self.hit(line) {
            return;
        }
        let lines = &self.line_of;
        let slot = self.clock.victim(|s| lines[s] == NO_LINE);
        let old = std::mem::replace(&mut self.line_of[slot], line);
        if old != NO_LINE {
            self.slot_of.remove(&old);
        }
        self.slot_of.insert(line, slot as u32);
        self.clock.touch(slot);
    }
}

impl Tier {
    /// A tier or cache with every extent on the slow member at first (tier mode: extents past
    /// the slow member's end start on the fast one).
    pub fn new(
        fast: Vol,
        slow: Vol,
        tiering: bool,
        extent: u64,
        promote_after: u32,
        fast_bytes: u64,
        slow_bytes: u64,
    ) -> Tier {
        let fast_slots = fast_bytes / extent;
        let slow_extents = slow_bytes / extent;
        let logical = if tiering {
            slow_extents + fast_slots
        } else {
            slow_extents
        };
        let mut loc = Vec::with_capacity(logical as usize);
        let mut slot_owner = vec![u32::MAX; fast_slots as usize];
        for e in 0..logical {
            if e < slow_extents {
                loc.push((false, e as u32));
            } else {
                let s = (e - slow_extents) as u32;
                slot_owner[s as usize] = e as u32;
                loc.push((true, s));
            }
        }
        Tier {
            fast,
            slow,
            tiering,
            extent,
            promote_after,
            fast_slots,
            loc,
            slot_owner,
            hits: vec![0; logical as usize],
            hot: VecDeque::new(),
            clock: SecondChance::new(fast_slots as usize),
            valid: if tiering {
                Vec::new()
            } else {
                vec![0; fast_slots as usize]
            },
            slow_extents,
            promotions: 0,
            ram: None,
        }
    }

    /// Logical bytes.
    pub fn size(&self) -> u64 {
        self.loc.len() as u64 * self.extent
    }

    /// Whether the fast member can serve `len` bytes at `within` of the extent in `slot`: a
    /// tier moved the whole extent; a cache needs every 4 KiB block touched.
    fn holds(&self, slot: u32, within: u64, len: u64) -> bool {
        if self.tiering {
            return true;
        }
        let first = within / 4096;
        let end = (within + len).div_ceil(4096);
        let touched = blocks(first, end);
        self.valid[slot as usize] & touched == touched
    }

    /// A fast slot for extent `e`, taking it from the extent the clock picks (which goes back
    /// to being served by the slow member: in cache mode its own copy there).
    /// Returns the slot and the extent it displaced.
    fn claim_slot(&mut self, e: u64) -> (u32, Option<u32>) {
        let owners = &self.slot_owner;
        let slot = self.clock.victim(|s| owners[s] == u32::MAX) as u32;
        let old = std::mem::replace(&mut self.slot_owner[slot as usize], e as u32);
        let old = (old != u32::MAX).then_some(old);
        if let Some(old) = old {
            if !self.tiering {
                self.loc[old as usize] = (false, old);
                self.valid[slot as usize] = 0;
            }
            self.hits[old as usize] = 0;
        }
        self.clock.touch(slot as usize);
        (slot, old)
    }
}

/// A mask of 4 KiB blocks `first..end` of a cache line (at most 32 blocks: 128 KiB lines).
fn blocks(first: u64, end: u64) -> u32 {
    if end <= first {
        return 0;
    }
    (((1u64 << (end - first)) - 1) << first) as u32
}

/// The 4 KiB blocks wholly inside `within..within + len` of a cache line: what a copy of
/// those bytes makes valid.
fn whole_blocks(within: u64, len: u64) -> u32 {
    blocks(within.div_ceil(4096), (within + len) / 4096)
}

/// A read chunk in flight between its die and the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct ChunkEv {
    /// When its last byte has left the NAND channel (its first bytes go on up before that).
    tail: u64,
    tag: u32,
    leaf: u32,
    /// The NAND channel it leaves by, [`NO_CHAN`], or [`FROM_HDD_CACHE`].
    chan: u32,
    nand_bytes: u32,
    host_bytes: u32,
}

/// Per request state, indexed by tag.
#[derive(Clone, Copy, Debug, Default)]
struct Io {
    pending: u32,
    done: u64,
    fin_ns: u64,
}

/// Tag of internal I/Os (tier migrations) whose completion nobody waits for.
const INTERNAL: u32 = u32::MAX;
/// No channel (unmapped read or HDD).
const NO_CHAN: u32 = u32::MAX;
/// An HDD's read served from its write cache: the actuator was not involved.
const FROM_HDD_CACHE: u32 = u32::MAX - 1;

/// The whole model of one target.
#[derive(Debug)]
pub struct World {
    /// Every resource.
    pub res: Vec<Res>,
    /// Every device with its path.
    pub leaves: Vec<Leaf>,
    /// The volume the host sees.
    pub vol: Vol,
    /// Software latency of the driver stack per I/O.
    pub driver_ns: u64,
    /// Commands the host keeps outstanding at most (AHCI 32).
    pub max_outstanding: u32,
    ios: Vec<Io>,
    events: TimeQueue<ChunkEv>,
    done: TimeQueue<u32>,
    waiting: std::collections::VecDeque<(u32, Direction, u64, u64)>,
    outstanding: u32,
    /// Compressed share of each tag's data, set by the target before submit.
    pub stored_share: Vec<f64>,
    /// Requests rejected past the end.
    pub errors: u64,
    /// The LPNs of the last [`NODE_LAG`] requests planned, for [`World::prefetch`].
    planned_lpns: [u64; NODE_LAG],
    /// Requests planned so far (the ring's position).
    planned: u32,
}

/// How many requests after starting to load a request's map entry [`World::prefetch`] starts
/// loading the block node it names: by then the entry is in the cache. The driver plans a
/// [`SimTarget`](crate::SimTarget)'s requests in batches of eight (half of what it plans
/// ahead), so this reaches back into the batch before.
const NODE_LAG: usize = 8;

impl World {
    /// A world over `res`, `leaves` and `vol`.
    pub fn new(
        res: Vec<Res>,
        leaves: Vec<Leaf>,
        vol: Vol,
        driver_ns: u64,
        max_outstanding: u32,
    ) -> World {
        World {
            res,
            leaves,
            vol,
            driver_ns,
            max_outstanding: max_outstanding.max(1),
            ios: Vec::new(),
            events: TimeQueue::default(),
            done: TimeQueue::default(),
            waiting: Default::default(),
            outstanding: 0,
            stored_share: Vec::new(),
            errors: 0,
            planned_lpns: [0; NODE_LAG],
            planned: 0,
        }
    }

    /// Logical size.
    pub fn size(&self) -> u64 {
        vol_size(&self.vol, &self.leaves)
    }

    /// Sizes the per-tag tables.
    pub fn prepare(&mut self, slots: u32, now: u64) {
        self.ios = vec![Io::default(); slots as usize];
        self.stored_share = vec![1.0; slots as usize];
        // The last job's requests are gone; background work (a tier's copies, a hard disk's
        // destages) carries on into this one.
        self.events.retain(|ev| ev.tag == INTERNAL);
        self.done.clear();
        self.waiting.clear();
        self.outstanding = 0;
        for li in 0..self.leaves.len() {
            let busy = self.events.items().any(|ev| ev.leaf == li as u32);
            if let Dev::Hdd(h) = &mut self.leaves[li].dev {
                h.in_flight = busy;
                h.queue.retain(|c| c.tag == INTERNAL);
                // Acknowledged to nobody now, but written all the same.
                for (_, offset, len) in std::mem::take(&mut h.cache_waiting) {
                    h.cache_write(offset, len, now);
                }
                self.hdd_dispatch(li as u32, now);
            }
        }
    }

    /// Earliest time anything is busy until (for idling between jobs).
    pub fn quiet_time(&self) -> u64 {
        let gc_end = self
            .leaves
            .iter()
            .filter_map(|l| match &l.dev {
                Dev::Ssd(ssd) => ssd.gc.iter().map(|g| g.end).max(),
                Dev::Hdd(_) => None,
            })
            .max()
            .unwrap_or(0);
        self.res
            .iter()
            .map(|r| r.busy_until)
            .max()
            .unwrap_or(0)
            .max(gc_end)
    }

    /// Submits a host request at `t`.
    pub fn submit(&mut self, tag: u32, dir: Direction, offset: u64, len: u64, t: u64) {
        if self.outstanding >= self.max_outstanding {
            self.waiting.push_back((tag, dir, offset, len));
            return;
        }
        self.start(tag, dir, offset, len, t);
    }

    fn start(&mut self, tag: u32, dir: Direction, offset: u64, len: u64, t: u64) {
        self.outstanding += 1;
        let half = self.driver_ns / 2;
        let io = &mut self.ios[tag as usize];
        io.pending = 1; // held until the split is done, so early chunks cannot complete it
        io.done = t;
        io.fin_ns = self.driver_ns - half;
        if let Vol::Leaf(i) = self.vol {
            // A plain drive: nothing of the volume to borrow (moving the volume out and back,
            // and dropping its placeholder, cost about 63 instructions per request).
            self.leaf_submit(i, tag, dir, offset, len, t + half);
        } else {
            let mut vol = std::mem::replace(&mut self.vol, Vol::Leaf(0));
            self.vol_submit(&mut vol, tag, dir, offset, len, t + half);
            self.vol = vol;
        }
        self.chunk_done(tag, t + half);
    }

    fn vol_submit(
        &mut self,
        vol: &mut Vol,
        tag: u32,
        dir: Direction,
        offset: u64,
        len: u64,
        t: u64,
    ) {
        match vol {
            Vol::Leaf(i) => self.leaf_submit(*i, tag, dir, offset, len, t),
            Vol::Raid {
                stripe,
                member_bytes,
                members,
            } => {
                let n = members.len() as u64;
                match *stripe {
                    Some(s) => {
                        // Per member, the pieces of this request are contiguous in member space:
                        // coalesce them into one sub-request each.
                        let mut parts: Vec<(u64, u64, u64)> = Vec::new(); // member, off, len
                        let mut off = offset;
                        let end = offset + len;
                        while off < end {
                            let k = off / s;
                            let in_stripe = off % s;
                            let piece = (s - in_stripe).min(end - off);
                            let m = k % n;
                            let moff = (k / n) * s + in_stripe;
                            match parts.iter_mut().find(|p| p.0 == m && p.1 + p.2 == moff) {
                                Some(p) => p.2 += piece,
                                None => parts.push((m, moff, piece)),
                            }
                            off += piece;
                        }
                        for (m, moff, l) in parts {
                            self.vol_submit(&mut members[m as usize], tag, dir, moff, l, t);
                        }
                    }
                    None => {
                        let mut off = offset;
                        let end = offset + len;
                        while off < end {
                            let m = (off / *member_bytes).min(n - 1);
                            let moff = off - m * *member_bytes;
                            let piece = (*member_bytes - moff).min(end - off);
                            self.vol_submit(&mut members[m as usize], tag, dir, moff, piece, t);
                            off += piece;
                        }
                    }
                }
            }
            Vol::Tier(tier) => self.tier_submit(tier, tag, dir, offset, len, t),
        }
    }

    /// A request to a tiered volume: what its RAM layer holds comes from RAM, the rest from
    /// the members.
    fn tier_submit(
        &mut self,
        tier: &mut Tier,
        tag: u32,
        dir: Direction,
        offset: u64,
        len: u64,
        t: u64,
    ) {
        let Some(ram) = tier.ram.as_mut() else {
            return self.tier_place(tier, tag, dir, offset, len, t);
        };
        let end = offset + len;
        let (mut hit, mut misses) = (0, Vec::<(u64, u64)>::new());
        let mut line = offset / RAM_LINE;
        while line * RAM_LINE < end {
            let lo = (line * RAM_LINE).max(offset);
            let hi = ((line + 1) * RAM_LINE).min(end);
            if dir == Direction::Read && ram.hit(line) {
                hit += hi - lo;
            } else {
                ram.keep(line);
                match misses.last_mut() {
                    Some(m) if m.0 + m.1 == lo => m.1 += hi - lo,
                    _ => misses.push((lo, hi - lo)),
                }
            }
            line += 1;
        }
        let copy = std::slice::from_ref(&ram.copy);
        if hit > 0 {
            let done = transfer(&mut self.res, copy, t, hit);
            self.chunk_add(tag, done);
        }
        // What goes to the members is copied into RAM alongside (off the request's path).
        transfer(&mut self.res, copy, t, len - hit);
        for (off, l) in misses {
            self.tier_place(tier, tag, dir, off, l, t);
        }
    }

    /// A request to the members of a tiered volume.
    fn tier_place(
        &mut self,
        tier: &mut Tier,
        tag: u32,
        dir: Direction,
        offset: u64,
        len: u64,
        t: u64,
    ) {
        let mut off = offset;
        let end = offset + len;
        while off < end {
            let e = off / tier.extent;
            let within = off % tier.extent;
            let piece = (tier.extent - within).min(end - off);
            let (on_fast, slot) = tier.loc[e as usize];
            // A cache writes through to a line it has, whatever it holds of it yet.
            if on_fast && (dir == Direction::Write || tier.holds(slot, within, piece)) {
                tier.clock.touch(slot as usize);
                let fo = slot as u64 * tier.extent + within;
                let mut f = std::mem::replace(&mut tier.fast, Vol::Leaf(0));
                self.vol_submit(&mut f, tag, dir, fo, piece, t);
                tier.fast = f;
                if !tier.tiering && dir == Direction::Write {
                    let mut s = std::mem::replace(&mut tier.slow, Vol::Leaf(0));
                    self.vol_submit(&mut s, tag, dir, e * tier.extent + within, piece, t);
                    tier.slow = s;
                    tier.valid[slot as usize] |= whole_blocks(within, piece);
                }
            } else {
                // From the slow member: a tier's extent where it lies, a cache's own copy.
                let so = if tier.tiering { slot as u64 } else { e } * tier.extent + within;
                let mut s = std::mem::replace(&mut tier.slow, Vol::Leaf(0));
                self.vol_submit(&mut s, tag, dir, so, piece, t);
                tier.slow = s;
                let h = &mut tier.hits[e as usize];
                *h = h.saturating_add(1);
                if *h as u32 >= tier.promote_after && tier.fast_slots > 0 {
                    if tier.tiering {
                        if *h as u32 == tier.promote_after {
                            tier.hot.push_back(e as u32);
                        }
                    } else {
                        self.cache_fill(tier, e, within, piece, t);
                    }
                }
            }
            off += piece;
        }
        if !tier.hot.is_empty() {
            self.run_mover(tier, t);
        }
    }

    /// Tier mode: the mover promotes the extents found hot, in the order found, in the
    /// background: it starts the next copy only when none of its copies waits in the slow
    /// member's queue, so the host's commands are never stuck behind a backlog of copies.
    fn run_mover(&mut self, tier: &mut Tier, t: u64) {
        while !self.migration_queued(&tier.slow) {
            let Some(e) = tier.hot.pop_front() else {
                break;
            };
            if !tier.loc[e as usize].0 {
                self.promote(tier, e as u64, t);
            }
        }
    }

    /// Runs the movers of the tiers in `vol` at `t`.
    fn run_movers(&mut self, vol: &mut Vol, t: u64) {
        match vol {
            Vol::Leaf(_) => {}
            Vol::Raid { members, .. } => {
                for m in members {
                    self.run_movers(m, t);
                }
            }
            Vol::Tier(tier) => {
                if !tier.hot.is_empty() {
                    self.run_mover(tier, t);
                }
            }
        }
    }

    /// Whether internal copies are still waiting in a hard disk of `vol`.
    fn migration_queued(&self, vol: &Vol) -> bool {
        match vol {
            Vol::Leaf(i) => match &self.leaves[*i as usize].dev {
                Dev::Hdd(h) => h.queue.iter().any(|c| c.tag == INTERNAL && !c.destage),
                Dev::Ssd(_) => false,
            },
            Vol::Raid { members, .. } => members.iter().any(|m| self.migration_queued(m)),
            Vol::Tier(t) => self.migration_queued(&t.slow),
        }
    }

    /// Tier mode: moves extent `e` to the fast member, the extent it displaces to `e`'s place
    /// on the slow member; the copies run in the background as internal I/O on both members.
    fn promote(&mut self, tier: &mut Tier, e: u64, t: u64) {
        let (_, slow_slot) = tier.loc[e as usize];
        let (slot, old) = tier.claim_slot(e);
        let x = tier.extent;
        let mut f = std::mem::replace(&mut tier.fast, Vol::Leaf(0));
        let mut s = std::mem::replace(&mut tier.slow, Vol::Leaf(0));
        let (fast_at, slow_at) = (slot as u64 * x, slow_slot as u64 * x);
        self.vol_submit(&mut s, INTERNAL, Direction::Read, slow_at, x, t);
        self.vol_submit(&mut f, INTERNAL, Direction::Write, fast_at, x, t);
        if let Some(old) = old {
            self.vol_submit(&mut f, INTERNAL, Direction::Read, fast_at, x, t);
            self.vol_submit(&mut s, INTERNAL, Direction::Write, slow_at, x, t);
            tier.loc[old as usize] = (false, slow_slot);
        }
        tier.fast = f;
        tier.slow = s;
        tier.loc[e as usize] = (true, slot);
        tier.promotions += 1;
    }

    /// Cache mode: copies to the fast member the `len` bytes at `within` of extent `e` that
    /// were just read from or written to the slow member (the data is in hand: nothing more
    /// is read from the slow member), claiming a line for `e` first if it has none.
    fn cache_fill(&mut self, tier: &mut Tier, e: u64, within: u64, len: u64, t: u64) {
        let mask = whole_blocks(within, len);
        if mask == 0 {
            return;
        }
        let slot = match tier.loc[e as usize] {
            (true, slot) => slot,
            _ => {
                let (slot, _) = tier.claim_slot(e);
                tier.loc[e as usize] = (true, slot);
                tier.promotions += 1;
                slot
            }
        };
        let mut f = std::mem::replace(&mut tier.fast, Vol::Leaf(0));
        let at = slot as u64 * tier.extent + within;
        self.vol_submit(&mut f, INTERNAL, Direction::Write, at, len, t);
        tier.fast = f;
        tier.valid[slot as usize] |= mask;
    }

    fn leaf_submit(&mut self, li: u32, tag: u32, dir: Direction, offset: u64, len: u64, t: u64) {
        let leaf = &mut self.leaves[li as usize];
        let res = &mut self.res[..];
        // Down the path: the command (and a write's data) crosses every pipe.
        let mut at = t + leaf.lat_down_ns;
        if let Some((sata, ns)) = leaf.sata_cmd {
            // The half-duplex link may be booked ahead for data of commands already queued
            // (NCQ). Data moves in FISes of at most 8 KiB with the link idle between them,
            // which is where a new command's FISes go: the command waits for the FIS in
            // flight, not for the whole booking, and its handshakes push later bookings back.
            let fis_ns = leaf.down.last().map_or(0, |p| p.packet_ns);
            let r = &mut res[sata as usize];
            if r.busy_until > at + fis_ns {
                r.busy_until += ns;
                r.busy_ns += ns;
                at += fis_ns + ns;
            } else {
                at = reserve(res, sata, at, ns);
            }
        }
        for &(r, ns) in &leaf.cmd_stages {
            at = reserve(res, r, at, ns);
        }
        if dir == Direction::Write {
            // The data streams from the host link straight into the drive's write datapath
            // (cut-through: a SATA data FIS is at most 8 KiB, so the drive never holds a whole
            // large request before passing it on).
            let write_path = match &leaf.dev {
                Dev::Ssd(ssd) => ssd.write_path.as_ref(),
                Dev::Hdd(_) => None,
            };
            at = transfer_through(res, leaf.down.iter().chain(write_path), at, at, len);
        } else {
            for p in &leaf.down {
                at += p.hop_ns;
            }
        }
        let lat_up = leaf.lat_up_ns;
        let share = if tag == INTERNAL {
            1.0
        } else {
            self.stored_share[tag as usize]
        };
        match &mut leaf.dev {
            Dev::Ssd(ssd) => {
                let cmd = if dir == Direction::Write {
                    ssd.write_command_ns
                } else {
                    ssd.command_ns
                };
                let at = reserve_any(res, &ssd.cores, at, cmd) + ssd.latency_ns;
                match dir {
                    Direction::Write => {
                        let done = ssd_write(ssd, res, offset, len, at, share);
                        let done = status_up(&leaf.up, lat_up, done);
                        self.chunk_add(tag, done);
                    }
                    Direction::Read => {
                        let first = offset / 4096;
                        let last = (offset + len.max(1) - 1) / 4096;
                        let unit_lpns = ssd.unit_bytes / 4096;
                        ssd.read_bytes += len;
                        // Whether any data is in the buffer (a read-only run has none).
                        let any_buffered = ssd.buffered.any_at(at);
                        let mut lpn = first;
                        while lpn <= last {
                            // A chunk: consecutive LPNs of one program unit on one die, or
                            // one LPN still in the buffer, where the controller reads it
                            // from DRAM (it is not on NAND yet) or, for sectors a partial
                            // rewrite left out, from its old copy.
                            let from = if any_buffered {
                                ssd.read_from(lpn, offset, len, at)
                            } else {
                                ReadFrom::Mapped
                            };
                            let (block, mut nand) = match from {
                                ReadFrom::Buffer => (None, 0),
                                ReadFrom::OldCopy(old) => {
                                    (Some((old.node, old.die)), old.bytes as u64)
                                }
                                ReadFrom::Mapped => {
                                    (ssd.ftl.block_of(lpn), ssd.ftl.stored_bytes(lpn) as u64)
                                }
                            };
                            let die = block.map(|(_, d)| d);
                            let mut n = 1;
                            while from == ReadFrom::Mapped
                                && lpn + n <= last
                                && (lpn + n) % unit_lpns != 0
                                && ssd.ftl.die_of(lpn + n) == die
                                && !(any_buffered
                                    && ssd.read_from(lpn + n, offset, len, at) != ReadFrom::Mapped)
                            {
                                nand += ssd.ftl.stored_bytes(lpn + n) as u64;
                                n += 1;
                            }
                            let lo = (lpn * 4096).max(offset);
                            let hi = ((lpn + n) * 4096).min(offset + len);
                            let host = hi - lo;
                            if from == ReadFrom::Buffer {
                                ssd.buffer_read_bytes += host;
                            }
                            let (ready, chan) = match block {
                                Some((node, d)) => {
                                    // The die is busy for tR only: READ PAGE CACHE RANDOM
                                    // (00h-31h, in Micron's parallel NAND command set and its
                                    // public Verilog model) moves the page to the cache
                                    // register, so the die reads its next page while this one
                                    // is clocked out over the channel.
                                    // Which page of its wordline an LPN landed in is not
                                    // tracked: a hash of its program unit stands in, so half
                                    // of every die's reads are upper pages (the unit number's
                                    // own parity would give whole dies one kind when units
                                    // are striped over an even number of dies).
                                    let unit = lpn / unit_lpns;
                                    let t_r = ssd.read_ns[upper_page(unit)];
                                    let end = ssd.read_unit(res, d, (node, unit), at, t_r);
                                    (end, ssd.chan_of(d))
                                }
                                // Unwritten data is not on NAND: the controller returns zeros.
                                None => (at, NO_CHAN),
                            };
                            if tag != INTERNAL {
                                self.ios[tag as usize].pending += 1;
                            }
                            self.events.push(
                                ready,
                                ChunkEv {
                                    tail: 0,
                                    tag,
                                    leaf: li,
                                    chan,
                                    nand_bytes: if die.is_some() { nand as u32 } else { 0 },
                                    host_bytes: host as u32,
                                },
                            );
                            lpn += n;
                        }
                    }
                }
            }
            Dev::Hdd(h) => {
                // A write the cache takes is acknowledged once in it (and written later, in
                // the drive's own order); one it has no room for waits until destages make it.
                let cached = dir == Direction::Write && len <= h.cache_bytes;
                if cached && h.cache_waiting.is_empty() && h.cache_room(at) >= len {
                    let done = h.cache_write(offset, len, at);
                    let done = status_up(&leaf.up, lat_up, done);
                    self.chunk_add(tag, done);
                } else {
                    if tag != INTERNAL {
                        self.ios[tag as usize].pending += 1;
                    }
                    if cached {
                        h.cache_waiting.push_back((tag, offset, len));
                    } else if dir == Direction::Read && h.holds_dirty(offset, len) {
                        // Written and not yet destaged: the data is in the write cache, and
                        // drives serve reads of it from there (Seagate's SCSI product manuals,
                        // "Caching write data": written data is kept for later read hits).
                        // Data destaged since is not tracked, so such a read goes to the
                        // platters.
                        self.events.push(
                            at + h.command_ns,
                            ChunkEv {
                                tail: 0,
                                tag,
                                leaf: li,
                                chan: FROM_HDD_CACHE,
                                nand_bytes: 0,
                                host_bytes: len as u32,
                            },
                        );
                    } else {
                        h.host_queued += 1;
                        h.queue.push(HddCmd {
                            tag,
                            arrive: at,
                            offset,
                            len,
                            host_bytes: if dir == Direction::Read {
                                len as u32
                            } else {
                                0
                            },
                            destage: false,
                        });
                    }
                }
                self.hdd_dispatch(li, at);
            }
        }
    }

    #[inline]
    fn chunk_add(&mut self, tag: u32, done: u64) {
        if tag == INTERNAL {
            return;
        }
        let io = &mut self.ios[tag as usize];
        io.done = io.done.max(done);
    }

    #[inline]
    fn chunk_done(&mut self, tag: u32, at: u64) {
        if tag == INTERNAL {
            return;
        }
        let io = &mut self.ios[tag as usize];
        io.done = io.done.max(at);
        io.pending -= 1;
        if io.pending == 0 {
            let t = io.done + io.fin_ns;
            self.done.push(t, tag);
        }
    }

    /// Starts the next queued command of hard disk `li` if its actuator is free at `t`. Native
    /// command queuing lets the drive choose: of the commands that have arrived, the one it
    /// reaches soonest (seek plus rotational wait); with one command queued that is FIFO.
    fn hdd_dispatch(&mut self, li: u32, t: u64) {
        let Dev::Hdd(h) = &mut self.leaves[li as usize].dev else {
            return;
        };
        let Some(first_arrival) = h.queue.iter().map(|c| c.arrive).min() else {
            return;
        };
        if h.in_flight {
            return;
        }
        let start = t
            .max(self.res[h.res as usize].busy_until)
            .max(first_arrival);
        // The drive picks the command it reaches first among the host's (NCQ bounds them)
        // and the oldest of its write cache's destages, as many as NCQ lets the host queue
        // (how far firmware looks into a full cache is not published). A host command never
        // waits for the whole backlog of acknowledged writes to go first.
        let mut best: Option<(usize, Positioning)> = None;
        let (mut destages_seen, mut hosts_seen) = (0, 0);
        for i in 0..h.queue.len() {
            if destages_seen >= h.reorder_window && hosts_seen == h.host_queued {
                break;
            }
            let cmd = h.queue[i];
            if !cmd.destage {
                hosts_seen += 1;
            }
            if cmd.arrive > start {
                continue;
            }
            if cmd.destage {
                if destages_seen >= h.reorder_window {
                    continue;
                }
                destages_seen += 1;
            }
            let pos = hdd_position(h, cmd.offset, start);
            let reach = |p: &Positioning| p.seek_ns + p.rotation_ns;
            if best.is_none_or(|(_, b)| reach(&pos) < reach(&b)) {
                best = Some((i, pos));
            }
        }
        let (i, pos) = best.expect("the first arrival has arrived by start");
        let cmd = h.queue.remove(i);
        if !cmd.destage {
            h.host_queued -= 1;
        }
        let end = hdd_service(h, &mut self.res, cmd.offset, cmd.len, start, pos);
        h.in_flight = true;
        // Writes waiting for room in the write cache go in as a destage ends.
        let mut admitted = Vec::new();
        if cmd.destage {
            h.dirty_bytes -= cmd.len;
            (h.destage_end, h.destage_bytes) = (end, cmd.len);
            while let Some(&(tag, offset, len)) = h.cache_waiting.front() {
                if h.cache_room(end) < len {
                    break;
                }
                h.cache_waiting.pop_front();
                admitted.push((tag, h.cache_write(offset, len, end)));
            }
        }
        self.events.push(
            end,
            ChunkEv {
                tail: 0,
                tag: cmd.tag,
                leaf: li,
                chan: NO_CHAN,
                nand_bytes: 0,
                host_bytes: cmd.host_bytes,
            },
        );
        for (tag, done) in admitted {
            let leaf = &self.leaves[li as usize];
            let done = status_up(&leaf.up, leaf.lat_up_ns, done);
            self.chunk_done(tag, done);
        }
    }

    fn process(&mut self, t: u64, ev: ChunkEv) {
        if let Dev::Hdd(h) = &mut self.leaves[ev.leaf as usize].dev {
            if ev.chan != FROM_HDD_CACHE {
                h.in_flight = false;
                self.hdd_dispatch(ev.leaf, t);
            }
        }
        let leaf = &mut self.leaves[ev.leaf as usize];
        let res = &mut self.res[..];
        let at = t;
        let mut read_path = None;
        if let Dev::Ssd(ssd) = &mut leaf.dev {
            if ev.chan != NO_CHAN {
                // Data-out over the channel; the trip up the host path is a second event at
                // its end, so the links above see the chunks in the order they really leave
                // the channels (booking them now, behind chunks still waiting for their
                // channel, would hold up chunks and commands that come earlier).
                // The controller streams the data on as each ECC codeword is corrected, so
                // the host side can start once the first 4 KiB sector is across (cut-through)
                // and finishes no earlier than the channel.
                let d = (ev.nand_bytes as f64 * ssd.chan_ns_per_byte) as u64;
                let first = (ev.nand_bytes.min(4096) as f64 * ssd.chan_ns_per_byte) as u64;
                let end = ssd.read_channel(res, ev.chan, at, d);
                self.events.push(
                    end - d + first,
                    ChunkEv {
                        tail: end,
                        chan: NO_CHAN,
                        nand_bytes: 0,
                        ..ev
                    },
                );
                return;
            }
            read_path = ssd.read_path.as_ref();
        }
        // Cut-through from the drive's read datapath onto the host link.
        let at = transfer_through(
            res,
            read_path.into_iter().chain(leaf.up.iter()),
            at,
            ev.tail,
            ev.host_bytes as u64,
        ) + leaf.lat_up_ns;
        self.chunk_done(ev.tag, at);
    }

    /// The next completion if it happens at or before `limit`: processes events in time order
    /// until the earliest completion is known to be the next thing to happen.
    pub fn next_completion(&mut self, limit: u64) -> Option<(u32, u64)> {
        loop {
            let ev_t = self.events.peek_time();
            let done_t = self.done.peek_time();
            match (ev_t, done_t) {
                (Some(e), d) if d.is_none_or(|d| e < d) => {
                    if e > limit {
                        return None;
                    }
                    let (t, ev) = self.events.pop().expect("peeked");
                    self.process(t, ev);
                }
                (_, Some(d)) => {
                    if d > limit {
                        return None;
                    }
                    return Some(self.complete_next());
                }
                (None, None) => return None,
                _ => unreachable!("covered above"),
            }
        }
    }

    /// The next completion if it is due at `t` itself, right after one at `t` was handed out.
    /// Handing it out now changes no result: every event before `t` has been processed, a
    /// completion goes before an event of the same instant, and what the host submits in reply
    /// at `t` cannot finish before it. The host then submits its next requests as one batch
    /// instead of one by one.
    #[inline]
    pub fn next_completion_at(&mut self, t: u64) -> Option<(u32, u64)> {
        let ready =
            self.done.peek_time() == Some(t) && self.events.peek_time().is_none_or(|e| e >= t);
        ready.then(|| self.complete_next())
    }

    /// Hands out the earliest completion; a request waiting for a slot starts in its place.
    #[inline(always)] // every completion's path
    fn complete_next(&mut self) -> (u32, u64) {
        let (t, tag) = self.done.pop().expect("a completion is due");
        self.outstanding -= 1;
        if let Some((wt, wd, wo, wl)) = self.waiting.pop_front() {
            self.start(wt, wd, wo, wl, t);
        }
        (tag, t)
    }

    /// Runs background work from `from` to `to` with no host I/O: internal I/O under way,
    /// and the tiers' movers, which keep promoting the extents found hot while the disks idle.
    pub fn settle(&mut self, from: u64, to: u64) {
        let mut now = from;
        loop {
            let mut vol = std::mem::replace(&mut self.vol, Vol::Leaf(0));
            self.run_movers(&mut vol, now);
            self.vol = vol;
            for li in 0..self.leaves.len() as u32 {
                self.hdd_dispatch(li, now);
            }
            match self.events.peek_time() {
                Some(et) if et <= to => {
                    let (et, ev) = self.events.pop().expect("peeked");
                    now = et;
                    self.process(et, ev);
                }
                _ => break,
            }
        }
    }

    /// Discards LBAs (TRIM) on every SSD below the volume, analytically.
    pub fn trim_all(&mut self) {
        for l in &mut self.leaves {
            if let Dev::Ssd(s) = &mut l.dev {
                if s.trim {
                    for lpn in 0..s.ftl.lpns() {
                        s.ftl.invalidate(lpn);
                    }
                    if let Some(c) = &mut s.slc {
                        c.clear(); // nothing left to fold
                    }
                }
            }
        }
    }

    /// Starts loading the mapping of a request about to be submitted at `offset`, and the
    /// block node of the one planned `NODE_LAG` requests before it, whose map entry that call
    /// started loading (the node's address is in the entry: a second dependent miss), and
    /// the request's slot in the index of buffered LPNs.
    #[inline]
    pub fn prefetch(&mut self, offset: u64) {
        // Only a plain drive: RAID and tiers map the offset first, which costs what it saves.
        if let Vol::Leaf(i) = self.vol {
            if let Dev::Ssd(s) = &self.leaves[i as usize].dev {
                let lpn = offset / 4096;
                s.ftl.prefetch(lpn);
                s.buffered.prefetch(lpn);
                // The ring's slot for this request holds the one planned NODE_LAG before it.
                let slot = &mut self.planned_lpns[self.planned as usize % NODE_LAG];
                s.ftl.prefetch_node(std::mem::replace(slot, lpn));
                self.planned = self.planned.wrapping_add(1);
            }
        }
    }

    /// Whether any device looks at written data (compression).
    pub fn needs_data(&self) -> bool {
        self.leaves
            .iter()
            .any(|l| matches!(&l.dev, Dev::Ssd(s) if s.compress))
    }
}

fn vol_size(v: &Vol, leaves: &[Leaf]) -> u64 {
    match v {
        Vol::Leaf(i) => leaves[*i as usize].dev.size(),
        Vol::Raid {
            member_bytes,
            members,
            ..
        } => member_bytes * members.len() as u64,
        Vol::Tier(t) => t.size(),
    }
}

/// When a write's status, sent at `t`, reaches the host: a small message, so the hops of the
/// path up (`up`) and its fixed latency (`lat_up_ns`), no transfer time.
#[inline]
fn status_up(up: &[Pipe], lat_up_ns: u64, t: u64) -> u64 {
    t + up.iter().map(|p| p.hop_ns).sum::<u64>() + lat_up_ns
}

/// A write into an SSD (its data already through the write datapath, see `leaf_submit`): into
/// the buffer, LPNs mapped into the open program unit, full units programmed (after GC if the
/// die's pool is low). Returns when the write is buffered (its completion).
fn ssd_write(ssd: &mut Ssd, res: &mut [Res], offset: u64, len: u64, at: u64, share: f64) -> u64 {
    let first = offset / 4096;
    let last = (offset + len.max(1) - 1) / 4096;
    let units_per_lpn = if ssd.compress {
        let stored = (share.max(ssd.min_stored) * 8.0).ceil() as u32;
        stored.clamp(1, 8)
    } else {
        1
    };
    let lpn_bytes = (units_per_lpn * ssd.ftl.unit_bytes) as u64;
    ssd.host_bytes += len;
    if ssd.slc.is_some() {
        ssd.fold_slc(at);
    }
    if offset % 4096 != 0
        || len % 4096 != 0
        || !ssd.partial_lpns.is_empty()
        || ssd.buffered.in_open_unit(first, last)
    {
        return ssd_write_partial(ssd, res, offset, len, at, units_per_lpn);
    }
    let done = ssd.buffer.admit(at, (last - first + 1) * lpn_bytes);
    for lpn in first..=last {
        if ssd.place_lpn(res, lpn, units_per_lpn, done) {
            let unit = ssd.open.take().expect("placed in the open unit");
            ssd.program_unit(res, unit, at);
        }
    }
    done
}

/// [`ssd_write`] of a write that covers an LPN in part, or while the open unit holds one, or
/// that rewrites an LPN of the open unit: a write to an LPN of the open unit, still in the
/// buffer, merges with it there and takes no new space (sub-4 KiB and unaligned writes fill
/// an LPN a piece at a time; a hot LPN rewritten before its unit fills is programmed once); a
/// full unit whose last LPN is partial waits for the rest of it (the next writes of such a
/// stream) or for the next LPN; and when a unit is programmed, what the host did not write of
/// its LPNs is read from their old copies first. A rewrite that compresses to another size
/// takes a new slot, as it would after the unit is programmed.
#[inline(never)]
fn ssd_write_partial(
    ssd: &mut Ssd,
    res: &mut [Res],
    offset: u64,
    len: u64,
    at: u64,
    units_per_lpn: u32,
) -> u64 {
    let first = offset / 4096;
    let last = (offset + len.max(1) - 1) / 4096;
    let lpn_bytes = (units_per_lpn * ssd.ftl.unit_bytes) as u64;
    let merged: Vec<u64> = (first..=last)
        .filter(|&l| {
            ssd.partial_lpns.iter().any(|b| b.lpn == l)
                || (sectors_covered(l, offset, len) == WHOLE_LPN
                    && ssd.buffered.in_open_unit(l, l)
                    && ssd.ftl.stored_bytes(l) as u64 == lpn_bytes)
        })
        .collect();
    let done = ssd
        .buffer
        .admit(at, (last - first + 1 - merged.len() as u64) * lpn_bytes);
    let unit_bytes = ssd.unit_bytes;
    let is_full = |open: &Option<OpenUnit>| open.is_some_and(|u| u.fill >= unit_bytes);
    for lpn in first..=last {
        let sectors = sectors_covered(lpn, offset, len);
        if merged.contains(&lpn) {
            // (Gone when the unit was programmed within this write: it went with it.)
            if let Some(b) = ssd.partial_lpns.iter_mut().find(|b| b.lpn == lpn) {
                b.sectors |= sectors;
                if b.sectors == WHOLE_LPN && is_full(&ssd.open) {
                    if let Some(unit) = ssd.open.take() {
                        ssd.program_unit(res, unit, at); // its last LPN is now whole
                    }
                }
            }
            continue;
        }
        if is_full(&ssd.open) {
            if let Some(unit) = ssd.open.take() {
                ssd.program_unit(res, unit, at);
            }
        }
        if sectors != WHOLE_LPN {
            let old = ssd.ftl.block_of(lpn).map(|(node, die)| OldCopy {
                node,
                die,
                bytes: ssd.ftl.stored_bytes(lpn),
            });
            ssd.partial_lpns.push(PartialLpn { lpn, sectors, old });
        }
        if ssd.place_lpn(res, lpn, units_per_lpn, done) && sectors == WHOLE_LPN {
            let unit = ssd.open.take().expect("placed in the open unit");
            ssd.program_unit(res, unit, at);
        }
    }
    done
}

/// How the head reaches `offset` for a command starting at `start`: seek (square-root curve
/// over the stroke) and a rotational wait, or nothing while read look-ahead streams it.
fn hdd_position(h: &mut Hdd, offset: u64, start: u64) -> Positioning {
    // Read look-ahead (ATA SET FEATURES "enable read look-ahead", on by default): after a
    // command the head keeps reading the following sectors into the drive's buffer, so a
    // sequential command arriving within a revolution finds its data streaming in since the
    // last one ended — no seek, no rotational wait, no lost revolution while the host was
    // busy moving the previous data. Sequential writes stream the same way through the
    // drive's write cache.
    if offset == h.last_end && start <= h.last_done + h.rev_ns {
        return Positioning {
            streaming: true,
            seek_ns: 0,
            rotation_ns: 0,
        };
    }
    let dist = (offset as f64 - h.head as f64).abs() / h.size as f64;
    let seek_ns = if dist == 0.0 {
        0
    } else {
        h.seek_track_ns + ((h.seek_full_ns - h.seek_track_ns) as f64 * dist.sqrt()) as u64
    };
    // Where the sector passes under the head is uniform over a revolution (the positions of
    // sectors on their tracks are not tracked).
    Positioning {
        streaming: false,
        seek_ns,
        rotation_ns: h.rng.below(h.rev_ns),
    }
}

/// Runs a command on the single actuator from `start`: positioning, then the zoned media
/// transfer. Returns its end.
fn hdd_service(
    h: &mut Hdd,
    res: &mut [Res],
    offset: u64,
    len: u64,
    start: u64,
    pos: Positioning,
) -> u64 {
    let frac = offset as f64 / h.size as f64;
    let npb = h.outer_npb + (h.inner_npb - h.outer_npb) * frac;
    let xfer = (len as f64 * npb) as u64;
    let d = if pos.streaming {
        // The media transfer began when the previous command ended.
        (h.last_done + xfer).max(start + h.command_ns) - start
    } else {
        h.command_ns + pos.seek_ns + pos.rotation_ns + xfer
    };
    let r = &mut res[h.res as usize];
    r.busy_until = start + d;
    r.busy_ns += d;
    h.busy_ns += d;
    h.head = offset + len;
    h.last_end = offset + len;
    h.last_done = start + d;
    start + d
}

/// Lower- and upper-page times of SimpleSSD's sample MLC (simulators-and-interfaces.md §2):
/// reads 40 / 65 µs, programs 500 / 1300 µs. Only the ratio is taken: a datasheet's typical
/// tR or tPROG is kept as the mean of the pair.
const MLC_READ_US: [f64; 2] = [40.0, 65.0];
const MLC_PROGRAM_US: [f64; 2] = [500.0, 1300.0];

/// Lower- and upper-page times around a typical (mean) time.
fn page_times(typical_ns: u64, mlc: bool, ratio: [f64; 2]) -> [u64; 2] {
    if !mlc {
        return [typical_ns; 2];
    }
    let mean = (ratio[0] + ratio[1]) / 2.0;
    ratio.map(|r| (typical_ns as f64 * r / mean).round() as u64)
}

/// The mean of a lower- and an upper-page time: what a mix of both pages costs per page.
fn mean_of(times: [u64; 2]) -> u64 {
    (times[0] + times[1]) / 2
}

/// 0 (lower) or 1 (upper): the page of its wordline a program unit is taken to sit in, from
/// a multiplicative hash of the unit's number.
fn upper_page(unit: u64) -> usize {
    (unit.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 63) as usize
}

/// Builds an SSD, creating its resources.
pub fn build_ssd(res: &mut Vec<Res>, p: SsdParams, group: &str) -> Ssd {
    let mut add = |kind, name: String| {
        res.push(Res {
            busy_until: 0,
            busy_ns: 0,
            kind,
            group: name,
        });
        (res.len() - 1) as ResId
    };
    let cores = (0..p.cores.max(1))
        .map(|_| add(ResKind::Controller, format!("{group} controller")))
        .collect();
    let read_path = p
        .read_bps
        .map(|r| Pipe::rate(add(ResKind::DataPath, format!("{group} read datapath")), r));
    let write_path = p
        .write_bps
        .map(|r| Pipe::rate(add(ResKind::DataPath, format!("{group} write datapath")), r));
    let chans: Vec<ResId> = (0..p.channels)
        .map(|_| add(ResKind::Channel, format!("{group} NAND channels")))
        .collect();
    let dies: Vec<ResId> = (0..p.dies)
        .map(|_| add(ResKind::Die, format!("{group} NAND dies")))
        .collect();
    let block_bytes = p.planes as u64 * p.pages_per_block as u64 * p.page_bytes as u64;
    let unit_bytes = p.planes as u64 * p.page_bytes as u64;
    // Room for at least two program units, or writes could never drain.
    let buffer_bytes = p.buffer_bytes.max(2 * unit_bytes);
    let ftl = Ftl::new(
        p.size / 4096,
        p.dies,
        block_bytes,
        p.blocks_per_plane as u64,
        p.gc_free_blocks,
        p.compress,
    );
    Ssd {
        name: p.name,
        cores,
        command_ns: p.command_ns,
        write_command_ns: p.write_command_ns,
        latency_ns: p.latency_ns,
        read_path,
        write_path,
        dies,
        chans,
        read_ns: page_times(p.read_ns, p.mlc_pages, MLC_READ_US),
        program_ns: page_times(p.program_ns, p.mlc_pages, MLC_PROGRAM_US),
        programs: vec![0; p.dies as usize],
        gc: vec![GcWork::default(); p.dies as usize],
        programs_booked: vec![VecDeque::new(); p.dies as usize],
        read_until: vec![0; p.dies as usize],
        registers: vec![EMPTY_REGISTER; p.dies as usize],
        loads_booked: vec![VecDeque::new(); p.channels as usize],
        chan_read_until: vec![0; p.channels as usize],
        die_free: Earliest::new(p.dies as usize),
        erase_ns: p.erase_ns,
        chan_ns_per_byte: 1e9 / p.chan_bps,
        unit_bytes,
        block_bytes,
        buffer: WriteBuffer::new(buffer_bytes),
        open: None,
        partial_lpns: Vec::new(),
        buffered: BufferedLpns::new(
            buffer_bytes,
            unit_bytes,
            if p.compress { 512 } else { 4096 },
        ),
        host_bytes: 0,
        read_bytes: 0,
        buffer_read_bytes: 0,
        ftl,
        compress: p.compress,
        min_stored: p.min_stored,
        trim: p.trim,
        size: p.size / 4096 * 4096,
        power: p.power,
        energy: Energy::default(),
        slc: p.slc,
        carried: Carried::default(),
    }
}

/// Builds an HDD, creating its resource.
pub fn build_hdd(res: &mut Vec<Res>, p: HddParams, group: &str) -> Hdd {
    res.push(Res {
        busy_until: 0,
        busy_ns: 0,
        kind: ResKind::Disk,
        group: format!("{group} actuator"),
    });
    Hdd {
        name: p.name,
        res: (res.len() - 1) as ResId,
        size: p.size / 4096 * 4096,
        rev_ns: (60e9 / p.rpm) as u64,
        seek_track_ns: p.seek_track_ns,
        seek_full_ns: p.seek_full_ns,
        outer_npb: 1e9 / p.outer_bps,
        inner_npb: 1e9 / p.inner_bps,
        command_ns: p.command_ns,
        head: 0,
        last_end: u64::MAX,
        last_done: 0,
        rng: Rng::new(p.seed),
        power: p.power,
        busy_ns: 0,
        queue: Vec::new(),
        host_queued: 0,
        in_flight: false,
        reorder_window: p.queue_depth.max(1),
        cache_bytes: p.write_cache_bytes,
        dirty_bytes: 0,
        destage_end: 0,
        destage_bytes: 0,
        cache_waiting: VecDeque::new(),
    }
}

impl Ssd {
    /// Books a page read of `t_r` on die `d` from `at`, with its energy. Firmware puts host
    /// reads ahead of queued programs and collection work: the read waits for the die's earlier
    /// reads, for the NAND operation in progress and for programs it would overlap, not for
    /// programs booked to start after it ends.
    fn read_die(&mut self, res: &mut [Res], d: u32, at: u64, t_r: u64) -> u64 {
        let i = d as usize;
        let gc = &mut self.gc[i];
        let ready = gc.op_end(at.max(self.read_until[i]));
        let start = fit_before_booked(&mut self.programs_booked[i], at, ready, t_r);
        let start = gc.op_end(start);
        let end = start + t_r;
        if start < gc.end && end > gc.start {
            // The read runs between two of the collection's operations (or just before its
            // first): what is left of the collection waits for it.
            gc.delay(end - start.max(gc.start));
        }
        self.read_until[i] = occupy(res, self.dies[i], start, t_r);
        self.die_free.raise(i, end.max(gc.end));
        self.energy.read_ns += t_r;
        end
    }

    /// Reads program unit `unit` on die `d` for the host from `at`: from the die's page
    /// register when it still holds the unit (after the tR in progress, if any), else with
    /// a tR. Returns when the data can leave the die.
    fn read_unit(&mut self, res: &mut [Res], d: u32, unit: (u32, u64), at: u64, t_r: u64) -> u64 {
        let i = d as usize;
        let reg = self.registers[i];
        if reg.unit == unit && at < reg.until {
            return at.max(reg.ready);
        }
        let end = self.read_die(res, d, at, t_r);
        // Programs are booked in start order; a collection in progress resumes right after.
        let booked = &self.programs_booked[i];
        let next_program = booked
            .get(booked.partition_point(|&(s, _)| s < end))
            .map_or(u64::MAX, |&(s, _)| s);
        let gc = &self.gc[i];
        let next_gc = if gc.end > end {
            end.max(gc.start)
        } else {
            u64::MAX
        };
        self.registers[i] = PageRegister {
            unit,
            ready: end,
            until: next_program.min(next_gc),
        };
        end
    }

    /// Where a read of `[offset, offset + len)` at `at` finds `lpn`'s data: in the write
    /// buffer when it is written and not yet programmed, except that an LPN the host wrote in
    /// part is read from its old copy when the read wants sectors the host did not write (the
    /// map already names the unit the new data will be programmed into).
    #[inline]
    fn read_from(&mut self, lpn: u64, offset: u64, len: u64, at: u64) -> ReadFrom {
        if !self.buffered.holds(lpn, at) {
            return ReadFrom::Mapped;
        }
        match self
            .partial_lpns
            .iter()
            .find(|b| b.lpn == lpn)
            .and_then(|b| {
                let old = b.old?;
                let wanted = sectors_touched(lpn, offset, len);
                (wanted & !b.sectors != 0).then_some(old)
            }) {
            Some(old) => ReadFrom::OldCopy(OldCopy {
                node: self.ftl.root_node(old.node),
                ..old
            }),
            None => ReadFrom::Buffer,
        }
    }

    /// An operation booked on die `d` from `start` replaces what its page register holds then.
    fn replace_register_at(&mut self, d: u32, start: u64) {
        let r = &mut self.registers[d as usize];
        r.until = r.until.min(start);
    }

    /// Puts `lpn` into the open program unit (opening one on the die that frees up first when
    /// none is), maps it there and runs the die's collection when its pool runs low. Returns
    /// whether the unit is full; it stays open, and the caller takes it out to program it.
    #[inline(always)] // every write's path: called, it cost 1 % more instructions per write
    fn place_lpn(&mut self, res: &mut [Res], lpn: u64, units_per_lpn: u32, done: u64) -> bool {
        if self.open.is_none() {
            // Dynamic allocation.
            let best = self.die_free.earliest() as u32;
            let slc = self.slc.as_ref().is_some_and(|c| {
                let free = self.size.saturating_sub(self.ftl.mapped_lpns() * 4096);
                c.has_room(self.unit_bytes, free)
            });
            self.buffered.open_unit();
            self.open = Some(OpenUnit {
                die: best,
                fill: 0,
                ready: done,
                slc,
            });
        }
        // The unit is updated where it lives. A copy stored back drew a seventh of this path's
        // perf samples: its fields, written one by one, were read back 16 bytes at a time,
        // which the store buffer cannot forward.
        let unit = self.open.as_mut().expect("opened above");
        unit.fill += (units_per_lpn * self.ftl.unit_bytes) as u64;
        unit.ready = unit.ready.max(done);
        let (die, slc, ready, full) =
            (unit.die, unit.slc, unit.ready, unit.fill >= self.unit_bytes);
        let low = self.ftl.write(lpn, die, units_per_lpn);
        self.buffered.written(lpn);
        if let Some(c) = &mut self.slc {
            c.note_write(lpn, slc);
        }
        if low {
            let die_res = self.dies[die as usize];
            let cost = self.ftl.collect(die);
            let busy_until = res[die_res as usize].busy_until;
            // Booked after the die's earlier collection, whose place this one takes (reads in
            // what is left of that one no longer wait for its operations: a rare overlap).
            let start = ready.max(busy_until).max(self.gc[die as usize].end);
            let (gc, energy) = self.collection(&cost, start);
            self.gc[die as usize] = gc;
            self.replace_register_at(die, start);
            res[die_res as usize].busy_ns += gc.end - gc.start;
            self.die_free.raise(die as usize, gc.end);
            self.energy.add(energy);
        }
        full
    }

    /// Programs the open unit, from `at` (the write that filled or completed it): first the
    /// rest of its partial LPNs is read, then the data is loaded over the die's channel and
    /// programmed once the die, its collection and those reads allow.
    fn program_unit(&mut self, res: &mut [Res], mut unit: OpenUnit, at: u64) {
        if !self.partial_lpns.is_empty() {
            unit.ready = unit.ready.max(self.read_rest_of_partial_lpns(res, at));
        }
        let die_res = self.dies[unit.die as usize];
        let chan = self.chan_of(unit.die);
        let xfer = (unit.fill as f64 * self.chan_ns_per_byte) as u64;
        // PAGE PROGRAM (80h-10h): the data is clocked into the die's page register, then
        // tPROG; the die takes no new data until tPROG ends, so a load waits for its die and
        // the die is busy for load + tPROG. Dies sharing a channel interleave their loads, and
        // a drive with fewer dies per channel loses that overlap (testbeds.md B: twice the
        // dies, 70-90 % faster incompressible writes). The parts also offer PROGRAM PAGE CACHE
        // (80h-15h), which would hide the load; the published figures say the controllers of
        // the catalog do not gain from it: with it, the Vertex LE's 32 dies would write 2 MB
        // at the SATA ceiling (~265 MB/s) instead of the 217-248 MB/s measured (testbeds.md
        // A), and Force 3's 4 KiB QD32 write gap would shrink to 1.2x from the 1.55-1.85x
        // measured.
        // The program needs the space the die's collection is freeing.
        let free = unit
            .ready
            .max(res[die_res as usize].busy_until)
            .max(self.gc[unit.die as usize].end);
        let loaded = self.load_channel(res, chan, at, free, xfer);
        // A die's programs alternate between lower and upper pages (the MLC program order
        // interleaves them across neighbouring wordlines).
        let programs = &mut self.programs[unit.die as usize];
        let t_prog = match &self.slc {
            Some(c) if unit.slc => c.program_ns,
            _ => self.program_ns[(*programs & 1) as usize],
        };
        *programs = programs.wrapping_add(1);
        let end = reserve(res, die_res, loaded - xfer, xfer + t_prog);
        self.die_free.raise(unit.die as usize, end);
        let booked = &mut self.programs_booked[unit.die as usize];
        forget_over(booked, at);
        booked.push_back((end - xfer - t_prog, end));
        self.replace_register_at(unit.die, end - xfer - t_prog);
        self.energy.program_ns += t_prog;
        self.buffer.release_at(end, unit.fill);
        self.buffered.programmed(end);
    }

    /// Read-modify-write, as the open unit is about to be programmed: the sectors of its LPNs
    /// the host did not write are read from their previous copies (tR on that die, then the
    /// data out over its channel), from `at`. Returns when the last is in the controller
    /// (`at` when none is needed), and empties the unit's LPN list.
    fn read_rest_of_partial_lpns(&mut self, res: &mut [Res], at: u64) -> u64 {
        let mut lpns = std::mem::take(&mut self.partial_lpns);
        let unit_lpns = self.unit_bytes / 4096;
        let mut ready = at;
        for b in &lpns {
            let Some(OldCopy { die, bytes, .. }) = b.old else {
                continue;
            };
            if b.sectors == WHOLE_LPN {
                continue; // written whole after all: nothing to read
            }
            let t_r = self.read_ns[upper_page(b.lpn / unit_lpns)];
            let end = self.read_die(res, die, at, t_r);
            // The register now holds a page no host read asks for by its unit.
            self.registers[die as usize] = EMPTY_REGISTER;
            let out = (bytes as f64 * self.chan_ns_per_byte) as u64;
            ready = ready.max(self.read_channel(res, self.chan_of(die), end, out));
        }
        lpns.clear();
        self.partial_lpns = lpns; // keeps its allocation
        ready
    }

    /// Books `d` of read data-out on channel `chan` from `at`, ahead of program data loads
    /// booked for later (as for the die's reads).
    fn read_channel(&mut self, res: &mut [Res], chan: ResId, at: u64, d: u64) -> u64 {
        let i = (chan - self.chans[0]) as usize;
        let ready = at.max(self.chan_read_until[i]);
        let start = fit_before_booked(&mut self.loads_booked[i], at, ready, d);
        self.chan_read_until[i] = occupy(res, chan, start, d);
        self.chan_read_until[i]
    }

    /// Books a program's data load of `d` on channel `chan` at `ready` or later, after the
    /// channel's reads and in the first gap between the loads already booked: a load booked
    /// for a die still collecting, a second ahead, does not hold up the channel's other dies.
    fn load_channel(&mut self, res: &mut [Res], chan: ResId, at: u64, ready: u64, d: u64) -> u64 {
        let i = (chan - self.chans[0]) as usize;
        let loads = &mut self.loads_booked[i];
        let start = fit_before_booked(loads, at, ready.max(self.chan_read_until[i]), d);
        let pos = loads.partition_point(|&(s, _)| s < start);
        loads.insert(pos, (start, start + d));
        occupy(res, chan, start, d)
    }

    /// Folds the SLC cache into the array for the time all dies have been idle before `at`,
    /// at the array's program speed (every die programming). It takes no die time (the dies
    /// had nothing else to do) and no energy: that would land in whichever test writes next.
    fn fold_slc(&mut self, at: u64) {
        let idle_from = self.die_free.latest();
        let unit_bytes = self.unit_bytes;
        let program_ns = mean_of(self.program_ns);
        let dies = self.dies.len() as u64;
        let Some(slc) = &mut self.slc else { return };
        let from = idle_from.max(slc.folded_to);
        if at > from && !slc.order.is_empty() {
            let can =
                (at - from) as u128 * dies as u128 * unit_bytes as u128 / program_ns.max(1) as u128;
            slc.fold(can.min(u64::MAX as u128) as u64);
        }
        slc.folded_to = slc.folded_to.max(at);
    }

    /// The channel of die `d`. Dies are numbered channel-first (die `d` is way `d / channels`
    /// on channel `d % channels`), so consecutive program units, which go to the next free die
    /// in index order, stripe across channels before they stack up on one — the channel-first
    /// allocation order (CWDP) that MQSim uses by default (simulators-and-interfaces.md §1).
    #[inline]
    fn chan_of(&self, d: u32) -> ResId {
        self.chans[(d as usize) % self.chans.len()]
    }

    /// The program unit stripe in LPNs (for analytic fills).
    pub fn stripe_lpns(&self) -> u64 {
        self.unit_bytes / 4096
    }

    /// Busy time of the controller cores.
    pub fn controller_busy(&self, res: &[Res]) -> u64 {
        self.cores.iter().map(|&c| res[c as usize].busy_ns).sum()
    }

    /// Busy time of the channels.
    pub fn channel_busy(&self, res: &[Res]) -> u64 {
        self.chans.iter().map(|&c| res[c as usize].busy_ns).sum()
    }

    /// The booking of a collection that moves and erases `cost`, from `start`: copyback
    /// within the die (read and program each moved page), then the erases. Moved pages are as
    /// many lower as upper pages: the mean times apply. Also returns its die time for power.
    fn collection(&self, cost: &GcCost, start: u64) -> (GcWork, Energy) {
        let ub = self.ftl.unit_bytes as u64;
        let ops = (cost.moved_units * ub).div_ceil(self.unit_bytes);
        let erases = (cost.erased_units * ub).div_ceil(self.block_bytes);
        let (read_ns, program_ns) = (mean_of(self.read_ns), mean_of(self.program_ns));
        let gc = GcWork {
            start,
            copy_ns: read_ns + program_ns,
            copies_end: start + ops * (read_ns + program_ns),
            erase_ns: self.erase_ns,
            end: start + ops * (read_ns + program_ns) + erases * self.erase_ns,
        };
        let energy = Energy {
            read_ns: ops * read_ns,
            program_ns: ops * program_ns,
            erase_ns: erases * self.erase_ns,
        };
        (gc, energy)
    }

    /// Spreads the dies over the garbage-collection cycle of the steady state. An analytic
    /// steady state leaves every die at its collection threshold at once, so the first writes
    /// would start a collection on every die together and stall the drive for the length of
    /// one (over a second on the SSD 750), a synchronised start no drive that reached its
    /// steady state by writing has. Die `d` takes phase `d × 0.618…` (mod 1) of its cycle: a
    /// collection (of the cost its next one has) for the share of the cycle collections take
    /// when the drive writes flat out, then the writing of one block. A die in its collection
    /// has the FTL state of the collection done and the rest of it booked from `now`, its
    /// cost carried to the next job ([`Ssd::charge_carried`]); a die writing has part of its
    /// fresh block taken.
    pub fn stagger_collections(&mut self, res: &mut [Res], now: u64) {
        let block_units = self.ftl.block_units as u64;
        let write_ns = self.block_bytes / self.unit_bytes * mean_of(self.program_ns);
        for d in 0..self.dies.len() {
            let cost = self.ftl.collect(d as u32);
            let (full, energy) = self.collection(&cost, 0);
            let gc_ns = full.end as f64;
            let in_gc = gc_ns / (gc_ns + write_ns as f64);
            let phase = (d as f64 * 0.618_033_988_749_895).fract();
            if phase < in_gc {
                // The tail of the collection: its last copies, then its erases.
                let share = (in_gc - phase) / in_gc;
                let end = now + (share * gc_ns) as u64;
                let c = &mut self.carried;
                c.die_busy.push((self.dies[d], end - now));
                c.energy.add(energy.share(share));
                let part = |x: u64| (x as f64 * share) as u64;
                c.gc_units += part(cost.moved_units);
                c.erased_units += part(cost.erased_units);
                // Counted when charged, not now.
                self.ftl.counters.gc_units -= part(cost.moved_units);
                self.ftl.counters.erased_units -= part(cost.erased_units);
                self.replace_register_at(d as u32, now);
                self.gc[d] = GcWork {
                    start: now,
                    copies_end: end.saturating_sub(full.end - full.copies_end).max(now),
                    end,
                    ..full
                };
                let r = &mut res[self.dies[d] as usize];
                r.busy_until = r.busy_until.max(end);
                self.die_free.raise(d, end);
            } else {
                let taken = (phase - in_gc) / (1.0 - in_gc) * block_units as f64;
                self.ftl.take_free(d as u32, taken as u64);
            }
        }
    }

    /// Charges the collection work carried from an analytic steady state to what is running
    /// now: the dies' busy time, energy, and the pages moved and erased (write amplification).
    pub fn charge_carried(&mut self, res: &mut [Res]) {
        let c = std::mem::take(&mut self.carried);
        for (die, ns) in c.die_busy {
            res[die as usize].busy_ns += ns;
        }
        self.energy.add(c.energy);
        self.ftl.counters.gc_units += c.gc_units;
        self.ftl.counters.erased_units += c.erased_units;
    }

    /// Forgets pending programs and buffer state (after an analytic fill).
    pub fn reset_buffer(&mut self) {
        self.buffer.clear();
        self.open = None;
        self.partial_lpns.clear();
        self.buffered.clear();
        // The fill made new nodes: a register's unit would name another's.
        self.registers.fill(EMPTY_REGISTER);
        if let Some(slc) = &mut self.slc {
            slc.clear(); // the analytic states are reached with time to fold
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sectors_covered_counts_only_whole_sectors_of_the_lpn() {
        assert_eq!(sectors_covered(3, 3 * 4096, 4096), WHOLE_LPN);
        assert_eq!(sectors_covered(3, 0, 1 << 20), WHOLE_LPN);
        assert_eq!(sectors_covered(3, 3 * 4096 + 512, 4096), 0b1111_1110);
        assert_eq!(sectors_covered(4, 3 * 4096 + 512, 4096), 0b0000_0001);
        assert_eq!(sectors_covered(3, 3 * 4096 + 1024, 1536), 0b0001_1100);
        // A sector written in part is not covered: its rest comes from the old copy.
        assert_eq!(sectors_covered(3, 3 * 4096 + 100, 400), 0b0000_0000);
        assert_eq!(sectors_covered(3, 3 * 4096 + 100, 1000), 0b0000_0010);
        // A read needs every sector it touches.
        assert_eq!(sectors_touched(3, 3 * 4096 + 100, 1000), 0b0000_0111);
        assert_eq!(sectors_touched(3, 3 * 4096 + 1024, 1536), 0b0001_1100);
        assert_eq!(sectors_touched(4, 3 * 4096 + 512, 4096), 0b0000_0001);
    }

    #[test]
    fn a_read_fits_in_a_gap_before_later_programs_or_waits_for_the_one_it_would_overlap() {
        let mut booked: VecDeque<(u64, u64)> = [(100, 200), (300, 400)].into_iter().collect();
        // Fits before the first program.
        assert_eq!(fit_before_booked(&mut booked, 0, 10, 50), 10);
        // Would overlap the first: after it, and the gap to the second is wide enough.
        assert_eq!(fit_before_booked(&mut booked, 0, 80, 50), 200);
        // Too long for that gap: after the second.
        assert_eq!(fit_before_booked(&mut booked, 0, 80, 150), 400);
        // Programs over by `now` are forgotten.
        assert_eq!(fit_before_booked(&mut booked, 250, 250, 10), 250);
        assert_eq!(booked.len(), 1);
    }

    #[test]
    fn a_full_buffer_admits_writes_in_order_as_programs_free_it() {
        let mut b = WriteBuffer::new(8);
        b.used = 8;
        b.release_at(200, 4);
        b.release_at(100, 4);
        assert_eq!(b.admit(10, 1), 100, "waits for the first program to end");
        // The three units that program freed beyond the first write's need: not before it.
        for _ in 0..3 {
            assert_eq!(b.admit(20, 1), 100);
        }
        assert_eq!(b.admit(30, 1), 200, "the next program's space");
        assert_eq!(b.admit(250, 1), 250, "space free by then");
    }

    #[test]
    fn a_page_register_serves_its_unit_until_the_die_is_used_again() {
        let cat = crate::catalog::Catalog::load(None).unwrap();
        let (_, drive) = cat.drives.get("ssd750-400").unwrap();
        let mut res = Vec::new();
        let mut ssd = build_ssd(&mut res, crate::build::ssd_params(drive), "probe");
        let (unit, t_r) = ((5, 9), 50_000);
        let mut read = |unit, at| ssd.read_unit(&mut res, 0, unit, at, t_r);
        assert_eq!(read(unit, 0), 50_000, "the first read of a unit takes tR");
        assert_eq!(
            read(unit, 10_000),
            50_000,
            "while it is read: waits for that tR"
        );
        assert_eq!(read(unit, 60_000), 60_000, "held: no tR");
        assert_eq!(read((5, 10), 60_000), 110_000, "another unit takes tR");
        assert_eq!(read(unit, 120_000), 170_000, "and replaced the first");
        ssd.replace_register_at(0, 200_000); // a program booked from then
        let mut read = |unit, at| ssd.read_unit(&mut res, 0, unit, at, t_r);
        assert_eq!(
            read(unit, 190_000),
            190_000,
            "held until the program starts"
        );
        assert_eq!(read(unit, 200_000), 250_000, "gone once it has");
    }

    #[test]
    fn a_read_of_sectors_a_partial_rewrite_left_out_goes_to_the_old_copy() {
        let cat = crate::catalog::Catalog::load(None).unwrap();
        let mut world = crate::build::build(&cat, "ssd750-400", "z97", Some("cpu"), 1)
            .unwrap()
            .world;
        world.prepare(1, 0);
        let Dev::Ssd(ssd) = &mut world.leaves[0].dev else {
            panic!("an SSD")
        };
        let stripe = ssd.stripe_lpns();
        ssd.ftl.fill_sequential(stripe);
        ssd.reset_buffer();
        // The second stripe's first LPN: after the fill it is on another die than the first,
        // where the open unit starts.
        let lpn = stripe;
        let old_die = ssd.ftl.die_of(lpn).unwrap();
        let dies = ssd.dies.clone();
        // Run `dir` of `len` bytes at the LPN's start to completion; returns how long each
        // die was busy meanwhile.
        let run = |world: &mut World, dir, len, t| {
            let before: Vec<u64> = dies
                .iter()
                .map(|&d| world.res[d as usize].busy_ns)
                .collect();
            world.submit(0, dir, lpn * 4096, len, t);
            let (_, done) = world.next_completion(u64::MAX).unwrap();
            let busy: Vec<u64> = (dies.iter().zip(before))
                .map(|(&d, b)| world.res[d as usize].busy_ns - b)
                .collect();
            (busy, done)
        };
        // Its first sector rewritten: held in the buffer, mapped to the open unit's die.
        let (_, t) = run(&mut world, Direction::Write, 512, 0);
        let Dev::Ssd(ssd) = &mut world.leaves[0].dev else {
            unreachable!()
        };
        let new_die = ssd.ftl.die_of(lpn).unwrap();
        assert_ne!(new_die, old_die, "the open unit is on another die");
        // Only that sector: from the buffer, no die.
        let (busy, t) = run(&mut world, Direction::Read, 512, t);
        assert!(busy.iter().all(|&b| b == 0), "{busy:?}");
        // The whole LPN: the other seven sectors are in the old copy, on the old die.
        let (busy, _) = run(&mut world, Direction::Read, 4096, t);
        assert!(busy[old_die as usize] > 0, "{busy:?}");
        assert_eq!(busy[new_die as usize], 0, "{busy:?}");
    }

    #[test]
    fn a_read_waits_for_the_collection_operation_in_progress_only() {
        let mut gc = GcWork {
            start: 1_000,
            copy_ns: 100,
            copies_end: 1_500,
            erase_ns: 300,
            end: 2_100,
        };
        assert_eq!(gc.op_end(900), 900, "before the collection");
        assert_eq!(gc.op_end(1_000), 1_000, "at an operation's boundary");
        assert_eq!(gc.op_end(1_050), 1_100, "inside a copy");
        assert_eq!(gc.op_end(1_600), 1_800, "inside an erase");
        assert_eq!(gc.op_end(2_100), 2_100, "after the collection");
        gc.delay(20);
        assert_eq!((gc.start, gc.copies_end, gc.end), (1_020, 1_520, 2_120));
        assert_eq!(gc.op_end(1_050), 1_120, "the rest moved back with it");
    }

    #[test]
    fn the_slc_cache_holds_lpns_and_folds_only_current_copies() {
        let mut c = SlcCache::new(200_000, 3 * 4096, 0);
        c.note_write(7, true);
        c.note_write(7, true); // an overwrite in the cache: still one LPN held
        c.note_write(9, true);
        assert_eq!(c.used(), 2 * 4096);
        assert!(c.has_room(4096, 0) && !c.has_room(2 * 4096, 0));
        c.note_write(7, false); // rewritten to the array: the cached copy is stale
        assert_eq!(c.used(), 4096 + 4096, "stale until folding reaches it");
        c.fold(4096); // 7's stale entry is skipped for free, 9 folds
        assert_eq!(c.used(), 0);
        assert!(!c.is_held(7) && !c.is_held(9));
    }

    #[test]
    fn mlc_page_times_keep_the_typical_time_as_their_mean() {
        assert_eq!(page_times(80_000, false, MLC_READ_US), [80_000, 80_000]);
        let [lower, upper] = page_times(1_300_000, true, MLC_PROGRAM_US);
        assert!(lower < upper);
        assert!(((lower + upper) / 2).abs_diff(1_300_000) <= 1);
        assert!((upper as f64 / lower as f64 - 1300.0 / 500.0).abs() < 1e-5);
    }

    #[test]
    fn a_cache_copy_validates_only_the_whole_blocks_it_carries() {
        assert_eq!(whole_blocks(0, 4096), 1);
        assert_eq!(
            whole_blocks(512, 4096),
            0,
            "straddles two blocks, fills neither"
        );
        assert_eq!(whole_blocks(4096, 8192), 0b110);
        assert_eq!(whole_blocks(0, 128 * 1024), u32::MAX);
        assert_eq!(blocks(1, 3) & whole_blocks(4096, 4096), 0b10);
    }

    #[test]
    fn second_chance_spares_a_recently_used_slot_once() {
        let mut c = SecondChance::new(3);
        c.touch(0);
        assert_eq!(c.victim(|_| false), 1);
        c.touch(1);
        c.touch(2);
        // The hand is at 2 (referenced: spared, cleared), then 0 (its reference was used up).
        assert_eq!(c.victim(|_| false), 0);
        // 1 is spared once more; 2 is free.
        assert_eq!(c.victim(|s| s == 2), 2);
        assert_eq!(c.victim(|_| false), 0, "0 came in unreferenced");
    }
}
