//! The write buffer: writes admitted as programs free room, released in order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Write buffer: space is taken when a write is admitted and given back when the NAND program
/// holding its data ends.
#[derive(Clone, Debug)]
pub(super) struct WriteBuffer {
    pub(super) cap: u64,
    pub(super) used: u64,
    /// Program ends and the bytes each frees, as [`WriteBuffer::release_key`]s, earliest first.
    pub(super) releases: BinaryHeap<Reverse<u128>>,
    /// When the space counted free became free: the latest release taken back.
    pub(super) free_since: u64,
}

impl WriteBuffer {
    /// A buffer of `cap` bytes, empty.
    pub(super) fn new(cap: u64) -> WriteBuffer {
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
    pub(super) fn release_key(end: u64, bytes: u64) -> u128 {
        (end as u128) << 64 | bytes as u128
    }

    /// The `(end, bytes)` of a [`WriteBuffer::release_key`].
    #[inline]
    pub(super) fn release_of(key: u128) -> (u64, u64) {
        ((key >> 64) as u64, key as u64)
    }

    /// A program ending at `end` gives `bytes` back.
    #[inline]
    pub(super) fn release_at(&mut self, end: u64, bytes: u64) {
        self.releases.push(Reverse(Self::release_key(end, bytes)));
    }

    /// Empties the buffer: nothing held, nothing pending.
    pub(in crate::model) fn clear(&mut self) {
        self.used = 0;
        self.releases.clear();
        self.free_since = 0;
    }

    /// When `bytes` fit in the buffer, at `t` or later. Writes are admitted in the order they
    /// arrive: when a write waits for a program to end, the space that program frees beyond
    /// its needs goes to the writes behind it, from then on, not before.
    #[inline]
    pub(super) fn admit(&mut self, t: u64, bytes: u64) -> u64 {
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
