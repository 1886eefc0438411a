//! Zones with write pointers, emulated on any target, as fio's `zonemode=zbd` does on a file or
//! a block device that is not zoned.
//!
//! The target is cut into zones of `zone_size` from byte 0; the zones that meet a worker's
//! range are its table, each clipped to the range (a clipped zone ends where the range does,
//! as a zone whose capacity is smaller than its size). Every zone starts empty, its write
//! pointer at its start. A write goes to the write pointer of the zone its offset falls in
//! (sequential writes thus fill the zones in order; random ones pick a zone), or, once
//! `max_open` zones are open, of one of the open zones; a zone closes when it is full, and a
//! full zone that is picked again is reset (its write pointer back to its start) first. With
//! `reset_threshold`, once the valid bytes (the sum of the zones' written parts) reach that
//! share of the range, every `1 / reset_frequency`-th write resets its zone first (fio's
//! `zone_reset_threshold`, `zone_reset_frequency`: garbage collection as a host would do it).
//! Reads stay below write pointers unless `read_beyond_wp`: a read whose zone holds less than
//! one block moves to the next zone that holds one; where none does, a job that also writes
//! writes instead (as fio does), and a job that only reads has nothing to read.
//!
//! The threads of a job that share a span share one table behind a mutex (one lock per I/O,
//! uncontended but for the moments two threads ask at once), as fio's clones share a device's
//! zones; threads with ranges of their own have tables of their own.

use crate::job::{Direction, Job, MIN_DIRECT_ALIGN};
use crate::size::{format_size, ByteSize};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

/// The job key: `zoned = { zone_size = "256m", max_open = 32 }`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Zoned {
    /// Bytes per zone (fio's `zonesize`).
    pub zone_size: ByteSize,
    /// Zones open for writing at once, 0 for no limit (fio's `max_open_zones`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_open: u32,
    /// Share (0–1) of the range's capacity in valid bytes from which writes reset zones
    /// (fio's `zone_reset_threshold`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_threshold: Option<f64>,
    /// Share (0–1] of writes that reset their zone first once past the threshold (fio's
    /// `zone_reset_frequency`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_frequency: Option<f64>,
    /// Reads go anywhere in a zone, also above its write pointer (fio's `read_beyond_wp`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_beyond_wp: bool,
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

impl Zoned {
    /// What is wrong with it for `job`, if anything.
    pub fn check(&self, job: &Job) -> Result<(), String> {
        // fio resets a zone when a TRIM covers it; these zones know writes and reads only, and
        // a TRIM below a write pointer would leave the zone's state untrue.
        if job.access.trims() != crate::job::TrimKind::None {
            return Err(
                "TRIMs on zones (fio's zone resets) are not emulated: leave zoned out \
                        of a TRIM job"
                    .into(),
            );
        }
        let size = self.zone_size.0;
        if size < MIN_DIRECT_ALIGN || size < job.max_block() {
            return Err(format!(
                "zone_size {} is smaller than {}: a zone must hold a block of the job's largest \
                 size and a sector",
                format_size(size),
                format_size(job.max_block().max(MIN_DIRECT_ALIGN))
            ));
        }
        if job.direct && size % MIN_DIRECT_ALIGN != 0 {
            return Err(format!(
                "zone_size {size} does not keep zones on {MIN_DIRECT_ALIGN}-byte sectors, which \
                 O_DIRECT needs"
            ));
        }
        if let Some(t) = self.reset_threshold {
            if !(0.0..=1.0).contains(&t) {
                return Err(format!("reset_threshold {t} is not a share in [0, 1]"));
            }
        }
        if let Some(f) = self.reset_frequency {
            if !(f > 0.0 && f <= 1.0) {
                return Err(format!("reset_frequency {f} is not a share in (0, 1]"));
            }
        }
        if self.reset_frequency.is_some() != self.reset_threshold.is_some() {
            return Err("reset_threshold and reset_frequency go together: give both".into());
        }
        if job.stride.is_some() || job.sprandom.is_some() {
            return Err("zones decide where writes go: drop strided access or sprandom".into());
        }
        Ok(())
    }
}

