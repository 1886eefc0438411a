//! A hard disk: one actuator (seek curve, rotation, zoned media rate), NCQ and a write cache.

use super::power::Power;
use super::resource::{Res, ResId, ResKind};
use super::{ChunkEv, Dev, World, HDD_WAKE, INTERNAL, NO_CHAN};
use iolab_core::rng::Rng;
use std::collections::VecDeque;

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
    /// Nanoseconds per byte on the outermost track.
    outer_npb: f64,
    /// (inner rate / outer rate)²: the innermost track's radius over the outermost's, squared.
    inner_area_ratio: f64,
    pub(super) command_ns: u64,
    head: u64,
    last_end: u64,
    last_done: u64,
    rng: Rng,
    /// Power law.
    pub power: Power,
    /// Seek+transfer busy time.
    pub busy_ns: u64,
    /// Commands received and not started (NCQ), in arrival order.
    pub(super) queue: Vec<HddCmd>,
    /// How many of them are the host's (not destages).
    pub(super) host_queued: u32,
    /// Host commands that waited for the actuator, so far: reads and writes it had to serve,
    /// and writes that waited for room in the cache. With none, its busy time was the cache's
    /// destaging in the background, which held no host command back.
    pub host_waits: u64,
    /// A command is on the actuator: its completion starts the next.
    pub(super) in_flight: bool,
    /// Commands the drive chooses among (its NCQ depth).
    reorder_window: u32,
    /// Write cache: bytes it holds for written data.
    pub(super) cache_bytes: u64,
    /// Write cache: bytes acknowledged and not yet on the platters, but for those of the
    /// destage on the actuator, which leave at `destage_end`.
    dirty_bytes: u64,
    /// The destage on the actuator: its end and its bytes.
    destage_end: u64,
    destage_bytes: u64,
    /// Write cache: how many segments (runs of written data) it holds at most; 0: as many
    /// as its bytes allow.
    pub(super) cache_segments: u32,
    /// Write cache: segments holding data not yet on the platters, but for the one the
    /// destage on the actuator empties, which leaves at `destage_end` (`destage_frees`).
    dirty_segments: u32,
    destage_frees: bool,
    /// Writes waiting for room in the write cache: tag, offset, length.
    pub(super) cache_waiting: VecDeque<(u32, u64, u64)>,
    /// When the last command that was not a destage ends on the actuator: the cache destages
    /// once the disk has idled [`DESTAGE_IDLE_NS`] since.
    host_end: u64,
    /// The time of the wake-up queued to start a destage when the disk has idled, if any.
    pub(super) wake_at: Option<u64>,
    /// The read look-ahead's segment of the buffer.
    read_ahead: ReadAhead,
}

/// The data the read look-ahead has brought into the drive's buffer: after a read, the head
/// reads on past its end until the actuator is given another command, and a later read of what
/// it holds is served from the buffer, whatever the actuator ran in between (Seagate's product
/// manuals, e.g. Cheetah 15K.6, "Prefetch operation": the blocks beyond a read are "stored in
/// the buffer for immediate transfer from the buffer to the host on subsequent Read commands";
/// Fujitsu MPG3xxxAH product manual, "Read-Ahead Cache": "transferred from the data buffer
/// without accessing the disk medium"). A write does not empty it: the blocks it writes stop
/// being served from the look-ahead's copy (Fujitsu MAU3xxxRC product manual, "Look-Ahead
/// Cache Feature": "that data block ceases to be an object of caching"), and the drive keeps
/// the written data for reads in their place (Seagate, "Caching write data"), so for timing
/// every block of the segment stays a hit. Seagate's SCSI drives clear the whole segment a
/// write overlaps instead; this drive's firmware is not published, and per block is assumed.
#[derive(Clone, Copy, Debug, Default)]
struct ReadAhead {
    /// Its first byte (the start of the read it began after).
    lo: u64,
    /// What it held when the head last left it for another command: it holds at least this.
    held: u64,
    /// The head reads ahead from `from` since `since`, until `until` (u64::MAX: still).
    from: u64,
    since: u64,
    until: u64,
    /// It stops [`READ_AHEAD_BYTES`] past the end of the last read it served.
    cap: u64,
}

