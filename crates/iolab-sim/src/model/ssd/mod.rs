//! An SSD: controller cores, write buffer, FTL, channels × dies, page registers, SLC cache.
//!
//! Rooms: `nand` (page times, registers, reads on dies and channels), `booking` (time booked
//! ahead on dies and channels), `buffer` (the write buffer), `slc` (the SLC cache), `partial`
//! (writes of part of an LPN) and `gc` (garbage collection).

use crate::buffered::BufferedLpns;
use crate::earliest::Earliest;
use crate::ftl::Ftl;
use crate::model::power::{Awake, Energy, Power, PowerLimit};
use crate::model::resource::{reserve, transfer_through, Pipe, Res, ResId, ResKind};
use std::collections::VecDeque;

mod booking;
mod buffer;
mod gc;
mod nand;
mod partial;
mod slc;
#[cfg(test)]
mod tests;

use booking::*;
use buffer::WriteBuffer;
pub(super) use gc::GcWork;
use gc::{copies_of, Carried};
pub(super) use nand::upper_page;
use nand::*;
pub(super) use partial::ReadFrom;
use partial::*;
pub use slc::SlcCache;

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
    /// The flash-side write path every program unit's data crosses before its channel load
    /// ([`ControllerSpec::nand_write_bytes_per_s`](crate::catalog::ControllerSpec)).
    program_path: Option<Pipe>,
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
    /// Channel time per byte of data out of a die (reads, a copy's first half).
    pub(super) chan_ns_per_byte: f64,
    /// Channel time per byte of data into a die (program loads, a copy's second half).
    pub(super) chan_load_ns_per_byte: f64,
    /// RAISE: a parity program unit after every this many units of data (0: none), and the
    /// units of data since the last one.
    pub(super) parity_every: u32,
    parity_due: u32,
    /// Bytes of parity programmed (host stripes and collections' copies), NAND writes beside
    /// the FTL's.
    pub parity_bytes: u64,
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
    /// Ceiling of the program data handed to the channels.
    pub program_bps: Option<f64>,
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
    /// Channel bytes/s out of the dies (read data).
    pub chan_bps: f64,
    /// Channel bytes/s into the dies (program data).
    pub chan_write_bps: f64,
    /// RAISE: one parity program unit after every this many units of data (0: none).
    pub parity_every: u32,
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

/// When a write's data has reached the drive: all of it at `at`, streamed in over the
/// `over_ns` before (0: all at once).
#[derive(Clone, Copy, Debug)]
pub(in crate::model) struct DataArrival {
    pub at: u64,
    pub over_ns: u64,
}

impl DataArrival {
    /// When the first `part` of `whole` (LPNs, bytes: any unit) has arrived.
    fn of(&self, part: u64, whole: u64) -> u64 {
        let left = whole.saturating_sub(part) as u128;
        self.at - (self.over_ns as u128 * left / whole.max(1) as u128) as u64
    }
}

/// A write into an SSD (its data already through the write datapath, see `leaf_submit`): into
/// the buffer, LPNs mapped into the open program unit, full units programmed (after GC if the
/// die's pool is low). Returns when the write is buffered (its completion).
pub(super) fn ssd_write(
    ssd: &mut Ssd,
    res: &mut [Res],
    offset: u64,
    len: u64,
    data: DataArrival,
    share: f64,
) -> u64 {
    let at = data.at;
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
    // The data is taken a program unit's worth at a time, each piece once it has streamed in
    // and the buffer has room for it, so a write larger than the free room fills units while
    // the programs ahead of it end. Taken whole once all of it had arrived, a 16 MB write
    // into a 4 MiB buffer waited for every program before it and then held more than the
    // buffer: a drive collecting garbage wrote AS SSD's 16 MB blocks with its channels idle
    // 43 % of the time, where 128 KiB writes kept them busy.
    let lpns = last - first + 1;
    let lpns_per_piece = (ssd.unit_bytes / lpn_bytes).max(1);
    let mut done = at;
    let mut piece = first;
    while piece <= last {
        let piece_last = last.min(piece + lpns_per_piece - 1);
        let arrived = data.of(piece_last - first + 1, lpns);
        done = ssd
            .buffer
            .admit(arrived, (piece_last - piece + 1) * lpn_bytes);
        for lpn in piece..=piece_last {
            if ssd.place_lpn(res, lpn, units_per_lpn, done) {
                let unit = ssd.open.take().expect("placed in the open unit");
                ssd.program_unit(res, unit, arrived);
            }
        }
        piece = piece_last + 1;
    }
    done
}