impl Job {
    /// A zoned job that only reads, below write pointers, of zones that start empty: there is
    /// nothing to read, so it ends at once (as fio's does).
    pub fn nothing_to_read(&self) -> bool {
        self.zoned
            .as_ref()
            .is_some_and(|z| !z.read_beyond_wp && !self.writes())
    }
}

/// One zone, clipped to the worker's range.
#[derive(Clone, Copy, Debug)]
struct Zone {
    start: u64,
    end: u64,
    wp: u64,
    open: bool,
}

/// The zones of one range and their write pointers.
#[derive(Debug)]
pub struct ZoneTable {
    zones: Vec<Zone>,
    /// Index on the target's grid of zones of `zones[0]`.
    first: u64,
    zone_size: u64,
    range: (u64, u64),
    /// Open zones, by index in `zones`.
    open: Vec<usize>,
    /// Zones that hold written bytes, by index: where reads look when theirs holds none.
    filled: BTreeSet<usize>,
    max_open: usize,
    /// Sum of the zones' written bytes.
    valid_bytes: u64,
    /// Valid bytes from which writes reset zones, and every how many writes.
    reset_from: Option<u64>,
    reset_every: u32,
    countdown: u32,
    read_beyond_wp: bool,
    writes: bool,
    /// Writes are cut to, and zones are full below, multiples of this.
    min_block: u64,
    align: u64,
    resets: u64,
}

/// A table shared by the threads of a span.
pub type SharedZones = Arc<Mutex<ZoneTable>>;

impl ZoneTable {
    /// The table of `job`'s zones in `[lo, hi)`, if the job is zoned.
    pub fn for_range(job: &Job, (lo, hi): (u64, u64)) -> Option<SharedZones> {
        let z = job.zoned.as_ref()?;
        let size = z.zone_size.0.max(1);
        let mut first = lo / size;
        let mut zones: Vec<Zone> = (first..hi.div_ceil(size))
            .map(|i| {
                let start = (i * size).max(lo);
                Zone {
                    start,
                    end: ((i + 1) * size).min(hi),
                    wp: start,
                    open: false,
                }
            })
            .collect();
        // A zone clipped by the range to less than a block holds no write: left out (writes
        // drawn in it go to its neighbour), unless it is all there is.
        let holds = |z: &Zone| z.end - z.start >= job.max_block();
        if zones.len() > 1 && !holds(&zones[zones.len() - 1]) {
            zones.pop();
        }
        if zones.len() > 1 && !holds(&zones[0]) {
            zones.remove(0);
            first += 1;
        }
        let every = z
            .reset_frequency
            .map_or(1, |f| (1.0 / f).round().max(1.0) as u32);
        Some(Arc::new(Mutex::new(ZoneTable {
            zones,
            first,
            zone_size: size,
            range: (lo, hi),
            open: Vec::new(),
            filled: BTreeSet::new(),
            max_open: z.max_open as usize,
            valid_bytes: 0,
            reset_from: z
                .reset_threshold
                .map(|t| ((hi - lo) as f64 * t).ceil() as u64),
            reset_every: every,
            countdown: every,
            read_beyond_wp: z.read_beyond_wp,
            writes: job.writes(),
            min_block: job.all_block_sizes().map(|s| s.bytes).min().unwrap_or(4096),
            align: job.align(),
            resets: 0,
        })))
    }

    /// Where a request the workload drew as (`dir`, `offset`, `len`) goes: a write to a write
    /// pointer, a read below one. `random` says whether the offset was a random draw.
    pub fn place(
        &mut self,
        dir: Direction,
        offset: u64,
        len: u64,
        random: bool,
    ) -> (Direction, u64, u64) {
        if dir == Direction::Read {
            if self.read_beyond_wp || !self.writes {
                // A job that only reads ends before its first request (`nothing_to_read`)
                // unless it may read beyond write pointers.
                return (dir, offset, len);
            }
            if let Some(at) = self.read_at(offset, len, random) {
                return (dir, at, len);
            }
        }
        let (at, len) = self.write_at(offset, len);
        (Direction::Write, at, len)
    }