/// How far the read look-ahead reads past the end of the last read it served. Not published
/// for this drive (ATA does not report how the buffer is divided): assumed 2 MiB, about the
/// read segment of Fujitsu's 2 MB-buffer ATA drives (MPG3xxxAH product manual, "Data buffer
/// configuration": 1,968 KB of the buffer for read and write commands). The figures measured
/// for it did not move between 128 KiB and 8 MiB: at QD1 the look-ahead stays some 20-150 KB
/// ahead of a 4 KiB stream.
const READ_AHEAD_BYTES: u64 = 2 << 20;

/// How long a hard disk waits with no host command before it destages its write cache, where
/// no write waits for room. Between two commands of a host's queue-depth-1 stream the disk is
/// idle for the host's turnaround, microseconds: a destage started there held each read of the
/// stream behind it and a seek back (43 ms per 128 KiB sequential read after a fill, against
/// 0.9 ms with a clean cache). A drive destages in idle time, and the gap a host leaves between
/// two commands it sends back to back is not idle time; the threshold is assumed, far above a
/// host's turnaround and far below the time a destage of the cache takes. With host commands
/// queued, destages compete with them as `hdd_dispatch` says.
const DESTAGE_IDLE_NS: u64 = 1_000_000;

/// A command queued in a hard disk.
#[derive(Clone, Copy, Debug)]
pub(super) struct HddCmd {
    pub(super) tag: u32,
    pub(super) arrive: u64,
    pub(super) offset: u64,
    pub(super) len: u64,
    /// Bytes it sends up to the host (a read's data).
    pub(super) host_bytes: u32,
    /// Writes data the drive has already acknowledged from its write cache.
    pub(super) destage: bool,
    /// A destage whose data continued a write still in the cache when it came: it shares
    /// that write's segment of the cache.
    pub(super) joins: bool,
    /// Part of a tier's copy (its read, or the destage of its write), which the tier's mover
    /// waits for; a destage of the host's writes is not, though its tag is [`INTERNAL`] too.
    pub(super) copy: bool,
}

/// How the head gets to a command's first sector.
#[derive(Clone, Copy, Debug)]
struct Positioning {
    /// Read look-ahead (or the write cache) streams it on from the previous command.
    streaming: bool,
    /// Streaming: the bytes between the previous command's end and this one's first sector,
    /// which pass under the head first (0: it starts where the previous one ended).
    skip: u64,
    seek_ns: u64,
    rotation_ns: u64,
}

impl Hdd {
    /// The actuator's resource.
    pub fn actuator(&self) -> ResId {
        self.res
    }

    /// The actuator's resource and how much of the command on it is still to run at `now`:
    /// a command's whole service time is counted when it starts, so a report of what ran
    /// during a job takes this off at both of its ends (as [`super::ssd::Ssd::booked_ahead`]
    /// does for an SSD), or a job would be charged the seek its last command left running.
    pub fn booked_ahead(&self, res: &[Res], now: u64) -> (ResId, u64) {
        (
            self.res,
            res[self.res as usize].busy_until.saturating_sub(now),
        )
    }

    /// Room in the write cache at `t` (the destage on the actuator frees its bytes at its end).
    pub(super) fn cache_room(&self, t: u64) -> u64 {
        let leaving = if t < self.destage_end {
            self.destage_bytes
        } else {
            0
        };
        self.cache_bytes.saturating_sub(self.dirty_bytes + leaving)
    }

    /// Segments of the write cache in use at `t` (the destage on the actuator frees its
    /// segment at its end).
    fn segments_used(&self, t: u64) -> u32 {
        self.dirty_segments + u32::from(t < self.destage_end && self.destage_frees)
    }

