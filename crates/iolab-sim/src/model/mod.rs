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
//! Single-threaded, integer nanoseconds, no globals: a run is a pure function of its inputs.
//!
//! This file holds the [`World`]: the volume tree, a request's way down it to the leaves and
//! the events that bring data back up; `leaf` takes a request down one leaf. The components
//! have a file each: `resource` (resources and pipes), `ssd`, `hdd`, `tier` (tiered volumes,
//! caches and the RAM layer) and `power`.

mod hdd;
mod leaf;
mod power;
mod resource;
mod ssd;
mod tier;

pub use hdd::{build_hdd, Hdd, HddParams};
pub use power::{Energy, Power};
pub use resource::{transfer, Pipe, Res, ResId, ResKind, Toward};
pub use ssd::{build_ssd, stored_share, SlcCache, Ssd, SsdParams};
pub use tier::{RamCache, SeqStreams, Tier};

use crate::timeq::TimeQueue;
use iolab_core::job::Direction;
use iolab_drive::hint::CacheHint;
use resource::transfer_through;

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
    /// How long a write's status takes to reach the host: the hops of the path up and
    /// `lat_up_ns` (a small message, no transfer time). Summed once here rather than per write.
    pub status_ns: u64,
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
/// Not a transfer: a hard disk that has idled long enough to start destaging looks again.
const HDD_WAKE: u32 = u32::MAX - 2;

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
    /// Whether a drive draws power while it holds a command ([`Power::active_w`]), so that
    /// which drives each request holds is kept.
    track_awake: bool,
    /// The leaves each request holds, by tag, while `track_awake`.
    held: Vec<Vec<u32>>,
}

/// How many requests after starting to load a request's map chunk [`World::prefetch`] reads
/// it and starts loading the request's entry in it, and how many after that the block node
/// the entry names: each load's address is in the one before, three dependent misses over a
/// 1.2 TB drive's tables. The driver plans a [`SimTarget`](crate::SimTarget)'s requests in
/// batches of twelve (half of what it plans ahead), so each stage reaches back about half a
/// batch. Measured side by side on the SSD 750 1.2 TB's 4 KiB random writes over the filled
/// drive (`sim_speed`): loading the chunk a stage ahead, where the entry was loaded straight
/// away, took the consistency test from 0.90–0.95 to over 1.0 million simulated I/Os a second.
const ENTRY_LAG: usize = 6;
const NODE_LAG: usize = 12;