    fn zone_of(&self, offset: u64) -> usize {
        let i = (offset / self.zone_size).saturating_sub(self.first) as usize;
        i.min(self.zones.len() - 1)
    }

    /// A read of `len` at or near `offset`, below a write pointer; `None` where no zone
    /// holds `len` bytes.
    fn read_at(&self, offset: u64, len: u64, random: bool) -> Option<u64> {
        let drawn = self.zone_of(offset);
        let held = |z: &Zone| z.wp - z.start >= len;
        let z = &self.zones[drawn];
        let in_place = if random {
            held(z)
        } else {
            offset >= z.start && offset + len <= z.wp
        };
        if in_place && !random {
            return Some(offset);
        }
        let z = if in_place {
            z
        } else {
            // The next zone that holds a block, wrapping past the range's end: among the
            // zones written at all, so a read costs no walk over empty ones.
            let next = self
                .filled
                .range(drawn + 1..)
                .chain(self.filled.range(..=drawn))
                .copied()
                .find(|&i| held(&self.zones[i]))?;
            let z = &self.zones[next];
            if !random {
                return Some(z.start);
            }
            z
        };
        // Random: the draw's place in its zone, folded into what this zone holds.
        let slots = (z.wp - z.start - len) / self.align + 1;
        let into = offset.saturating_sub(self.zones[drawn].start) / self.align;
        Some(z.start + into % slots * self.align)
    }

    /// A write of up to `len` at the write pointer of the zone `offset` picks.
    fn write_at(&mut self, offset: u64, len: u64) -> (u64, u64) {
        let mut i = self.zone_of(offset);
        if !self.zones[i].open {
            if self.max_open > 0 && self.open.len() >= self.max_open {
                // One of the open zones instead, picked by the offset (as fio does).
                let (lo, hi) = self.range;
                let at = (offset.saturating_sub(lo)) as u128 * self.open.len() as u128;
                i = self.open[(at / u128::from((hi - lo).max(1))) as usize % self.open.len()];
            } else {
                self.zones[i].open = true;
                self.open.push(i);
            }
        }
        if let Some(from) = self.reset_from {
            if self.valid_bytes >= from {
                self.countdown -= 1;
                if self.countdown == 0 {
                    self.countdown = self.reset_every;
                    self.reset(i);
                }
            }
        }
        if self.zones[i].end - self.zones[i].wp < self.min_block {
            self.reset(i);
        }
        let z = &mut self.zones[i];
        let room = z.end - z.wp;
        let len = if len <= room {
            len
        } else {
            room / self.min_block * self.min_block
        };
        let at = z.wp;
        if at == z.start && len > 0 {
            self.filled.insert(i);
        }
        let z = &mut self.zones[i];
        z.wp += len;
        self.valid_bytes += len;
        if z.end - z.wp < self.min_block {
            z.open = false;
            self.open.retain(|&o| o != i);
        }
        (at, len)
    }

    fn reset(&mut self, i: usize) {
        let z = &mut self.zones[i];
        self.valid_bytes -= z.wp - z.start;
        z.wp = z.start;
        self.filled.remove(&i);
        self.resets += 1;
    }

    /// Zone resets so far.
    pub fn resets(&self) -> u64 {
        self.resets
    }

    /// Each zone's `(start, end, write pointer)`.
    pub fn write_pointers(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.zones.iter().map(|z| (z.start, z.end, z.wp))
    }

    /// Zones open for writing.
    pub fn open_zones(&self) -> usize {
        self.open.len()
    }
}

/// Locks a shared table (a poisoned lock still holds consistent zones: every change is made
/// whole under it).
pub fn lock(zones: &SharedZones) -> std::sync::MutexGuard<'_, ZoneTable> {
    zones.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
#[path = "zbd_tests.rs"]
mod tests;