    /// Whether a write of `[offset, offset + len)` continues one still in the write cache:
    /// the drive appends it to that write's segment (DiskSim's disk model, "Combine seq
    /// writes"; Seagate's product manuals, "Caching write data": written data fills the
    /// segment the write began in).
    fn continues_cached(&self, offset: u64) -> bool {
        self.queue
            .iter()
            .any(|c| c.destage && c.offset + c.len == offset)
    }

    /// Whether the write cache takes a write of `[offset, offset + len)` at `t`: room for its
    /// bytes, and a segment for it unless it continues a cached write.
    ///
    /// A drive's buffer holds written data in segments, one per run of written sectors, and
    /// allows only so many of them (DiskSim's disk model, "Maximum number of write
    /// segments"; DIXtrac, which measures a drive's parameters through its interface,
    /// extracted 128 for the Maxtor Atlas 10K V, an 8 MB-buffer drive, in the parameter set
    /// DiskSim ships). So a burst of small random writes fills the cache after as many
    /// writes as it has segments, not after 64 MB of them: from there each new write waits
    /// for a destage to free a segment, and random writes go at the rate the disk destages
    /// them (a seek and a rotational wait each, shortened by choosing among the cached
    /// writes the one reached first).
    pub(super) fn cache_fits(&self, offset: u64, len: u64, t: u64) -> bool {
        self.cache_room(t) >= len
            && (self.cache_segments == 0
                || self.segments_used(t) < self.cache_segments
                || self.continues_cached(offset))
    }

    /// Whether a write of `len` bytes that the write cache has no room for at `t` waits for
    /// room (true) or is written through to the platters as a queued command of its own, as
    /// with the cache off (false).
    ///
    /// With NCQ the drive decides when it takes a queued write's data: it sends a DMA Setup
    /// FIS naming the command's tag when it is ready for that data (Serial ATA II, "Native
    /// Command Queuing"; Seagate/Intel, "Serial ATA Native Command Queuing", 2003). Nothing
    /// makes it take a write's data into a full cache first. How firmware treats a write its
    /// full cache cannot hold is not published; assumed: one that lacks no more room than the
    /// next destage frees (the destage on the actuator, or the largest of those it chooses
    /// among) waits for it, and one that lacks more goes to the platters like a read, costing
    /// its own seek and transfer. Taking 1 MiB into a cache full of 4 KiB random writes meant
    /// destaging 256 of them first (about 0.5 s at ~470 a second), and every host write
    /// queued behind it waited as long. A stream of equal-sized writes always waits, so a
    /// disk written by the host alone behaves as it did.
    pub(super) fn waits_for_room(&self, len: u64, t: u64) -> bool {
        let lack = len.saturating_sub(self.cache_room(t));
        let on_actuator = if t < self.destage_end {
            self.destage_bytes
        } else {
            0
        };
        let next = self
            .queue
            .iter()
            .filter(|c| c.destage)
            .take(self.reorder_window as usize)
            .map(|c| c.len)
            .max()
            .unwrap_or(0);
        lack <= on_actuator.max(next)
    }

    /// Whether `[offset, offset + len)` lies within one write still waiting in the write cache
    /// for its destage (a read of it is served from the cache).
    pub(super) fn holds_dirty(&self, offset: u64, len: u64) -> bool {
        self.dirty_bytes > 0
            && self
                .queue
                .iter()
                .any(|c| c.destage && c.offset <= offset && offset + len <= c.offset + c.len)
    }

    /// Nanoseconds per byte of the track holding `offset`. Zoned recording: the media rate
    /// follows the track's radius, and LBAs fill the platter from the outside in by area, so
    /// the track at `frac` of the LBAs has radius sqrt(1 - frac (1 - (r_in/r_out)²)) of the
    /// outermost (the middle LBA of a 150 -> 75 MB/s disk reads at 119 MB/s, not the 100 a
    /// rate linear in LBA gives).
    fn npb_at(&self, offset: u64) -> f64 {
        let frac = offset as f64 / self.size as f64;
        self.outer_npb / (1.0 - frac * (1.0 - self.inner_area_ratio)).sqrt()
    }

    /// Where the read look-ahead has read up to at `t`.
    fn read_ahead_end(&self, t: u64) -> u64 {
        self.read_ahead.held.max(self.read_ahead_head(t))
    }