/// A TRIM on an SSD: every whole 4 KiB LPN of the range drops its data, as an overwrite's old
/// copy does (garbage collection then has less to move). Its cost is the firmware's command,
/// booked by the caller, as the trace path charges no NAND work for a TRIM. A drive without
/// TRIM keeps everything, and so does an LPN only partly in the range or still in the open
/// program unit (its data lands when the unit is programmed).
pub(super) fn ssd_trim(ssd: &mut Ssd, offset: u64, len: u64) {
    if !ssd.trim {
        return;
    }
    let first = offset.div_ceil(4096);
    let end = ((offset + len) / 4096).min(ssd.ftl.lpns());
    if first >= end {
        return;
    }
    let open = ssd.buffered.in_open_unit(first, end - 1) || !ssd.partial_lpns.is_empty();
    for lpn in first..end {
        if open && ssd.buffered.in_open_unit(lpn, lpn) {
            continue;
        }
        ssd.ftl.invalidate(lpn);
        if let Some(c) = &mut ssd.slc {
            // Its copy in the SLC cache is stale now: nothing to fold.
            c.set_held(lpn, false);
        }
    }
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
    let program_path = p.program_bps.map(|r| {
        Pipe::rate(
            add(ResKind::DataPath, format!("{group} program datapath")),
            r,
        )
    });
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
        program_path,
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
        chan_load_ns_per_byte: 1e9 / p.chan_write_bps,
        parity_every: p.parity_every,
        parity_due: 0,
        parity_bytes: 0,
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
            if self.parity_every > 0 {
                let copied = cost.moved_units * self.ftl.unit_bytes as u64;
                self.parity_bytes += copied / self.parity_every as u64;
            }
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
            // The copies' channel transfers draw as they run, spread over the copies (a
            // collection's die work is admitted at once; adding the channel's to that lump held
            // host reads behind it, up to 12 ms on the SSD 750).
            let chan_joules =
                (copies_of(&gc) * self.copy_transfer_ns()) as f64 * self.power.channel_w / 1e9;
            if let Some(l) = &mut self.power_limit {
                if gc.copies_end > done && chan_joules > 0.0 {
                    let watts = chan_joules * 1e9 / (gc.copies_end - done) as f64;
                    l.add_background(done, gc.copies_end, watts);
                }
            }
            self.book_copy_transfers(res, die, &gc, gc.start);
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
    /// programmed once the die, its collection and those reads allow. A drive with a parity die
    /// then programs a stripe's parity when the unit completes one.
    fn program_unit(&mut self, res: &mut [Res], mut unit: OpenUnit, at: u64) {
        if !self.partial_lpns.is_empty() {
            unit.ready = unit.ready.max(self.read_rest_of_partial_lpns(res, at));
        }
        let end = self.book_program(res, &unit, at);
        self.buffer.release_at(end, unit.fill);
        self.buffered.programmed(end);
        if self.parity_every > 0 {
            self.parity_due += 1;
            if self.parity_due == self.parity_every {
                // RAISE: the controller computes the stripe's parity from its data and programs
                // it as one more unit, on the die that frees up first. It maps no LPN: its room
                // is the die's worth the array keeps for parity (`parity_die`).
                self.parity_due = 0;
                let parity = OpenUnit {
                    die: self.die_free.earliest() as u32,
                    fill: self.unit_bytes,
                    ready: unit.ready,
                    slc: false,
                };
                self.book_program(res, &parity, at);
                self.parity_bytes += self.unit_bytes;
            }
        }
    }

    /// Books `unit`'s load over its die's channel and its program, from `at`, once the die,
    /// its collection and the power budget allow; returns when the program ends.
    fn book_program(&mut self, res: &mut [Res], unit: &OpenUnit, at: u64) -> u64 {
        let die_res = self.dies[unit.die as usize];
        let chan = self.chan_of(unit.die);
        let xfer = (unit.fill as f64 * self.chan_load_ns_per_byte) as u64;
        // PAGE PROGRAM (80h-10h): the data is clocked into the die's page register, then
        // tPROG; the die takes no new data until tPROG ends, so a load waits for its die and
        // the die is busy for load + tPROG. Dies sharing a channel interleave their loads, and
        // a drive with fewer dies per channel loses that overlap (calibration source testbeds-b: twice the
        // dies, 70-90 % faster incompressible writes). The parts also offer PROGRAM PAGE CACHE
        // (80h-15h), which would hide the load; the published figures say the controllers of
        // the catalog do not gain from it: with it, the Vertex LE's 32 dies would write 2 MB
        // at the SATA ceiling (~265 MB/s) instead of the 217-248 MB/s measured (calibration
        // source anandtech-2973), and Force 3's 4 KiB QD32 write gap would shrink to 1.2x from the 1.55-1.85x
        // measured.
        // A die's programs alternate between lower and upper pages (the MLC program order
        // interleaves them across neighbouring wordlines).
        let programs = &mut self.programs[unit.die as usize];
        let t_prog = match &self.slc {
            Some(c) if unit.slc => c.program_ns,
            _ => self.program_ns[(*programs & 1) as usize],
        };
        *programs = programs.wrapping_add(1);
        // The program needs space on the die (see [`Ssd::program_may_start`]) and room in the
        // power budget for its load and tPROG.
        let d = unit.die as usize;
        let mut free = self.program_may_start(d, unit.ready.max(res[die_res as usize].busy_until));
        if let Some(l) = &mut self.power_limit {
            let p = &self.power;
            let joules = (xfer as f64 * p.channel_w + t_prog as f64 * p.die_program_w) / 1e9;
            let admitted = l.admit(res, at, free, joules);
            free = self.collection_op_end(d, admitted);
        }
        // The controller's flash-side path hands the unit's data on once it has passed it
        // (units in the order they are booked; a collection's copies, booked as a lump, do
        // not take it), and the load then waits for the collection's operation in progress.
        if let Some(p) = &self.program_path {
            let from = at.max(unit.ready);
            let passed = transfer_through(res, std::iter::once(p), from, from, unit.fill);
            if passed > free {
                free = self.collection_op_end(d, passed);
            }
        }
        let loaded = self.load_channel(res, chan, at, free, xfer);
        let end = reserve(res, die_res, loaded - xfer, xfer + t_prog);
        let start = end - xfer - t_prog;
        // The program runs between two operations of a collection (or just before one): what
        // is left of that collection, and of those booked after it, waits for it.
        let delay = self
            .pending_collections(d, start)
            .map(|g| g.overlap(start, end))
            .max();
        if let Some(delay) = delay.filter(|&ns| ns > 0) {
            self.delay_pending_collections(d, start, delay);
        }
        self.die_free.raise(d, end.max(self.gc[d].end));
        let booked = &mut self.programs_booked[d];
        forget_over(booked, at);
        booked.push_back((start, end));
        self.replace_register_at(unit.die, start);
        self.energy.program_ns += t_prog;
        end
    }

    /// When a host program on die `d`, ready at `t`, may start. Firmware collects garbage in
    /// steps that host work goes between while the die has room for it: MQSim's preemptible
    /// collection (its default `Preemptible_GC_Enabled`, after Lee et al., "Preemptible I/O
    /// Scheduling of Garbage Collection for Solid State Drives", IEEE TCAD 2013) gives user
    /// programs priority over a collection's until the plane's free blocks run out, then the
    /// collection's go first. Here a program waits for the collection's operation in
    /// progress, not for the whole collection, when the die has room at `t`: the FTL's free
    /// space less what the die's collections in progress have still to give back (they give
    /// it back as they run, see [`GcWork::unreclaimed`]). Without room it waits until they
    /// have given back enough. Waiting for whole collections held every host program of a
    /// drive whose dies reach the threshold together (random writes spread them evenly) for
    /// the length of one: seconds at 0 IOPS as the spare area ran out.
    fn program_may_start(&self, d: usize, t: u64) -> u64 {
        let owed: u64 = self
            .pending_collections(d, t)
            .map(|g| g.unreclaimed(t))
            .sum();
        let mut short = owed.saturating_sub(self.ftl.free_units(d as u32));
        let mut at = t;
        // Collections on a die run one after another, so the earlier ones give back first.
        let mut pending = self.pending_collections(d, t);
        while short > 0 {
            let Some(g) = pending.next() else { break };
            let have = g.unreclaimed(at);
            at = g.reclaimed_by(at, short);
            short = short.saturating_sub(have);
        }
        self.collection_op_end(d, at)
    }

    /// Die `d`'s collections that have not ended by `t`, in the order they run: those a later
    /// one replaced in [`Ssd::gc`] (booked in turn, each after the one before), then the latest.
    fn pending_collections(&self, d: usize, t: u64) -> impl Iterator<Item = &GcWork> {
        let replaced = self
            .gc_replaced
            .iter()
            .filter(move |(die, _)| *die as usize == d);
        replaced
            .map(|(_, g)| g)
            .chain(std::iter::once(&self.gc[d]))
            .filter(move |g| g.end > t)
    }

    /// Moves what is left of die `d`'s collections not ended by `t` back by `ns` (the same
    /// collections as [`Ssd::pending_collections`], mutably).
    fn delay_pending_collections(&mut self, d: usize, t: u64, ns: u64) {
        let replaced = self
            .gc_replaced
            .iter_mut()
            .filter(|(die, _)| *die as usize == d)
            .map(|(_, g)| g);
        for g in replaced.chain(std::iter::once(&mut self.gc[d])) {
            if g.end > t {
                g.delay(ns);
            }
        }
    }

    /// `t`, or the end of the collection operation in progress on die `d` at `t`.
    fn collection_op_end(&self, d: usize, t: u64) -> u64 {
        self.pending_collections(d, t).fold(t, |t, g| g.op_end(t))
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
