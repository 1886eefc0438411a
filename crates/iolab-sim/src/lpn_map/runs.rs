//! A chunk written in order: its entries as runs of consecutive LPNs that name the same node.
//!
//! A sequential write puts a program unit's LPNs (8–64 of them) into one node, so a chunk
//! written front to back holds a few hundred runs where a dense chunk stores 4096 entries:
//! writing a whole 500 GB drive once took 480 MB of dense chunks and takes a quarter of that
//! as runs. Any write that does not continue the chunk's last run turns it sparse or dense.

use super::{Entry, CHUNK_LPNS};

/// LPNs `start..` (up to the next run's start, or the chunk's end) name `node`, `size` units.
#[derive(Clone, Copy, Debug)]
struct Run {
    start: u16,
    size: u8,
    node: u32,
}

/// Past this many runs a dense chunk is smaller (8 bytes a run against 4 an LPN).
const RUNS_MAX: usize = CHUNK_LPNS / 2;

/// The entries of offsets `start..end` of a chunk, as runs; the rest of the chunk analytic.
#[derive(Clone, Debug)]
pub(super) struct Runs {
    runs: Vec<Run>,
    end: u16,
}

impl Runs {
    /// A chunk whose one stored entry is `e`.
    pub(super) fn new(e: Entry) -> Runs {
        Runs {
            runs: vec![Run {
                start: e.offset,
                size: e.size,
                node: e.node,
            }],
            end: e.offset + 1,
        }
    }

    /// Entries stored.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        (self.end - self.runs[0].start) as usize
    }

    /// The run holding `offset`, if stored.
    #[inline]
    fn find(&self, offset: u16) -> Option<usize> {
        if offset < self.runs[0].start || offset >= self.end {
            return None;
        }
        Some(self.runs.partition_point(|r| r.start <= offset) - 1)
    }

    /// The stored entry of `offset`: its node and size.
    #[inline]
    pub(super) fn get(&self, offset: u16) -> Option<(u32, u8)> {
        self.find(offset)
            .map(|i| (self.runs[i].node, self.runs[i].size))
    }

    /// Stores `e` when it continues the chunk in order (the offset right after the last
    /// stored one) and the runs stay smaller than a dense chunk; false otherwise.
    #[inline]
    pub(super) fn append(&mut self, e: Entry) -> bool {
        if e.offset != self.end {
            return false;
        }
        let last = self.runs.last().expect("a run is never empty");
        if last.node != e.node || last.size != e.size {
            if self.runs.len() >= RUNS_MAX {
                return false;
            }
            self.runs.push(Run {
                start: e.offset,
                size: e.size,
                node: e.node,
            });
        }
        self.end += 1;
        true
    }

    /// Points the entry of `offset` at `node`, for path compression: every LPN of its run
    /// named the same node, so all of them resolve to `node`.
    pub(super) fn shortcut(&mut self, offset: u16, node: u32) {
        if let Some(i) = self.find(offset) {
            self.runs[i].node = node;
        }
    }

    /// Every stored entry, in offset order.
    pub(super) fn entries(&self) -> impl Iterator<Item = Entry> + '_ {
        self.runs.iter().enumerate().flat_map(move |(i, r)| {
            let end = self.runs.get(i + 1).map_or(self.end, |n| n.start);
            (r.start..end).map(move |offset| Entry {
                offset,
                size: r.size,
                node: r.node,
            })
        })
    }

    /// Renames every node held.
    pub(super) fn renumber(&mut self, rename: impl Fn(u32) -> u32) {
        self.runs.iter_mut().for_each(|r| r.node = rename(r.node));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(offset: u16, node: u32) -> Entry {
        Entry {
            offset,
            size: 1,
            node,
        }
    }

    #[test]
    fn in_order_writes_are_runs_and_others_are_refused() {
        let mut r = Runs::new(entry(100, 7));
        for o in 101..110 {
            assert!(r.append(entry(o, 7)));
        }
        for o in 110..120 {
            assert!(r.append(entry(o, 8)));
        }
        assert_eq!(r.runs.len(), 2, "two nodes, two runs");
        assert_eq!(r.len(), 20);
        assert_eq!(r.get(99), None, "before the first stored offset");
        assert_eq!(r.get(100), Some((7, 1)));
        assert_eq!(r.get(109), Some((7, 1)));
        assert_eq!(r.get(110), Some((8, 1)));
        assert_eq!(r.get(119), Some((8, 1)));
        assert_eq!(r.get(120), None, "past the last stored offset");
        assert!(!r.append(entry(105, 9)), "a rewrite is not in order");
        assert!(!r.append(entry(121, 9)), "a gap is not in order");
        r.shortcut(112, 3);
        assert_eq!(r.get(110), Some((3, 1)), "the run shares its node");
        let offsets: Vec<u16> = r.entries().map(|e| e.offset).collect();
        assert_eq!(offsets, (100..120).collect::<Vec<_>>());
    }

    #[test]
    fn a_chunk_of_alternating_nodes_stops_taking_runs() {
        let mut r = Runs::new(entry(0, 1));
        let mut o = 1;
        while r.append(entry(o, 1 + o as u32 % 2)) {
            o += 1;
        }
        assert_eq!(
            r.runs.len(),
            RUNS_MAX,
            "refused once a dense chunk is smaller"
        );
    }
}