    /// Where the head reading ahead is at `t` (at most the segment's cap).
    fn read_ahead_head(&self, t: u64) -> u64 {
        let ra = &self.read_ahead;
        let t = t.min(ra.until);
        if t <= ra.since {
            return ra.from;
        }
        let read = ((t - ra.since) as f64 / self.npb_at(ra.from)) as u64;
        (ra.from + read).min(ra.cap).max(ra.from).min(self.size)
    }

    /// Whether `[offset, offset + len)` is in the read look-ahead's segment at `t`; if so, a read
    /// of it is served from there, and the look-ahead reads on past it (as the host takes data
    /// from the segment the drive reads ahead into the room it leaves: Fujitsu MHN2100AT
    /// product manual, "Read-Ahead Cache", "Sequential hit").
    pub(super) fn read_ahead_hit(&mut self, offset: u64, len: u64, t: u64) -> bool {
        // The segment is a part of the buffer: it keeps the last READ_AHEAD_BYTES read (or
        // the read served, if longer), not all a stream ever read. Counting from the start of
        // the stream, a 256 MiB file read twice in 1 MiB requests came from the buffer the
        // second time, at the interface's 520 MB/s.
        let end = self.read_ahead_end(t);
        let kept_from = end.saturating_sub(READ_AHEAD_BYTES.max(len));
        if offset < self.read_ahead.lo.max(kept_from) || offset + len > end {
            return false;
        }
        if t > self.read_ahead.since && t < self.read_ahead.until {
            self.read_ahead.from = self.read_ahead_head(t);
            self.read_ahead.since = t;
        }
        let ra = &mut self.read_ahead;
        ra.cap = ra.cap.max(offset + len + READ_AHEAD_BYTES);
        true
    }

    /// The actuator starts command `cmd` at `start`, ending at `end`: the look-ahead stops as
    /// the head leaves, and starts again after a read (a new segment, or the same one where the
    /// read continues it). After a destage that leaves the head within the segment, short of
    /// what it holds, the head reads ahead again from where it is: a drive free to read on.
    fn read_ahead_around(&mut self, cmd: &HddCmd, start: u64, end: u64) {
        self.read_ahead.until = self.read_ahead.until.min(start);
        let held = self.read_ahead_end(start);
        let (lo, head) = (self.read_ahead.lo, cmd.offset + cmd.len);
        let ra = &mut self.read_ahead;
        if !cmd.destage && cmd.host_bytes > 0 {
            if cmd.offset < lo || cmd.offset > held {
                *ra = ReadAhead {
                    lo: cmd.offset,
                    ..ReadAhead::default()
                };
            } else {
                ra.held = held;
            }
            ra.cap = head + READ_AHEAD_BYTES;
        } else if lo <= head && head <= held && lo < held {
            ra.held = held;
        } else {
            return;
        }
        (ra.from, ra.since, ra.until) = (head, end, u64::MAX);
    }

