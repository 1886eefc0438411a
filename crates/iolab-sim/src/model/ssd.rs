//! An SSD: controller cores, write buffer, FTL, channels × dies, page registers, SLC cache.

use super::power::{Awake, Energy, Power, PowerLimit};
use super::resource::{occupy, reserve, Pipe, Res, ResId, ResKind};
use crate::buffered::BufferedLpns;
use crate::earliest::Earliest;
use crate::ftl::{Ftl, GcCost};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Garbage collection booked on one die: page copies (tR + tPROG each), then erases. They are
/// separate NAND operations, so a host read waits for the one in progress, not for the whole
/// collection; every read taken in between pushes the rest of the collection back.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct GcWork {
    /// Start of the first copy (moved back by the reads taken in between).
    start: u64,
    /// One copy: tR + tPROG.
    copy_ns: u64,
    /// End of the copies; the erases follow.
    copies_end: u64,
    /// One erase.
    erase_ns: u64,
    /// End of the collection.
    pub(super) end: u64,
    /// Carried from an analytic steady state: charged as it runs ([`Ssd::charge_carried`]),
    /// not when booked.
    carried: bool,
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

    /// Its copy time and erase time after `now` (still to run).
    fn after(&self, now: u64) -> (u64, u64) {
        let left = |from: u64, to: u64| to.saturating_sub(from.max(now));
        (
            left(self.start, self.copies_end),
            left(self.copies_end, self.end),
        )
    }
}

/// How much of `[start, end)` lies after `now`.
fn part_after((start, end): (u64, u64), now: u64) -> u64 {
    end.saturating_sub(start.max(now))
}

/// Work booked on an SSD's NAND to run after some moment: the share of its energy and busy
/// time that was counted when it was booked but has not run yet (see [`Ssd::booked_ahead`]).
#[derive(Debug, Default)]
pub struct Ahead {
    /// Die time by kind.
    pub energy: Energy,
    /// Busy time per resource (dies and channels).
    pub busy: Vec<(ResId, u64)>,
}

/// The earliest start at or after `t` for `dur` that overlaps none of `booked` (intervals in
/// start order: a channel's program data loads); forgets those over by `now`. A load booked
/// for a die still collecting, far ahead, leaves gaps that later loads for other dies take.
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

/// When a read arriving at `at`, free to start at `ready`, starts on a die (or its data-out on
/// a channel): after the program (load) in progress when it arrived, not after those queued
/// behind it, which it goes ahead of. Firmware serves reads first, as MQSim's transaction
/// scheduler does (simulators-and-interfaces.md §1): a read waiting for every program a full
/// write buffer had queued on its die took 28 ms on an SSD 750 writing sequentially.
fn after_the_one_in_progress(booked: &mut VecDeque<(u64, u64)>, at: u64, ready: u64) -> u64 {
    forget_over(booked, at);
    // Bookings do not overlap: only the first left can be in progress at `at`.
    match booked.front() {
        Some(&(start, end)) if start <= at => ready.max(end),
        _ => ready,
    }
}

/// `t`, or the end of the booking in progress at `t` (the bookings over by then kept: they
/// may still be in progress for work that arrives before `t`).
fn past_the_one_in_progress_at(booked: &VecDeque<(u64, u64)>, t: u64) -> u64 {
    // Bookings are in start order and do not overlap: only the last to start by `t` can be
    // in progress.
    let started = booked.partition_point(|&(start, _)| start <= t);
    match started.checked_sub(1).map(|i| booked[i]) {
        Some((_, end)) => t.max(end),
        None => t,
    }
}

