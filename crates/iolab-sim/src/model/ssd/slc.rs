//! The SLC write cache of a multi-bit array: LPNs held in SLC mode, folded to the main array.

use super::*;
use std::collections::VecDeque;

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
    pub(super) held: Vec<u64>,
    /// Held LPNs, oldest first: the order they fold in.
    pub(super) order: VecDeque<u32>,
    /// Folding is accounted up to this time.
    pub(super) folded_to: u64,
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
    pub(super) fn used(&self) -> u64 {
        self.order.len() as u64 * 4096
    }

    /// Whether a program unit of `unit_bytes` fits when `free_bytes` of the drive's user space
    /// hold no data: the dynamic part lives in free TLC cells, three of which hold one SLC bit.
    pub(super) fn has_room(&self, unit_bytes: u64, free_bytes: u64) -> bool {
        self.used() + unit_bytes <= self.static_bytes + self.dynamic_bytes.min(free_bytes / 3)
    }

    pub(super) fn is_held(&self, lpn: u64) -> bool {
        self.held
            .get((lpn / 64) as usize)
            .is_some_and(|w| w & (1 << (lpn % 64)) != 0)
    }

    pub(super) fn set_held(&mut self, lpn: u64, on: bool) {
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
    pub(super) fn note_write(&mut self, lpn: u64, in_slc: bool) {
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
    pub(super) fn fold(&mut self, bytes: u64) {
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
    pub(in crate::model) fn clear(&mut self) {
        self.held.clear();
        self.order.clear();
    }
}

impl Ssd {
    /// Folds the SLC cache into the array for the time all dies have been idle before `at`,
    /// at the array's program speed (every die programming: a unit's load over its channel,
    /// then its tPROG, as a host write's program in `program_unit`). It takes no die time (the
    /// dies had nothing else to do) and no energy: that would land in whichever test writes
    /// next.
    pub(super) fn fold_slc(&mut self, at: u64) {
        let idle_from = self.die_free.latest();
        let unit_bytes = self.unit_bytes;
        let load_ns = self.unit_load_ns();
        let program_ns = mean_of(self.program_ns) + load_ns;
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
}