    /// Takes a write into the write cache at `t` and queues its destage (`copy`: a tier's
    /// copy wrote it); returns when the drive acknowledges it.
    pub(super) fn cache_write(&mut self, offset: u64, len: u64, t: u64, copy: bool) -> u64 {
        self.dirty_bytes += len;
        let joins = self.continues_cached(offset);
        self.dirty_segments += u32::from(!joins);
        self.queue.push(HddCmd {
            tag: INTERNAL,
            arrive: t,
            offset,
            len,
            host_bytes: 0,
            destage: true,
            joins,
            copy,
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
    /// Write cache segments at most (0: as many as its bytes allow).
    pub write_cache_segments: u32,
    /// Commands it queues and reorders (NCQ depth).
    pub queue_depth: u32,
    /// Seed of the rotational position.
    pub seed: u64,
    /// Power law.
    pub power: Power,
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
    // A command starting a short way further on streams too: where its first sector lies on
    // the track is not random but follows from where the last command ended, `skip` bytes
    // on, and it passes under the head once those have (the look-ahead reads them into the
    // buffer on its way; a destage skips them, as a drive writes the dirty blocks of a track
    // in one pass). It was positioned as a seek elsewhere: at least a track-to-track seek
    // and a rotational wait drawn at random, 5 ms on average, for a 4 KiB step forward.
    // Beyond a revolution's worth of bytes it is on another track, positioned as below.
    if offset >= h.last_end && start <= h.last_done + h.rev_ns {
        let skip = offset - h.last_end;
        if skip == 0 || (skip as f64 * h.npb_at(h.last_end)) < h.rev_ns as f64 {
            return Positioning {
                streaming: true,
                skip,
                seek_ns: 0,
                // Until its first sector comes round (none once it has passed: read ahead, or
                // the write cache streams it on, as above).
                rotation_ns: (h.last_done + (skip as f64 * h.npb_at(h.last_end)) as u64)
                    .saturating_sub(start),
            };
        }
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
        skip: 0,
        seek_ns,
        rotation_ns: h.rng.below(h.rev_ns),
    }
}

/// Whether the head, streaming on, comes to `a`'s first sector before `b`'s.
fn first_under(a: Positioning, b: Positioning) -> bool {
    a.streaming && b.streaming && a.skip < b.skip
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
    let npb = h.npb_at(offset);
    let xfer = (len as f64 * npb) as u64;
    let d = if pos.streaming {
        // The media transfer began when the previous command ended (and the skipped sectors
        // had passed).
        let media = ((pos.skip + len) as f64 * npb) as u64;
        (h.last_done + media).max(start + h.command_ns) - start
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
        inner_area_ratio: (p.inner_bps / p.outer_bps).powi(2),
        command_ns: p.command_ns,
        head: 0,
        last_end: u64::MAX,
        last_done: 0,
        rng: Rng::new(p.seed),
        power: p.power,
        busy_ns: 0,
        queue: Vec::new(),
        host_queued: 0,
        host_waits: 0,
        in_flight: false,
        reorder_window: p.queue_depth.max(1),
        cache_bytes: p.write_cache_bytes,
        dirty_bytes: 0,
        destage_end: 0,
        destage_bytes: 0,
        cache_segments: p.write_cache_segments,
        dirty_segments: 0,
        destage_frees: false,
        cache_waiting: VecDeque::new(),
        host_end: 0,
        wake_at: None,
        read_ahead: ReadAhead::default(),
    }
}

impl World {
    /// Starts the next queued command of hard disk `li` if its actuator is free at `t`. Native
    /// command queuing lets the drive choose: of the commands that have arrived, the one it
    /// reaches soonest (seek plus rotational wait); with one command queued that is FIFO.
    pub(super) fn hdd_dispatch(&mut self, li: u32, t: u64) {
        // Writes that waited for room while the last command ran go in as it ends, before
        // the drive chooses its next command.
        let admitted = match &mut self.leaves[li as usize].dev {
            Dev::Hdd(h) if !h.in_flight => h.admit_waiting(t),
            _ => Vec::new(),
        };
        self.acknowledge_admitted(li, admitted);
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
        let best = Candidates::scan(h, start);
        if best.host.is_none() {
            if let Some(wake) = h.idle_wake(start) {
                if h.wake_at != Some(wake) {
                    h.wake_at = Some(wake);
                    self.events.push(
                        wake,
                        ChunkEv {
                            tail: 0,
                            tag: INTERNAL,
                            leaf: li,
                            chan: HDD_WAKE,
                            nand_bytes: 0,
                            host_bytes: 0,
                        },
                    );
                }
                return;
            }
        }
        let (i, pos) = best.pick(h, start);
        let (cmd, end, admitted) = h.run_command(&mut self.res, i, pos, start);
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
        self.acknowledge_admitted(li, admitted);
    }

    /// Acknowledges the writes hard disk `li` took into its write cache (tag, when in it).
    fn acknowledge_admitted(&mut self, li: u32, admitted: Vec<(u32, u64)>) {
        for (tag, done) in admitted {
            let leaf = &self.leaves[li as usize];
            let done = done + leaf.status_ns;
            self.chunk_done(tag, done);
        }
    }
}

/// The queued commands a hard disk reaches first at a start time, a host command and a
/// destage: each with its index in the queue, its positioning and the time to reach it.
struct Candidates {
    host: Option<(usize, Positioning, u64)>,
    destage: Option<(usize, Positioning, u64)>,
}

impl Candidates {
    /// The drive looks at the host's commands (NCQ bounds them) and the oldest of its write
    /// cache's destages, as many as NCQ lets the host queue (how far firmware looks into a
    /// full cache is not published), and takes the one it reaches first (shortest positioning
    /// time first) among each.
    fn scan(h: &mut Hdd, start: u64) -> Candidates {
        let mut best_host: Option<(usize, Positioning, u64)> = None;
        let mut best_destage: Option<(usize, Positioning, u64)> = None;
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
            let reach = pos.seek_ns + pos.rotation_ns;
            let best = if cmd.destage {
                &mut best_destage
            } else {
                &mut best_host
            };
            if best.is_none_or(|(_, bp, b)| reach < b || (reach == b && first_under(pos, bp))) {
                *best = Some((i, pos, reach));
            }
        }
        Candidates {
            host: best_host,
            destage: best_destage,
        }
    }

    /// Which of the two goes: the queue index and positioning of the command. Between the
    /// two, a host command's time waiting counts against its positioning time (aged SPTF:
    /// Jacobson & Wilkes, HP Labs 1991; Worthington, Ganger & Patt, SIGMETRICS 1994), so a read
    /// far from the destages goes once it has waited about as long as reaching it takes:
    /// without that, a read far from a burst's destages waited for the whole cache (24 s). The
    /// weight (1) is assumed.
    fn pick(self, h: &Hdd, start: u64) -> (usize, Positioning) {
        // Of a host command and a destage the head streams on to, the one whose sector comes
        // first goes first, however long the host command has waited: the other follows on the
        // same pass, where taking it first would leave the nearer one a revolution or a trip
        // back away (a destage left behind a sequential stream this way was written later with
        // a seek and a rotational wait in front of a read).
        match (self.host, self.destage) {
            (Some((hi, hp, hr)), Some((_, dp, dr)))
                if hr.saturating_sub(start - h.queue[hi].arrive) <= dr && !first_under(dp, hp) =>
            {
                (hi, hp)
            }
            (_, Some((di, dp, _))) => (di, dp),
            (Some((hi, hp, _)), None) => (hi, hp),
            (None, None) => unreachable!("the first arrival has arrived by start"),
        }
    }
}

impl Hdd {
    /// With only destages to choose from and no write waiting for room, when the disk looks
    /// again if it has not idled by `start`: it destages once it has idled, not in the
    /// turnaround between two commands of a host's stream. It looks again when the disk has
    /// idled, or when a host command queued for later arrives, whichever comes first.
    fn idle_wake(&self, start: u64) -> Option<u64> {
        if !self.cache_waiting.is_empty() {
            return None;
        }
        let idle_from = self.host_end + DESTAGE_IDLE_NS;
        if start >= idle_from {
            return None;
        }
        let next_host = self
            .queue
            .iter()
            .filter(|c| !c.destage)
            .map(|c| c.arrive)
            .min();
        Some(next_host.map_or(idle_from, |a| a.min(idle_from)))
    }

    /// Destage `cmd` leaves the queue and its bytes the write cache: returns whether its
    /// segment of the cache empties with it. The rest of its run, if still cached, keeps the
    /// segment (a destage of a run's head) or takes one of its own (a run split by a destage
    /// from its middle).
    fn leave_cache(&mut self, cmd: &HddCmd) -> bool {
        self.dirty_bytes -= cmd.len;
        let rest = self
            .queue
            .iter_mut()
            .find(|c| c.destage && c.joins && c.offset == cmd.offset + cmd.len);
        let rest_stays = rest.is_some();
        if let Some(rest) = rest {
            rest.joins = false;
        }
        match (cmd.joins, rest_stays) {
            (false, false) => {
                self.dirty_segments -= 1;
                true
            }
            (true, true) => {
                self.dirty_segments += 1;
                false
            }
            _ => false,
        }
    }

    /// Runs queued command `i` from `start`: returns it, when it ends, and the writes waiting
    /// for room in the write cache that go in as a destage ends (tag, when in the cache).
    fn run_command(
        &mut self,
        res: &mut [Res],
        i: usize,
        pos: Positioning,
        start: u64,
    ) -> (HddCmd, u64, Vec<(u32, u64)>) {
        let h = self;
        let cmd = h.queue.remove(i);
        if !cmd.destage {
            h.host_queued -= 1;
        }
        let end = hdd_service(h, res, cmd.offset, cmd.len, start, pos);
        h.read_ahead_around(&cmd, start, end);
        h.in_flight = true;
        if !cmd.destage {
            h.host_end = end;
            return (cmd, end, Vec::new());
        }
        let frees = h.leave_cache(&cmd);
        (h.destage_end, h.destage_bytes, h.destage_frees) = (end, cmd.len, frees);
        (cmd, end, h.admit_waiting(end))
    }

    /// Takes the writes waiting for room in the write cache that fit at `at` into it, in the
    /// order they came: returns each one's tag and when it is in the cache.
    fn admit_waiting(&mut self, at: u64) -> Vec<(u32, u64)> {
        let mut admitted = Vec::new();
        while let Some(&(tag, offset, len)) = self.cache_waiting.front() {
            if !self.cache_fits(offset, len, at) {
                break;
            }
            self.cache_waiting.pop_front();
            admitted.push((tag, self.cache_write(offset, len, at, tag == INTERNAL)));
        }
        admitted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk(segments: u32) -> Hdd {
        build_hdd(
            &mut Vec::new(),
            HddParams {
                name: "disk".into(),
                size: 1 << 40,
                rpm: 7200.0,
                seek_track_ns: 800_000,
                seek_full_ns: 18_000_000,
                outer_bps: 150e6,
                inner_bps: 75e6,
                command_ns: 100_000,
                write_cache_bytes: 64 << 20,
                write_cache_segments: segments,
                queue_depth: 32,
                seed: 1,
                power: Power::default(),
            },
            "disk",
        )
    }

    /// Destages `offset`'s cached write as the actuator would.
    fn destage(h: &mut Hdd, offset: u64) {
        let i = h.queue.iter().position(|c| c.offset == offset).unwrap();
        let cmd = h.queue.remove(i);
        h.leave_cache(&cmd);
    }

    #[test]
    fn a_run_of_writes_takes_one_segment_until_a_destage_splits_it() {
        let mut h = disk(2);
        // Three 4 KiB writes in a row are one run: one segment; one elsewhere is a second.
        for offset in [0, 4096, 8192] {
            assert!(h.cache_fits(offset, 4096, 0));
            h.cache_write(offset, 4096, 0, false);
        }
        h.cache_write(1 << 30, 4096, 0, false);
        assert_eq!(h.dirty_segments, 2);
        // Full: a write elsewhere waits; one continuing a run still joins it.
        assert!(!h.cache_fits(2 << 30, 4096, 0));
        assert!(h.cache_fits(12288, 4096, 0));
        h.cache_write(12288, 4096, 0, false);
        assert_eq!(h.dirty_segments, 2);
        // Destaging a run's head passes its segment on to the rest of the run.
        destage(&mut h, 0);
        assert_eq!(h.dirty_segments, 2);
        // Destaging the middle of a run leaves two runs: three segments in use.
        destage(&mut h, 8192);
        assert_eq!(h.dirty_segments, 3);
        // The last write of a run frees its segment.
        for offset in [4096, 12288, 1 << 30] {
            destage(&mut h, offset);
        }
        assert_eq!((h.dirty_segments, h.dirty_bytes), (0, 0));
        assert!(h.cache_fits(2 << 30, 4096, 0));
    }
}