/// Books `dur` of a read from `start` on resource `id`, ahead of the `booked` work queued
/// behind it: that work keeps its times (it is already promised elsewhere), and the resource's
/// later bookings start `dur` later, so the read's time is not lost. Returns the read's end.
fn go_ahead(
    res: &mut [Res],
    id: ResId,
    booked: &VecDeque<(u64, u64)>,
    start: u64,
    dur: u64,
) -> u64 {
    if booked.back().is_some_and(|&(_, end)| end > start) {
        let r = &mut res[id as usize];
        r.busy_until += dur;
        r.busy_ns += dur;
        start + dur
    } else {
        occupy(res, id, start, dur)
    }
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
    pub(super) fn clear(&mut self) {
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
    pub(super) fn clear(&mut self) {
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
pub(super) struct OldCopy {
    /// Its block node when it was rewritten (collection may have moved it since, on its die).
    pub(super) node: u32,
    pub(super) die: u32,
    /// Stored bytes.
    pub(super) bytes: u32,
}

/// Where a host read finds an LPN's data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum ReadFrom {
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

/// An SSD.
#[derive(Clone, Debug)]
pub struct Ssd {
    /// Name.
    pub name: String,
    pub(super) cores: Vec<ResId>,
    pub(super) command_ns: u64,
    pub(super) write_command_ns: u64,
    /// A core receives each write's data before running the command (see
    /// [`ControllerSpec::write_data_in_line`](crate::catalog::ControllerSpec)).
    pub(super) write_data_in_line: bool,
    pub(super) latency_ns: u64,
    pub(super) read_path: Option<Pipe>,
    pub(super) write_path: Option<Pipe>,
    pub(super) dies: Vec<ResId>,
    chans: Vec<ResId>,
    /// tR of a lower and an upper page (equal for single-level timing).
    pub(super) read_ns: [u64; 2],
    /// tPROG of a lower and an upper page.
    program_ns: [u64; 2],
    /// Programs issued per die: their parity says which page of the wordline is next.
    programs: Vec<u32>,
    /// Garbage collection booked per die.
    pub(super) gc: Vec<GcWork>,
    /// Collections that a later one replaced in [`Ssd::gc`] before they ended (it is booked
    /// after them): their work still to run counts in [`Ssd::booked_ahead`].
    gc_replaced: Vec<(u32, GcWork)>,
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
    pub(super) chan_ns_per_byte: f64,
    /// Bytes in one program unit (page × planes).
    pub unit_bytes: u64,
    block_bytes: u64,
    buffer: WriteBuffer,
    open: Option<OpenUnit>,
    /// The LPNs of the open unit the host wrote in part (empty when none is open).
    partial_lpns: Vec<PartialLpn>,
    /// The LPNs whose data is still only in the buffer.
    pub(super) buffered: BufferedLpns,
    /// Bytes written by the host (before compression): write amplification's denominator.
    pub host_bytes: u64,
    /// Bytes read by the host, and those of them served from the write buffer.
    pub read_bytes: u64,
    /// See [`Ssd::read_bytes`].
    pub buffer_read_bytes: u64,
    /// The FTL.
    pub ftl: Ftl,
    pub(super) compress: bool,
    min_stored: f64,
    pub(super) trim: bool,
    /// Usable bytes.
    pub size: u64,
    /// Power law.
    pub power: Power,
    /// Energy counters.
    pub energy: Energy,
    /// How long the drive has held host commands, for [`Power::active_w`].
    pub awake: Awake,
    /// The power limit NAND work waits for, when the drive has one.
    power_limit: Option<PowerLimit>,
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
/// the share still to run of each, as busy time from `from`, and the energy and pages moved
/// and erased of them all, charged as their time passes ([`Ssd::charge_carried`]).
#[derive(Clone, Debug, Default)]
struct Carried {
    from: u64,
    die_busy: Vec<(ResId, u64)>,
    energy: Energy,
    gc_units: u64,
    erased_units: u64,
    /// Charged up to this time.
    charged_to: u64,
}

impl Carried {
    /// Die time of the carried collections run by `t`.
    fn done_by(&self, t: u64) -> u64 {
        let elapsed = t.saturating_sub(self.from);
        self.die_busy.iter().map(|&(_, ns)| ns.min(elapsed)).sum()
    }
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
    /// A core receives each write's data before running the command.
    pub write_data_in_line: bool,
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

/// The first and last 4 KiB LPN a request of `len` bytes at `offset` touches (a zero-length
/// request, its first).
#[inline]
pub(super) fn lpn_span(offset: u64, len: u64) -> (u64, u64) {
    (offset / 4096, (offset + len.max(1) - 1) / 4096)
}

/// A write into an SSD (its data already through the write datapath, see `leaf_submit`): into
/// the buffer, LPNs mapped into the open program unit, full units programmed (after GC if the
/// die's pool is low). Returns when the write is buffered (its completion).
pub(super) fn ssd_write(
    ssd: &mut Ssd,
    res: &mut [Res],
    offset: u64,
    len: u64,
    at: u64,
    share: f64,
) -> u64 {
    let (first, last) = lpn_span(offset, len);
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
    let (first, last) = lpn_span(offset, len);
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
pub(super) fn upper_page(unit: u64) -> usize {
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
    // What the limit leaves NAND work: above idle, a command held and every controller core
    // busy (validated positive in the catalog).
    let power_limit = p.power.max_w.map(|max_w| {
        let budget_w = max_w
            - p.power.idle_w
            - p.power.active_w
            - p.power.controller_w * p.cores.max(1) as f64;
        let r = add(ResKind::Power, format!("{group} power limit ({max_w} W)"));
        PowerLimit::new(r, budget_w)
    });
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
        write_data_in_line: p.write_data_in_line,
        latency_ns: p.latency_ns,
        read_path,
        write_path,
        dies,
        chans,
        read_ns: page_times(p.read_ns, p.mlc_pages, MLC_READ_US),
        program_ns: page_times(p.program_ns, p.mlc_pages, MLC_PROGRAM_US),
        programs: vec![0; p.dies as usize],
        gc: vec![GcWork::default(); p.dies as usize],
        gc_replaced: Vec::new(),
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
        awake: Awake::default(),
        power_limit,
        slc: p.slc,
        carried: Carried::default(),
    }
}

impl Ssd {
    /// The power limit, when the drive has one.
    pub fn power_limit(&self) -> Option<&PowerLimit> {
        self.power_limit.as_ref()
    }

    /// Books a page read of `t_r` on die `d` from `at`, with its energy. Firmware puts host
    /// reads ahead of queued programs and collection work: the read waits for the die's earlier
    /// reads and for the NAND operation in progress (a program, or one copy or erase of a
    /// collection), not for the programs queued behind it ([`after_the_one_in_progress`]).
    /// A read is NAND work like a program: under a power limit it waits for the budget too,
    /// and then for the operation in progress when the budget lets it go.
    fn read_die(&mut self, res: &mut [Res], d: u32, at: u64, t_r: u64) -> u64 {
        let i = d as usize;
        let gc = &self.gc[i];
        let ready = gc.op_end(at.max(self.read_until[i]));
        let booked = &mut self.programs_booked[i];
        let mut start = gc.op_end(after_the_one_in_progress(booked, at, ready));
        if let Some(l) = &mut self.power_limit {
            let admitted = l.admit(res, at, start, t_r as f64 * self.power.die_read_w / 1e9);
            if admitted > start {
                start = gc.op_end(past_the_one_in_progress_at(booked, admitted));
            }
        }
        let gc = &mut self.gc[i];
        let end = start + t_r;
        if start < gc.end && end > gc.start {
            // The read runs between two of the collection's operations (or just before its
            // first): what is left of the collection waits for it.
            gc.delay(end - start.max(gc.start));
        }
        self.read_until[i] = go_ahead(res, self.dies[i], booked, start, t_r);
        self.die_free
            .raise(i, res[self.dies[i] as usize].busy_until.max(gc.end));
        self.energy.read_ns += t_r;
        end
    }

    /// Reads program unit `unit` on die `d` for the host from `at`: from the die's page
    /// register when it still holds the unit (after the tR in progress, if any), else with
    /// a tR. Returns when the data can leave the die.
    pub(super) fn read_unit(
        &mut self,
        res: &mut [Res],
        d: u32,
        unit: (u32, u64),
        at: u64,
        t_r: u64,
    ) -> u64 {
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
    pub(super) fn read_from(&mut self, lpn: u64, offset: u64, len: u64, at: u64) -> ReadFrom {
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
            let mut start = ready.max(busy_until).max(self.gc[die as usize].end);
            let (mut gc, energy) = self.collection(&cost, start);
            if let Some(l) = &mut self.power_limit {
                let admitted = l.admit(res, done, start, self.power.joules(energy));
                if admitted > start {
                    start = admitted;
                    gc = self.collection(&cost, start).0;
                }
            }
            let earlier = std::mem::replace(&mut self.gc[die as usize], gc);
            if earlier.end > done {
                self.gc_replaced.retain(|(_, g)| g.end > done);
                self.gc_replaced.push((die, earlier));
            }
            self.replace_register_at(die, start);
            res[die_res as usize].busy_ns += gc.end - gc.start;
            self.die_free.raise(die as usize, gc.end);
            self.energy.add(energy);
            if self.ftl.wants_compaction() {
                self.compact_ftl();
            }
        }
        full
    }

    /// Compacts the FTL's node table and renumbers the node ids held here: the page
    /// registers' (a register whose node was collected or erased matches nothing, as before)
    /// and the old copies of partly rewritten LPNs (wherever their data is now).
    #[cold]
    pub(super) fn compact_ftl(&mut self) {
        let held = self.registers.iter().map(|r| r.unit.0);
        let old_copies = self
            .partial_lpns
            .iter()
            .filter_map(|b| b.old.map(|o| o.node));
        let ids = self.ftl.compact(held.chain(old_copies));
        for r in &mut self.registers {
            r.unit.0 = ids.same(r.unit.0);
        }
        for old in self.partial_lpns.iter_mut().filter_map(|b| b.old.as_mut()) {
            old.node = ids.holder(old.node);
        }
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
        // A die's programs alternate between lower and upper pages (the MLC program order
        // interleaves them across neighbouring wordlines).
        let programs = &mut self.programs[unit.die as usize];
        let t_prog = match &self.slc {
            Some(c) if unit.slc => c.program_ns,
            _ => self.program_ns[(*programs & 1) as usize],
        };
        *programs = programs.wrapping_add(1);
        // The program needs the space the die's collection is freeing, and room in the power
        // budget for its load and tPROG.
        let mut free = unit
            .ready
            .max(res[die_res as usize].busy_until)
            .max(self.gc[unit.die as usize].end);
        if let Some(l) = &mut self.power_limit {
            let p = &self.power;
            let joules = (xfer as f64 * p.channel_w + t_prog as f64 * p.die_program_w) / 1e9;
            free = l.admit(res, at, free, joules);
        }
        let loaded = self.load_channel(res, chan, at, free, xfer);
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

    /// Books `d` of read data-out on channel `chan` from `at`, ahead of the program data loads
    /// queued behind the one in progress (as for the die's reads).
    pub(super) fn read_channel(&mut self, res: &mut [Res], chan: ResId, at: u64, d: u64) -> u64 {
        let i = (chan - self.chans[0]) as usize;
        let ready = at.max(self.chan_read_until[i]);
        let loads = &mut self.loads_booked[i];
        let start = after_the_one_in_progress(loads, at, ready);
        if let Some(l) = &mut self.power_limit {
            l.charge(res, at, d as f64 * self.power.channel_w / 1e9);
        }
        self.chan_read_until[i] = go_ahead(res, chan, loads, start, d);
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
    pub(super) fn chan_of(&self, d: u32) -> ResId {
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

    /// Busy time of the channels, from the busy time of every resource.
    pub fn channel_busy(&self, busy_ns: &[u64]) -> u64 {
        self.chans.iter().map(|&c| busy_ns[c as usize]).sum()
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
            carried: false,
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
        self.carried = Carried {
            from: now,
            charged_to: now,
            ..Carried::default()
        };
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
                    carried: true,
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
        if let Some(l) = &mut self.power_limit {
            // The dies draw it evenly until their collections end.
            let c = &self.carried;
            let die_ns: u64 = c.die_busy.iter().map(|&(_, ns)| ns).sum();
            let watts = self.power.joules(c.energy) * 1e9 / die_ns.max(1) as f64;
            for &(_, ns) in &c.die_busy {
                l.add_background(now, now + ns, watts);
            }
        }
    }

    /// Charges the part of the collection work carried from an analytic steady state that has
    /// run by `now` (`u64::MAX`: all of it): the dies' busy time, energy, and the pages moved
    /// and erased (write amplification). A job's report then holds what ran during the job: a
    /// job shorter than the carried collections would otherwise take all of their energy and
    /// pages (a 100-write job reported 7.7 kW and a write amplification of 2,500).
    pub fn charge_carried(&mut self, res: &mut [Res], now: u64) {
        let c = &mut self.carried;
        let total = c.done_by(u64::MAX);
        if total == 0 || now <= c.charged_to {
            return;
        }
        let (before, after) = (c.done_by(c.charged_to), c.done_by(now));
        let elapsed = |t: u64| t.saturating_sub(c.from);
        for &(die, ns) in &c.die_busy {
            res[die as usize].busy_ns += ns.min(elapsed(now)) - ns.min(elapsed(c.charged_to));
        }
        // Each total in proportion to the die time run; the last charge gives exactly the rest.
        let part = |x: u64| {
            let by = |done: u64| (x as u128 * done as u128 / total as u128) as u64;
            by(after) - by(before)
        };
        self.energy.add(Energy {
            read_ns: part(c.energy.read_ns),
            program_ns: part(c.energy.program_ns),
            erase_ns: part(c.energy.erase_ns),
        });
        self.ftl.counters.gc_units += part(c.gc_units);
        self.ftl.counters.erased_units += part(c.erased_units);
        c.charged_to = now;
        if after == total {
            self.carried = Carried::default();
        }
    }

    /// The NAND work booked to run after `now`: programs (their data loads on the channels
    /// apart) and collections, less those carried from an analytic steady state (charged as
    /// they run). Work is counted when it is booked, up to a second ahead behind a die's
    /// collection; a report of what ran during a job takes this off at both of its ends,
    /// or a short job would report the energy of programs it left queued (a 1 s job at the
    /// SSD 750's 25 W limit reported 28 W). Host reads are not counted: one held by a power limit
    /// starts no further ahead than the budget time of the reads the host has in flight.
    pub fn booked_ahead(&self, now: u64) -> Ahead {
        let mut ahead = Ahead::default();
        let (read_ns, program_ns) = (mean_of(self.read_ns), mean_of(self.program_ns));
        let load_ns = (self.unit_bytes as f64 * self.chan_ns_per_byte) as u64;
        let collection = |ahead: &mut Ahead, gc: &GcWork| {
            if gc.carried {
                return 0;
            }
            let (copies, erases) = gc.after(now);
            let copy_ns = gc.copy_ns.max(1);
            ahead.energy.read_ns += copies * read_ns / copy_ns;
            ahead.energy.program_ns += copies * program_ns / copy_ns;
            ahead.energy.erase_ns += erases;
            copies + erases
        };
        for (d, &die) in self.dies.iter().enumerate() {
            let mut busy = collection(&mut ahead, &self.gc[d]);
            for &(start, end) in self.programs_booked[d].iter().rev() {
                if end <= now {
                    break;
                }
                busy += part_after((start, end), now);
                // The die programs after its data is loaded (a full unit's load assumed).
                let program_from = (start + load_ns).min(end);
                ahead.energy.program_ns += part_after((program_from, end), now);
            }
            for (_, gc) in self.gc_replaced.iter().filter(|(g, _)| *g == d as u32) {
                busy += collection(&mut ahead, gc);
            }
            if busy > 0 {
                ahead.busy.push((die, busy));
            }
        }
        for (c, &chan) in self.chans.iter().enumerate() {
            let busy: u64 = self.loads_booked[c]
                .iter()
                .rev()
                .take_while(|&&(_, end)| end > now)
                .map(|&b| part_after(b, now))
                .sum();
            if busy > 0 {
                ahead.busy.push((chan, busy));
            }
        }
        ahead
    }

    /// Whether the latest data of any LPN of `[offset, offset + len)` is still only in the
    /// write buffer at `at` (in the open program unit, or in one whose program has not ended).
    pub fn holds_volatile(&self, offset: u64, len: u64, at: u64) -> bool {
        let (first, last) = (offset / 4096, (offset + len.max(1) - 1) / 4096);
        (first..=last).any(|lpn| self.buffered.holds(lpn, at))
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
    fn a_read_held_by_the_budget_waits_for_the_program_in_progress_when_it_is_let_go() {
        let booked: VecDeque<(u64, u64)> = [(100, 200), (300, 400)].into_iter().collect();
        assert_eq!(
            past_the_one_in_progress_at(&booked, 50),
            50,
            "nothing started yet"
        );
        assert_eq!(past_the_one_in_progress_at(&booked, 100), 200);
        assert_eq!(
            past_the_one_in_progress_at(&booked, 250),
            250,
            "between two programs"
        );
        assert_eq!(past_the_one_in_progress_at(&booked, 399), 400);
        assert_eq!(past_the_one_in_progress_at(&booked, 400), 400, "all over");
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
    fn a_read_waits_for_the_collection_operation_in_progress_only() {
        let mut gc = GcWork {
            start: 1_000,
            copy_ns: 100,
            copies_end: 1_500,
            erase_ns: 300,
            end: 2_100,
            carried: false,
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
}
