//! A request's way down one leaf (a member drive), one phase per function: the drive it holds
//! awake, the host path down (the SATA link, the command stages, a write's data), the SSD's
//! command, then an SSD's write or its read in chunks, or a hard disk's cache, buffer or queue.

use super::hdd::HddCmd;
use super::resource::{
    earliest_free, occupy, reserve, reserve_any, stream_through, transfer_through,
};
use super::ssd::{lpn_span, ssd_trim, ssd_write, upper_page, DataArrival, ReadFrom};
use super::{ChunkEv, Dev, Hdd, Io, Pipe, Res, Ssd, World, FROM_HDD_CACHE, INTERNAL, NO_CHAN};
use crate::timeq::TimeQueue;
use iolab_core::job::Direction;

/// One request (or a volume's piece of one) on one leaf.
#[derive(Clone, Copy, Debug)]
struct LeafIo {
    li: u32,
    tag: u32,
    dir: Direction,
    offset: u64,
    len: u64,
}

impl World {
    /// Submits `len` bytes at `offset` of leaf `li` at `t`.
    pub(super) fn leaf_submit(
        &mut self,
        li: u32,
        tag: u32,
        dir: Direction,
        offset: u64,
        len: u64,
        t: u64,
    ) {
        let io = LeafIo {
            li,
            tag,
            dir,
            offset,
            len,
        };
        self.hold_awake(io, t);
        let (at, command_done, data_ns) = self.path_down(io, t);
        let status_ns = self.leaves[li as usize].status_ns;
        let share = if tag == INTERNAL {
            1.0
        } else {
            self.stored_share[tag as usize]
        };
        match &mut self.leaves[li as usize].dev {
            Dev::Ssd(ssd) => {
                let at = ssd_command(ssd, &mut self.res, dir, at, command_done);
                match dir {
                    Direction::Write => {
                        let data = DataArrival {
                            at,
                            over_ns: data_ns,
                        };
                        let done = ssd_write(ssd, &mut self.res, offset, len, data, share);
                        let done = done + status_ns;
                        self.chunk_add(tag, done);
                    }
                    Direction::Read => {
                        io.ssd_read(ssd, &mut self.res, &mut self.ios, &mut self.events, at)
                    }
                    Direction::Trim => {
                        ssd_trim(ssd, offset, len);
                        self.chunk_add(tag, at + status_ns);
                    }
                }
            }
            // A hard disk has no TRIM: the command is taken and does nothing.
            Dev::Hdd(h) if dir == Direction::Trim => {
                let done = at + h.command_ns + status_ns;
                self.chunk_add(tag, done);
            }
            Dev::Hdd(h) => {
                if let Some(done) = io.hdd_take(h, &mut self.ios, &mut self.events, at) {
                    self.chunk_add(tag, done + status_ns);
                }
                self.hdd_dispatch(li, at);
            }
        }
    }

    /// A host request keeps an SSD awake while it holds it (when power is modelled).
    fn hold_awake(&mut self, io: LeafIo, t: u64) {
        if self.track_awake && io.tag != INTERNAL {
            if let Dev::Ssd(ssd) = &mut self.leaves[io.li as usize].dev {
                let held = &mut self.held[io.tag as usize];
                if !held.contains(&io.li) {
                    held.push(io.li);
                    ssd.awake.begin(t);
                }
            }
        }
    }

    /// Down the path: the command (and a write's data) crosses every pipe. Returns when it
    /// reaches the drive; for a write whose firmware core received the data in line, when that
    /// core has run the command; and how long a write's data took to stream in (its first
    /// bytes reach the drive that much before the last; 0 where it is taken in line).
    fn path_down(&mut self, io: LeafIo, t: u64) -> (u64, Option<u64>, u64) {
        let leaf = &self.leaves[io.li as usize];
        let res = &mut self.res[..];
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
        // When a firmware core that received a write's data in line has run its command.
        let mut command_done = None;
        let mut data_ns = 0;
        if io.dir == Direction::Write {
            // The data streams from the host link straight into the drive's write datapath
            // (cut-through: a SATA data FIS is at most 8 KiB, so the drive never holds a whole
            // large request before passing it on).
            match &leaf.dev {
                Dev::Ssd(ssd) if ssd.write_data_in_line => {
                    let done = receive_in_line(res, &leaf.down, ssd, at, io.len);
                    command_done = Some(done);
                }
                Dev::Ssd(ssd) => {
                    let chain = leaf.down.iter().chain(ssd.write_path.as_ref());
                    let from = at;
                    at = transfer_through(res, chain, at, at, io.len);
                    data_ns = at - from;
                }
                Dev::Hdd(_) => at = transfer_through(res, leaf.down.iter(), at, at, io.len),
            }
        } else {
            for p in &leaf.down {
                at += p.hop_ns;
            }
        }
        (at, command_done, data_ns)
    }
}

/// When an SSD's firmware has run a command that reached it at `at` (or that a core received
/// in line, done at `command_done`), plus the drive's fixed latency.
fn ssd_command(
    ssd: &Ssd,
    res: &mut [Res],
    dir: Direction,
    at: u64,
    command_done: Option<u64>,
) -> u64 {
    let cmd = if dir == Direction::Write {
        ssd.write_command_ns
    } else {
        ssd.command_ns
    };
    (match command_done {
        Some(done) => done,
        None => reserve_any(res, &ssd.cores, at, cmd),
    }) + ssd.latency_ns
}

