//! A queue of timed items that hands them out earliest first, in the order they were queued
//! among equal times.
//!
//! Most items are queued in time order: a drive's write completions follow its buffer, which
//! frees up in order; a read's data comes up links that serve in order. Those go to the back
//! of a deque at no cost; the rest wait in a binary heap. A heap alone cost a tenth of a
//! simulated write (a pop sifts through every level).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

/// An item with its time and its place in the queueing order.
#[derive(Clone, Debug)]
struct Entry<T> {
    at: u64,
    seq: u64,
    item: T,
}

impl<T> Entry<T> {
    fn key(&self) -> (u64, u64) {
        (self.at, self.seq)
    }
}

// Reversed, so that the standard (max-)heap hands out the earliest.
impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key().cmp(&self.key())
    }
}

impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<T> Eq for Entry<T> {}

/// Timed items, earliest first; among equal times, first queued first.
#[derive(Clone, Debug)]
pub struct TimeQueue<T> {
    /// Items queued no earlier than the one before them, in order.
    in_order: VecDeque<Entry<T>>,
    /// The others.
    out_of_order: BinaryHeap<Entry<T>>,
    queued: u64,
}

impl<T> Default for TimeQueue<T> {
    fn default() -> Self {
        TimeQueue {
            in_order: VecDeque::new(),
            out_of_order: BinaryHeap::new(),
            queued: 0,
        }
    }
}

impl<T> TimeQueue<T> {
    /// Queues `item` for time `at`.
    #[inline]
    pub fn push(&mut self, at: u64, item: T) {
        self.queued += 1;
        let e = Entry {
            at,
            seq: self.queued,
            item,
        };
        if self.in_order.back().is_none_or(|b| b.at <= at) {
            self.in_order.push_back(e);
        } else {
            self.out_of_order.push(e);
        }
    }

    /// Whether the earliest is the deque's front (`Some(true)`), the heap's (`Some(false)`).
    #[inline]
    fn front_is_in_order(&self) -> Option<bool> {
        match (self.in_order.front(), self.out_of_order.peek()) {
            (Some(a), Some(b)) => Some(a.key() < b.key()),
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (None, None) => None,
        }
    }

    /// The time of the earliest item.
    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        match (self.in_order.front(), self.out_of_order.peek()) {
            (Some(a), Some(b)) => Some(a.at.min(b.at)),
            (a, b) => a.or(b).map(|e| e.at),
        }
    }

    /// Takes the earliest item.
    #[inline]
    pub fn pop(&mut self) -> Option<(u64, T)> {
        let e = if self.front_is_in_order()? {
            self.in_order.pop_front()
        } else {
            self.out_of_order.pop()
        }?;
        Some((e.at, e.item))
    }

    /// Every item, in no particular order.
    pub fn items(&self) -> impl Iterator<Item = &T> {
        self.in_order
            .iter()
            .chain(self.out_of_order.iter())
            .map(|e| &e.item)
    }

    /// Keeps only the items `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.in_order.retain(|e| keep(&e.item));
        self.out_of_order.retain(|e| keep(&e.item));
    }

    /// Drops every item.
    pub fn clear(&mut self) {
        self.in_order.clear();
        self.out_of_order.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;

    #[test]
    fn items_come_out_as_from_one_heap_ordered_by_time_then_queueing() {
        let mut q = TimeQueue::default();
        let mut reference = BinaryHeap::new();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut now = 0u64;
        let mut seq = 0u64;
        for step in 0..20_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 3 != 0 {
                // Mostly in order, sometimes earlier than the last, often tied.
                let at = if x % 5 == 0 {
                    now + (x >> 32) % 50
                } else {
                    now + 100 + (x >> 40) % 4 * 10
                };
                seq += 1;
                q.push(at, step);
                reference.push(Reverse((at, seq, step)));
            } else {
                let expected = reference.pop().map(|Reverse((at, _, item))| (at, item));
                assert_eq!(q.peek_time(), expected.map(|(at, _)| at));
                assert_eq!(q.pop(), expected);
                if let Some((at, _)) = expected {
                    now = now.max(at);
                }
            }
        }
        q.retain(|item| item % 2 == 0);
        // Sorted by `Reverse`: the latest first, so popping from the back gives the earliest.
        let mut rest: Vec<_> = reference
            .into_sorted_vec()
            .into_iter()
            .filter(|Reverse((_, _, item))| item % 2 == 0)
            .map(|Reverse((at, _, item))| (at, item))
            .collect();
        while let Some(expected) = rest.pop() {
            assert_eq!(q.pop(), Some(expected));
        }
        assert_eq!(q.pop(), None);
    }
}
