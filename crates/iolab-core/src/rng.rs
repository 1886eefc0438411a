//! A small, fast, seedable random number generator (xoshiro256++ seeded through SplitMix64).
//!
//! Implemented here rather than pulled in so that a seed gives the same stream forever: results
//! carry their seed, and a rerun with it must issue the same offsets and write the same bytes.

/// SplitMix64 step, used to expand one `u64` seed into a full generator state.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64 as a generator of its own: the stream `iolab trace synth` has always drawn from,
/// kept so that a seed still synthesises the same trace. [`Rng`] is the one to use elsewhere.
#[derive(Clone, Debug)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from a seed; equal seeds give equal sequences.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.0)
    }

    /// Uniform in `0..n` (`0` when `n == 0`), by multiply-shift as [`Rng::below`].
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// xoshiro256++ (Blackman & Vigna, 2019): 2^256−1 period, passes BigCrush, ~1 ns per draw.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator whose whole stream is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        Rng {
            s: [
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
            ],
        }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = (self.s[0].wrapping_add(self.s[3]))
            .rotate_left(23)
            .wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (Lemire's multiply-shift; bias below 2^-64 × n, negligible).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A uniform float in `[0, 1)`.
    #[inline]
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Fills `buf` with random bytes, eight at a time.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut chunks = buf.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let rest = chunks.into_remainder();
        if !rest.is_empty() {
            let bytes = self.next_u64().to_le_bytes();
            rest.copy_from_slice(&bytes[..rest.len()]);
        }
    }
}

/// A pseudo-random permutation of `0..n` with random access: [`Permutation::at`]`(i)` for `i` in
/// `0..n` gives each value of `0..n` exactly once. A four-round Feistel network permutes the
/// smallest power-of-four domain holding `n` (at most 4n values), and cycle walking (Black and
/// Rogaway, 2002) steps out of what lies past `n`: a few hashes per value, no table, so a
/// random job's one pass over a terabyte of blocks costs no memory. Fixed forever for a seed,
/// like [`Rng`].
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// A permutation of `0..n` (`n` at least 1) chosen by `seed`.
    pub fn new(n: u64, seed: u64) -> Self {
        let bits = (u64::BITS - n.saturating_sub(1).leading_zeros()).max(2);
        let mut s = seed;
        Permutation {
            n: n.max(1),
            half_bits: bits.div_ceil(2),
            keys: std::array::from_fn(|_| splitmix64(&mut s)),
        }
    }

    /// How many values it permutes.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Never: a permutation holds at least one value.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The `i`-th value (`i` below [`len`](Self::len)).
    #[inline]
    pub fn at(&self, i: u64) -> u64 {
        debug_assert!(i < self.n);
        // The cycle through `i` comes back to `i`, which is below n: the walk ends.
        let mut x = i;
        loop {
            x = self.feistel(x);
            if x < self.n {
                return x;
            }
        }
    }

    /// One pass of the network over the power-of-four domain: each round is invertible, so
    /// the whole is a bijection of the domain.
    #[inline]
    fn feistel(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for &k in &self.keys {
            let mut z = r ^ k;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (l, r) = (r, l ^ ((z ^ (z >> 31)) & mask));
        }
        (l << self.half_bits) | r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
        assert_ne!(Rng::new(7).next_u64(), Rng::new(8).next_u64());
    }

    #[test]
    fn a_permutation_gives_every_value_once_in_a_seeded_order() {
        for n in [1, 2, 3, 4, 5, 17, 64, 65, 1000, 4097] {
            let p = Permutation::new(n, 7);
            let mut seen: Vec<u64> = (0..n).map(|i| p.at(i)).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..n).collect::<Vec<_>>(), "n = {n}");
        }
        let order = |seed| {
            let p = Permutation::new(1000, seed);
            (0..1000).map(|i| p.at(i)).collect::<Vec<_>>()
        };
        assert_eq!(order(7), order(7));
        assert_ne!(order(7), order(8));
        // Not the identity, nor close to it: few values stay in place or step by one.
        let p = Permutation::new(1000, 7);
        let ordered = (1..1000).filter(|&i| p.at(i) == p.at(i - 1) + 1).count();
        assert!(ordered < 20, "{ordered} steps of +1");
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(1);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let v = r.below(10);
            seen[v as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
    }
}
