//! A tiered volume (StoreMI-like) or a cache (RST-like), with an optional host RAM layer.

use super::resource::{transfer, Pipe};
use super::{Dev, Vol, World, INTERNAL};
use iolab_core::job::Direction;
use std::collections::{HashMap, VecDeque};

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
    /// Tier mode: the mover starts no promotion before this time ([`MOVER_GAP_NS`], or
    /// `promote_gap_ns`).
    next_move_at: u64,
    /// Tier mode: the time between the starts of two promotions when the mover runs at a
    /// set rate, busy or idle (an extent over the catalog's `promote_bytes_per_s`); 0 for
    /// the unpaced mover.
    pub promote_gap_ns: u64,
    /// Sequential streams seen, for the cutoff.
    pub streams: SeqStreams,
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

/// Tier mode: the least time between the starts of two promotions while the host's writes
/// wait for room in the slow disk's write cache (the disk is saturated with writes; the
/// driver sees its writes' latency rise). A tiering driver moves data in the background at
/// low priority, leaving the disk to the host: StoreMI is tiering that moves hot data to the
/// SSD (HardOCP, "AMD's StoreMI Technology", 2018-05-28), and no source found says how fast.
/// Assumed: at most 10 extents a second (10 MiB/s each way with 1 MiB extents), a promotion
/// and its demotion taking some 30 ms of a 7200 rpm disk's actuator, so the mover takes
/// about a quarter of a saturated disk. Otherwise it copies one extent at a time as before
/// (`migration_queued`). Unpaced, once the mover no longer waited for its demotions'
/// destages, it kept the disk busy with copies: 4 KiB random writes at QD32 over 16 GiB ran
/// at 110 IOPS against 470 from the disk alone.
const MOVER_GAP_NS: u64 = 100_000_000;

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

/// How many sequential streams the cutoff follows at once, the least recently continued
/// giving way to a new one. Intel's open cache engine (Open CAS Framework, ocf_seq_cutoff.c)
/// keeps such a fixed table; how many SRT keeps is not public. Eight follows every stream of
/// the catalog's jobs (at most four workers, each one stream).
const SEQ_STREAMS: usize = 8;

/// The sequential cutoff of a cache (Intel's SRT avoids caching large chunks read
/// sequentially, Tom's Hardware's Z68 review, 2011), as Intel's open cache engine does it
/// (Open CAS Framework, ocf_seq_cutoff.c): a request that starts where a stream of the same
/// direction ended continues it, and once the stream's bytes with the request's reach the
/// threshold the request bypasses the cache; a request that continues no stream starts one
/// in place of the least recently continued.
#[derive(Clone, Debug)]
pub struct SeqStreams {
    threshold: u64,
    /// The streams followed.
    table: Vec<Stream>,
    tick: u64,
}

/// One sequential stream the cutoff follows.
#[derive(Clone, Copy, Debug)]
struct Stream {
    write: bool,
    /// Where its next request would start.
    end: u64,
    /// Bytes it has moved so far.
    bytes: u64,
    /// When it was last continued (a count of requests seen).
    used: u64,
}

impl SeqStreams {
    /// No stream yet; `threshold` 0 turns the cutoff off.
    pub fn new(threshold: u64) -> SeqStreams {
        SeqStreams {
            threshold,
            table: Vec::with_capacity(SEQ_STREAMS),
            tick: 0,
        }
    }