impl LeafIo {
    /// An SSD's read from `at`: in chunks, each an event when its data is ready to go up.
    fn ssd_read(
        self,
        ssd: &mut Ssd,
        res: &mut [Res],
        ios: &mut [Io],
        events: &mut TimeQueue<ChunkEv>,
        at: u64,
    ) {
        let LeafIo {
            li,
            tag,
            offset,
            len,
            ..
        } = self;
        let (first, last) = lpn_span(offset, len);
        let unit_lpns = ssd.unit_bytes / 4096;
        // The host's reads only: a tier's own copies are not what a job read.
        let host_read = tag != INTERNAL;
        if host_read {
            ssd.read_bytes += len;
        }
        // Whether any data is in the buffer (a read-only run has none).
        let any_buffered = ssd.buffered.any_at(at);
        let mut lpn = first;
        while lpn <= last {
            // A chunk: consecutive LPNs of one program unit on one die, or one LPN still in
            // the buffer, where the controller reads it from DRAM (it is not on NAND yet) or,
            // for sectors a partial rewrite left out, from its old copy.
            let from = if any_buffered {
                ssd.read_from(lpn, offset, len, at)
            } else {
                ReadFrom::Mapped
            };
            let (block, mut nand) = match from {
                ReadFrom::Buffer => (None, 0),
                ReadFrom::OldCopy(old) => (Some((old.node, old.die)), old.bytes as u64),
                ReadFrom::Mapped => (ssd.ftl.block_of(lpn), ssd.ftl.stored_bytes(lpn) as u64),
            };
            let die = block.map(|(_, d)| d);
            let mut n = 1;
            while from == ReadFrom::Mapped
                && lpn + n <= last
                && (lpn + n) % unit_lpns != 0
                && ssd.ftl.die_of(lpn + n) == die
                && !(any_buffered && ssd.read_from(lpn + n, offset, len, at) != ReadFrom::Mapped)
            {
                nand += ssd.ftl.stored_bytes(lpn + n) as u64;
                n += 1;
            }
            let lo = (lpn * 4096).max(offset);
            let hi = ((lpn + n) * 4096).min(offset + len);
            let host = hi - lo;
            if from == ReadFrom::Buffer && host_read {
                ssd.buffer_read_bytes += host;
            }
            let (ready, chan) = match block {
                Some((node, d)) => {
                    // The die is busy for tR only: READ PAGE CACHE RANDOM (00h-31h, in
                    // Micron's parallel NAND command set and its public Verilog model) moves
                    // the page to the cache register, so the die reads its next page while
                    // this one is clocked out over the channel.
                    // Which page of its wordline an LPN landed in is not tracked: a hash of its
                    // program unit stands in, so half of every die's reads are upper pages (the
                    // unit number's own parity would give whole dies one kind when units are
                    // striped over an even number of dies).
                    let unit = lpn / unit_lpns;
                    let t_r = ssd.read_ns[upper_page(unit)];
                    let end = ssd.read_unit(res, d, (node, unit), at, t_r);
                    (end, ssd.chan_of(d))
                }
                // Unwritten data is not on NAND: the controller returns zeros.
                None => (at, NO_CHAN),
            };
            if tag != INTERNAL {
                ios[tag as usize].pending += 1;
            }
            events.push(
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

    /// A hard disk takes the request at `at`. A write the cache takes is acknowledged once in
    /// it (and written later, in the drive's own order): returns when. One it has no room for
    /// waits until destages make it, or, lacking more than a destage frees, is written through
    /// (`waits_for_room`). A read of data in the cache or the read look-ahead's buffer is an
    /// event; anything else joins the drive's queue.
    fn hdd_take(
        self,
        h: &mut Hdd,
        ios: &mut [Io],
        events: &mut TimeQueue<ChunkEv>,
        at: u64,
    ) -> Option<u64> {
        let LeafIo {
            li,
            tag,
            dir,
            offset,
            len,
        } = self;
        let cached = dir == Direction::Write && len <= h.cache_bytes;
        if cached && h.cache_waiting.is_empty() && h.cache_fits(offset, len, at) {
            return Some(h.cache_write(offset, len, at, tag == INTERNAL));
        }
        if tag != INTERNAL {
            ios[tag as usize].pending += 1;
        }
        if cached && h.waits_for_room(len, at) {
            h.host_waits += 1;
            h.cache_waiting.push_back((tag, offset, len));
        } else if dir == Direction::Read
            && (h.holds_dirty(offset, len) || h.read_ahead_hit(offset, len, at))
        {
            // Written and not yet destaged: the data is in the write cache, and drives serve
            // reads of it from there (Seagate's SCSI product manuals, "Caching write data":
            // written data is kept for later read hits). Data destaged since is not tracked,
            // so such a read goes to the platters. Or the read look-ahead has brought it into
            // the buffer (`Hdd::read_ahead_hit`): served from there too, whatever the actuator
            // does meanwhile. Either leaves the actuator idle, so the disk may destage as it
            // does when idle.
            events.push(
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
            h.host_waits += 1;
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
                joins: false,
                copy: tag == INTERNAL,
            });
        }
        None
    }
}

/// A write on an SSD whose firmware core receives the data in line: the first core to be free
/// opens the data phase, is busy until the data has crossed the host path `down`, then runs the
/// command. Returns when the command is done and the drive's write datapath has passed the data
/// on.
#[cold]
fn receive_in_line(res: &mut [Res], down: &[Pipe], ssd: &Ssd, at: u64, len: u64) -> u64 {
    let core = earliest_free(res, &ssd.cores);
    let start = at.max(res[core as usize].busy_until);
    let (head, tail) = stream_through(res, down.iter(), start, start, len);
    let command_done = occupy(res, core, start, tail - start + ssd.write_command_ns);
    let passed_on = transfer_through(res, ssd.write_path.iter(), head, tail, len);
    command_done.max(passed_on)
}