impl World {
    /// A world over `res`, `leaves` and `vol`.
    pub fn new(
        res: Vec<Res>,
        leaves: Vec<Leaf>,
        vol: Vol,
        driver_ns: u64,
        max_outstanding: u32,
    ) -> World {
        let track_awake = leaves
            .iter()
            .any(|l| matches!(&l.dev, Dev::Ssd(s) if s.power.active_w > 0.0));
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
            track_awake,
            held: Vec::new(),
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
        if self.track_awake {
            self.held = vec![Vec::new(); slots as usize];
        }
        // The last job's requests are gone; background work (a tier's copies, a hard disk's
        // destages) carries on into this one.
        self.events.retain(|ev| ev.tag == INTERNAL);
        self.done.clear();
        self.waiting.clear();
        self.outstanding = 0;
        for li in 0..self.leaves.len() {
            let busy = self
                .events
                .items()
                .any(|ev| ev.leaf == li as u32 && ev.chan != HDD_WAKE);
            if let Dev::Ssd(s) = &mut self.leaves[li].dev {
                s.awake.drop_all(now);
            }
            if let Dev::Hdd(h) = &mut self.leaves[li].dev {
                h.in_flight = busy;
                h.queue.retain(|c| c.tag == INTERNAL);
                // Acknowledged to nobody now, but written all the same.
                for (tag, offset, len) in std::mem::take(&mut h.cache_waiting) {
                    h.cache_write(offset, len, now, tag == INTERNAL);
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

    fn process(&mut self, t: u64, ev: ChunkEv) {
        if ev.chan == HDD_WAKE {
            if let Dev::Hdd(h) = &mut self.leaves[ev.leaf as usize].dev {
                h.wake_at = h.wake_at.filter(|&w| w != t);
            }
            self.hdd_dispatch(ev.leaf, t);
            return;
        }
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
        if self.track_awake {
            // Held until the request is done, before the host's stack hands it back.
            let done = t - self.ios[tag as usize].fin_ns;
            for li in self.held[tag as usize].drain(..) {
                if let Dev::Ssd(ssd) = &mut self.leaves[li as usize].dev {
                    ssd.awake.end(done);
                }
            }
        }
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
                // No event before `to`: a paced mover's next start is the next thing.
                _ => match Self::next_paced_move(&self.vol) {
                    Some(m) if m > now && m <= to => now = m,
                    _ => break,
                },
            }
        }
    }

    /// Discards LBAs (TRIM) on every SSD below the volume, analytically.
    /// Returns the drives that took it and those that have no TRIM (hard disks, and SSDs
    /// without it), by name.
    pub fn trim_all(&mut self) -> (Vec<String>, Vec<String>) {
        let (mut trimmed, mut kept) = (Vec::new(), Vec::new());
        for l in &mut self.leaves {
            match &mut l.dev {
                Dev::Ssd(s) if s.trim => trimmed.push(s.name.clone()),
                Dev::Ssd(s) => kept.push(s.name.clone()),
                Dev::Hdd(h) => kept.push(h.name.clone()),
            }
            if let Dev::Ssd(s) = &mut l.dev {
                if s.trim {
                    s.ftl.invalidate_all();
                    if let Some(c) = &mut s.slc {
                        c.clear(); // nothing left to fold
                    }
                }
            }
        }
        (trimmed, kept)
    }

    /// Starts loading, with the host's `hint`, the map chunk of a request about to be
    /// submitted at `offset`, the map entry of the one planned `ENTRY_LAG` requests before it
    /// (whose chunk is loaded by now), the block node of the one planned `NODE_LAG` before it
    /// (whose entry is), and the request's slot in the index of buffered LPNs.
    #[inline]
    pub fn prefetch(&mut self, offset: u64, hint: CacheHint) {
        // Only a plain drive: RAID and tiers map the offset first, which costs what it saves.
        if let Vol::Leaf(i) = self.vol {
            if let Dev::Ssd(s) = &self.leaves[i as usize].dev {
                let lpn = offset / 4096;
                s.ftl.prefetch_chunk(lpn, hint);
                s.buffered.prefetch(lpn, hint);
                let ring = self.planned as usize;
                s.ftl.prefetch(
                    self.planned_lpns[(ring + NODE_LAG - ENTRY_LAG) % NODE_LAG],
                    hint,
                );
                // The ring's slot for this request holds the one planned NODE_LAG before it.
                let slot = &mut self.planned_lpns[ring % NODE_LAG];
                s.ftl.prefetch_node(std::mem::replace(slot, lpn), hint);
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

impl Leaf {
    /// The time a status sent up the path takes to reach the host ([`Leaf::status_ns`]).
    pub fn status_ns_of(up: &[Pipe], lat_up_ns: u64) -> u64 {
        up.iter().map(|p| p.hop_ns).sum::<u64>() + lat_up_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ftl::Compaction;

    /// An SSD 750 400 GB behind Z97's CPU lanes, ready for one request at a time.
    fn ssd750_400_world() -> World {
        let cat = crate::catalog::Catalog::load(None).unwrap();
        let mut world = crate::build::build(&cat, "ssd750-400", "z97", Some("cpu"), 1)
            .unwrap()
            .world;
        world.prepare(1, 0);
        world
    }

    /// The SSD of a world built on one drive.
    fn the_ssd(world: &mut World) -> &mut Ssd {
        match &mut world.leaves[0].dev {
            Dev::Ssd(ssd) => ssd,
            Dev::Hdd(_) => panic!("an SSD"),
        }
    }

    #[test]
    fn compacting_the_ftls_nodes_changes_no_result() {
        // End to end, on a small SandForce drive: compacting at every collection gives the
        // results never compacting gives. (Whether a page register or an old copy still
        // names its unit after a compaction is the next test's.)
        let run = |compaction| {
            let mut sim = crate::open("sim:sf1200-25@x58/ich10", None).unwrap();
            sim.precondition_steady();
            let Dev::Ssd(ssd) = &mut sim.world.leaves[0].dev else {
                panic!("an SSD")
            };
            ssd.ftl.set_compaction(compaction);
            let job = toml::from_str::<iolab_core::job::JobSpec>(
                "access = \"randrw\"\nblock_size = \"2k\"\nsize = \"8m\"\nqueue_depth = 8\nduration_s = 0.5\nseed = 3",
            )
            .unwrap()
            .validate()
            .unwrap();
            let r = sim.run_job(&job, None).unwrap();
            let Dev::Ssd(ssd) = &sim.world.leaves[0].dev else {
                unreachable!()
            };
            let compactions = ssd.ftl.compactions;
            (
                serde_json::to_string(&(r.result, sim.describe())).unwrap(),
                compactions,
            )
        };
        let (plain, none) = run(Compaction {
            growth: f64::INFINITY,
            min_nodes: usize::MAX,
        });
        let (compacted, compactions) = run(Compaction {
            growth: 1.0,
            min_nodes: 1,
        });
        assert_eq!(none, 0);
        assert!(compactions >= 3, "{compactions} compactions");
        assert_eq!(plain, compacted);
    }

    #[test]
    fn a_trim_drops_the_whole_lpns_it_covers_and_costs_a_command() {
        let mut world = ssd750_400_world();
        let ssd = the_ssd(&mut world);
        let stripe = ssd.stripe_lpns();
        ssd.ftl.fill_sequential(stripe);
        ssd.reset_buffer();
        let full = ssd.ftl.mapped_lpns();
        // 1 MiB from LPN 1000 plus half an LPN on either side: the 256 whole LPNs go.
        world.submit(0, Direction::Trim, 1000 * 4096 - 2048, (1 << 20) + 4096, 0);
        let (_, done) = world.next_completion(u64::MAX).unwrap();
        let ssd = the_ssd(&mut world);
        assert_eq!(ssd.ftl.mapped_lpns(), full - 256);
        assert!(ssd.ftl.block_of(999).is_some() && ssd.ftl.block_of(1256).is_some());
        assert!(ssd.ftl.block_of(1000).is_none() && ssd.ftl.block_of(1255).is_none());
        // No NAND work: a read of 1 MiB on the same drive takes longer than the TRIM.
        world.submit(0, Direction::Read, 1 << 30, 1 << 20, done);
        let (_, read_done) = world.next_completion(u64::MAX).unwrap();
        assert!(
            read_done - done > done,
            "TRIM {done} ns, read {} ns",
            read_done - done
        );
        // A drive without TRIM keeps its data.
        let ssd = the_ssd(&mut world);
        ssd.trim = false;
        world.submit(0, Direction::Trim, 0, 1 << 20, read_done);
        world.next_completion(u64::MAX).unwrap();
        assert_eq!(the_ssd(&mut world).ftl.mapped_lpns(), full - 256);
    }

    #[test]
    fn a_page_register_and_an_old_copy_still_match_their_units_after_compaction() {
        let mut world = ssd750_400_world();
        let ssd = the_ssd(&mut world);
        let stripe = ssd.stripe_lpns();
        ssd.ftl.fill_steady(stripe);
        // Random rewrites, straight into the FTL, until collection has left dead nodes.
        let mut rng = iolab_core::rng::Rng::new(9);
        let (lpns, dies) = (ssd.ftl.lpns(), ssd.ftl.dies());
        for i in 0..2_000_000u64 {
            let die = (i % dies as u64) as u32;
            if ssd.ftl.write(rng.below(lpns), die, 1) {
                ssd.ftl.collect(die);
            }
        }
        ssd.reset_buffer();
        let dies = ssd.dies.clone();
        // Runs `dir` of `len` bytes at `lpn` to completion; returns whether a die was busy.
        let run = |world: &mut World, dir, lpn: u64, len, t| {
            let before: u64 = dies.iter().map(|&d| world.res[d as usize].busy_ns).sum();
            world.submit(0, dir, lpn * 4096, len, t);
            let (_, done) = world.next_completion(u64::MAX).unwrap();
            let after: u64 = dies.iter().map(|&d| world.res[d as usize].busy_ns).sum();
            (after > before, done)
        };
        // A read leaves its unit in its die's page register. A partial rewrite of an LPN on
        // another die, then a read of all of it: the rest comes from the old copy, whose unit
        // is left in that die's register.
        let (a, b) = (12_345, 67_890);
        let ssd = the_ssd(&mut world);
        assert_ne!(ssd.ftl.die_of(a), ssd.ftl.die_of(b));
        let (busy, t) = run(&mut world, Direction::Read, a, 4096, 0);
        assert!(busy, "the first read takes a tR");
        let (_, t) = run(&mut world, Direction::Write, b, 512, t);
        let (busy, t) = run(&mut world, Direction::Read, b, 4096, t);
        assert!(busy, "the old copy takes a tR");
        let ssd = the_ssd(&mut world);
        let before = ssd.ftl.block_of(a).unwrap().0;
        ssd.compact_ftl();
        assert_ne!(ssd.ftl.block_of(a).unwrap().0, before, "renumbered");
        // Both reads again: each still finds its unit in the register.
        let (busy, t) = run(&mut world, Direction::Read, a, 4096, t);
        assert!(!busy, "the register still holds the unit");
        let (busy, _) = run(&mut world, Direction::Read, b, 4096, t);
        assert!(!busy, "the register still holds the old copy's unit");
    }

    #[test]
    fn a_read_of_sectors_a_partial_rewrite_left_out_goes_to_the_old_copy() {
        let mut world = ssd750_400_world();
        let ssd = the_ssd(&mut world);
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
        let ssd = the_ssd(&mut world);
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
}