    /// Whether a request of `len` bytes at `offset` bypasses the cache; records it.
    pub fn bypass(&mut self, write: bool, offset: u64, len: u64) -> bool {
        if self.threshold == 0 {
            return false;
        }
        self.tick += 1;
        let tick = self.tick;
        let found = self
            .table
            .iter_mut()
            .find(|s| s.write == write && s.end == offset);
        match found {
            Some(s) => {
                s.bytes += len;
                s.end = offset + len;
                s.used = tick;
                s.bytes >= self.threshold
            }
            None => {
                let fresh = Stream {
                    write,
                    end: offset + len,
                    bytes: len,
                    used: tick,
                };
                if self.table.len() < SEQ_STREAMS {
                    self.table.push(fresh);
                } else if let Some(old) = self.table.iter_mut().min_by_key(|s| s.used) {
                    *old = fresh;
                }
                false
            }
        }
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
            next_move_at: 0,
            promote_gap_ns: 0,
            streams: SeqStreams::new(0),
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

impl World {
    /// A request to a tiered volume: what its RAM layer holds comes from RAM, the rest from
    /// the members.
    pub(super) fn tier_submit(
        &mut self,
        tier: &mut Tier,
        tag: u32,
        dir: Direction,
        offset: u64,
        len: u64,
        t: u64,
    ) {
        // A TRIM moves no data through the RAM layer: straight to the members.
        let Some(ram) = tier.ram.as_mut().filter(|_| dir != Direction::Trim) else {
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
        let bypass =
            dir != Direction::Trim && tier.streams.bypass(dir == Direction::Write, offset, len);
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
                if bypass {
                    off += piece;
                    continue;
                }
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
    /// member's queue or write cache, so the host's commands are never stuck behind a backlog
    /// of copies (a demotion parked in the cache takes room the host's writes need).
    /// At a set rate (`promote_gap_ns`), it starts a promotion only when the gap since the
    /// last has passed, busy or idle.
    fn run_mover(&mut self, tier: &mut Tier, t: u64) {
        let paced = tier.promote_gap_ns > 0;
        while !self.migration_queued(&tier.slow)
            && (t >= tier.next_move_at || (!paced && !self.writes_wait_for_room(&tier.slow)))
        {
            let Some(e) = tier.hot.pop_front() else {
                break;
            };
            if !tier.loc[e as usize].0 {
                self.promote(tier, e as u64, t);
                tier.next_move_at = t + if paced {
                    tier.promote_gap_ns
                } else {
                    MOVER_GAP_NS
                };
            }
        }
    }

    /// When the first paced mover of `vol` with extents waiting may start its next
    /// promotion: idle time has to reach it, as no host request will.
    pub(super) fn next_paced_move(vol: &Vol) -> Option<u64> {
        match vol {
            Vol::Leaf(_) => None,
            Vol::Raid { members, .. } => members.iter().filter_map(Self::next_paced_move).min(),
            Vol::Tier(tier) => {
                (tier.promote_gap_ns > 0 && !tier.hot.is_empty()).then_some(tier.next_move_at)
            }
        }
    }

    /// Runs the movers of the tiers in `vol` at `t`.
    pub(super) fn run_movers(&mut self, vol: &mut Vol, t: u64) {
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

    /// Whether host writes wait for room in the write cache of a hard disk of `vol`: it is
    /// saturated with writes, and the mover paces itself ([`MOVER_GAP_NS`]).
    fn writes_wait_for_room(&self, vol: &Vol) -> bool {
        match vol {
            Vol::Leaf(i) => match &self.leaves[*i as usize].dev {
                Dev::Hdd(h) => h.cache_waiting.iter().any(|w| w.0 != INTERNAL),
                Dev::Ssd(_) => false,
            },
            Vol::Raid { members, .. } => members.iter().any(|m| self.writes_wait_for_room(m)),
            Vol::Tier(t) => self.writes_wait_for_room(&t.slow),
        }
    }

    /// Whether internal copies are still waiting in a hard disk of `vol`: a copy's read or
    /// written-through write in its queue, or a write waiting for room in its write cache.
    /// A copy's write the cache has taken is done as far as the mover is concerned: the drive
    /// acknowledged it, as it does the host's writes (with write caching on, as drives ship,
    /// a write completes once in the cache; FUA is what asks for the media, Seagate/Intel
    /// "Serial ATA Native Command Queuing", 2003). Waiting for its destage held the next
    /// promotion until the whole cache ahead of it was written, about 22 s with a 64 MB cache
    /// of 4 KiB random writes: a 256 MiB hot set stayed at the disk's speed for a minute.
    fn migration_queued(&self, vol: &Vol) -> bool {
        match vol {
            Vol::Leaf(i) => match &self.leaves[*i as usize].dev {
                Dev::Hdd(h) => {
                    h.queue.iter().any(|c| c.copy && !c.destage)
                        || h.cache_waiting.iter().any(|w| w.0 == INTERNAL)
                }
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_sequential_stream_bypasses_the_cache_once_it_reaches_the_cutoff() {
        let mut s = SeqStreams::new(1 << 20);
        let k = 256 * 1024;
        // The first request starts a stream; the stream with the fourth reaches 1 MiB.
        let cut: Vec<bool> = (0..6).map(|i| s.bypass(false, i * k, k)).collect();
        assert_eq!(cut, [false, false, false, true, true, true]);
        // A write at the read stream's end is another direction: a new stream.
        assert!(!s.bypass(true, 6 * k, k));
        // Jumps continue no stream, however many.
        assert!((0..20).all(|i| !s.bypass(false, (100 + 7 * i) * k, 4096)));
        // Off: nothing bypasses.
        let mut off = SeqStreams::new(0);
        assert!((0..10).all(|i| !off.bypass(false, i * k, k)));
    }

    #[test]
    fn the_least_recently_continued_stream_gives_way_to_a_new_one() {
        let mut s = SeqStreams::new(1 << 20);
        let m = 1 << 20;
        // One stream per region, each a MiB long after its first request.
        for r in 0..SEQ_STREAMS as u64 {
            s.bypass(false, r * 1000 * m, m);
        }
        // Region 0 continues (and bypasses); a new region then takes region 1's place.
        assert!(s.bypass(false, m, m));
        s.bypass(false, 9999 * m, m);
        assert!(!s.bypass(false, 1000 * m + m, m), "region 1 was forgotten");
        assert!(s.bypass(false, 2 * m, m), "region 0 was kept");
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
