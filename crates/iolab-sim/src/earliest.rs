//! Which of a fixed set of times is the earliest, kept up to date as the times move on.
//!
//! A tournament tree: each inner node holds the index of the earlier of its two children, so
//! settling one moved time costs log2(n) comparisons. An SSD picks the die that frees up first
//! for every program unit it fills (every eighth 4 KiB write on the SSD 750, among 90 dies): a
//! scan cost a tenth of a simulated write. Every read moves its die's time on too, and a
//! random-read test asks for no program unit at all, so a move only marks the time; the tree
//! settles the marked ones when asked.

/// Times indexed `0..n`, with the index of the earliest (the lowest index among equals).
#[derive(Clone, Debug)]
pub struct Earliest {
    /// The times, padded to a power of two with `u64::MAX` (a pad never wins: it ties only
    /// with other pads or a real `u64::MAX`, and then the lower index does).
    times: Vec<u64>,
    /// `tree[1]` is the winner; `tree[k]` the winner of `tree[2k]` and `tree[2k + 1]`; leaf `i`
    /// is at `tree[leaves + i]`. Settled, except above the moved times.
    tree: Vec<u32>,
    /// The times moved since the tree was last settled, one bit each.
    moved: Vec<u64>,
    len: usize,
}

impl Earliest {
    /// `n` times, all zero.
    pub fn new(n: usize) -> Earliest {
        let leaves = n.max(1).next_power_of_two();
        let mut times = vec![u64::MAX; leaves];
        times[..n].fill(0);
        let mut tree = vec![0u32; 2 * leaves];
        for (i, leaf) in tree[leaves..].iter_mut().enumerate() {
            *leaf = i as u32;
        }
        let mut e = Earliest {
            moved: vec![0; leaves.div_ceil(64)],
            times,
            tree,
            len: n,
        };
        for k in (1..leaves).rev() {
            e.tree[k] = e.winner(k);
        }
        e
    }

    #[inline]
    fn winner(&self, k: usize) -> u32 {
        let (a, b) = (self.tree[2 * k], self.tree[2 * k + 1]);
        if self.times[b as usize] < self.times[a as usize] {
            b
        } else {
            a
        }
    }

    /// Moves the time of `i` on to `t` if that is later.
    #[inline]
    pub fn raise(&mut self, i: usize, t: u64) {
        if t > self.times[i] {
            self.times[i] = t;
            self.moved[i / 64] |= 1 << (i % 64);
        }
    }

    /// The index of the earliest time (the lowest index among equal times).
    #[inline]
    pub fn earliest(&mut self) -> usize {
        self.settle();
        self.tree[1] as usize
    }

    /// Replays the matches above every moved time.
    fn settle(&mut self) {
        let leaves = self.times.len();
        for w in 0..self.moved.len() {
            let mut bits = std::mem::take(&mut self.moved[w]);
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let mut k = (leaves + i) / 2;
                while k > 0 {
                    self.tree[k] = self.winner(k);
                    k /= 2;
                }
            }
        }
    }

    /// The latest time.
    pub fn latest(&self) -> u64 {
        self.times[..self.len].iter().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first index holding the smallest time, by a scan.
    fn scan(times: &[u64]) -> usize {
        let mut best = 0;
        for (i, &t) in times.iter().enumerate() {
            if t < times[best] {
                best = i;
            }
        }
        best
    }

    #[test]
    fn the_earliest_follows_every_raise_as_a_scan_would() {
        for n in [1usize, 2, 3, 7, 8, 90] {
            let mut e = Earliest::new(n);
            let mut times = vec![0u64; n];
            assert_eq!(e.earliest(), 0);
            // A fixed pseudo-random sequence with many ties (times in coarse steps).
            let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ n as u64;
            for _ in 0..5000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let i = (x % n as u64) as usize;
                let t = times[i] + (x >> 40) % 3 * 10;
                times[i] = times[i].max(t);
                e.raise(i, t);
                // Asked after every few moves, so that it settles several at once.
                if (x >> 20) % 4 == 0 {
                    assert_eq!(e.earliest(), scan(&times), "n = {n}");
                }
            }
            assert_eq!(e.latest(), *times.iter().max().unwrap());
        }
    }
}
