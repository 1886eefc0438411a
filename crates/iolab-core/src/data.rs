//! The bytes a write carries: incompressible, zeros, compressible to a share, dedupable to a share.
//!
//! Each written block gets its own 64-bit content seed. A unique block draws a fresh seed; a
//! duplicate (with probability `dedupe_pct`) reuses the seed of a recent block, so it repeats
//! that block byte for byte. Within a block, every 512-byte segment is `(100 − compress_pct) %`
//! random bytes followed by zeros, so any compressor saves about `compress_pct` percent whatever
//! its window — the same construction as fio's `buffer_compress_percentage`.
//!
//! With a dedupe working set (fio's `dedupe_mode=working_set`) a duplicate repeats one of a
//! fixed set of blocks instead — as many as fit a share of the span — so duplicates spread
//! over the whole set rather than the last few writes; with `global` every job and thread
//! that sets it draws from one set (fio's `dedupe_global`), so blocks repeat across jobs.

use crate::job::{DataKind, Job};
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// A dedupe working set, as the job key `dedupe_set` gives it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DedupeSet {
    /// The set's size as a percent of the job's span (fio's default is 5).
    pub share_pct: f64,
    /// One set for every job and thread that sets it, rather than one per thread.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global: bool,
}

impl DedupeSet {
    /// What is wrong with it, if anything.
    pub fn check(&self) -> Result<(), String> {
        if !(self.share_pct > 0.0 && self.share_pct <= 100.0) {
            return Err(format!("share_pct {} is not in (0, 100]", self.share_pct));
        }
        Ok(())
    }
}

/// The seed base of the one global set.
const GLOBAL_SET: u64 = 0x6C0B_A15E_7DED_0000;

/// Bytes per segment of the compressible layout.
const SEGMENT: usize = 512;
/// How many recent block seeds a duplicate may repeat.
const DEDUPE_POOL: usize = 64;

/// Fills write buffers for one worker.
#[derive(Clone, Debug)]
pub struct DataGenerator {
    rng: Rng,
    kind: DataKind,
    random_per_segment: usize,
    dedupe_frac: f64,
    pool: Vec<u64>,
    next_slot: usize,
    /// A dedupe working set: its seed base and how many blocks it holds.
    working_set: Option<(u64, u64)>,
    /// Bytes every block repeats (the job's `pattern`), in place of the kind's content.
    pattern: Option<std::sync::Arc<[u8]>>,
}

impl DataGenerator {
    /// The generator for a job's worker, seeded from `seed`.
    pub fn new(job: &Job, seed: u64) -> Self {
        let mut g = Self::with(job.data, job.compress_pct, job.dedupe_pct, seed);
        if let (Some(set), Some(span)) = (&job.dedupe_set, job.span_bytes) {
            let smallest = job.all_block_sizes().map(|s| s.bytes).min().unwrap_or(4096);
            let blocks = ((span as f64 * set.share_pct / 100.0) / smallest.max(1) as f64)
                .ceil()
                .max(1.0) as u64;
            let base = if set.global { GLOBAL_SET } else { seed };
            g.working_set = Some((base, blocks));
        }
        g.pattern = job.pattern.as_deref().map(std::sync::Arc::from);
        g
    }

    /// A generator from the data settings alone.
    pub fn with(kind: DataKind, compress_pct: f64, dedupe_pct: f64, seed: u64) -> Self {
        let random_per_segment = ((1.0 - compress_pct / 100.0) * SEGMENT as f64).round() as usize;
        DataGenerator {
            rng: Rng::new(seed ^ 0x5EED_DA7A),
            kind,
            random_per_segment,
            dedupe_frac: dedupe_pct / 100.0,
            pool: Vec::with_capacity(DEDUPE_POOL),
            next_slot: 0,
            working_set: None,
            pattern: None,
        }
    }

    /// A generator with the same settings and its own content stream (seeded from this one, so
    /// a run stays reproducible), for another thread serving the same worker.
    pub fn fork(&mut self) -> Self {
        DataGenerator {
            rng: Rng::new(self.rng.next_u64()),
            kind: self.kind,
            random_per_segment: self.random_per_segment,
            dedupe_frac: self.dedupe_frac,
            pool: Vec::with_capacity(DEDUPE_POOL),
            next_slot: 0,
            working_set: self.working_set,
            pattern: self.pattern.clone(),
        }
    }

    /// True when buffers never change (zeros, a pattern): the caller may fill once and skip
    /// refills.
    pub fn is_constant(&self) -> bool {
        self.kind == DataKind::Zeros || self.pattern.is_some()
    }

    /// Fills `buf` with the content of the next written block; returns the block's content
    /// seed (0 for zeros), which verify records in the block's stamp.
    #[inline]
    pub fn fill(&mut self, buf: &mut [u8]) -> u64 {
        if let Some(p) = &self.pattern {
            crate::pattern::fill(buf, p);
            return 0;
        }
        if self.kind == DataKind::Zeros {
            buf.fill(0);
            return 0;
        }
        let seed = if let Some((base, blocks)) = self.working_set {
            if self.dedupe_frac > 0.0 && self.rng.unit() < self.dedupe_frac {
                let k = self.rng.below(blocks);
                Rng::new(base ^ k.wrapping_mul(0x9E37_79B9_7F4A_7C15)).next_u64()
            } else {
                self.rng.next_u64()
            }
        } else if !self.pool.is_empty()
            && self.dedupe_frac > 0.0
            && self.rng.unit() < self.dedupe_frac
        {
            self.pool[self.rng.below(self.pool.len() as u64) as usize]
        } else {
            let seed = self.rng.next_u64();
            if self.dedupe_frac > 0.0 {
                if self.pool.len() < DEDUPE_POOL {
                    self.pool.push(seed);
                } else {
                    self.pool[self.next_slot] = seed;
                    self.next_slot = (self.next_slot + 1) % DEDUPE_POOL;
                }
            }
            seed
        };
        let mut content = Rng::new(seed);
        if self.random_per_segment >= SEGMENT {
            content.fill(buf);
            return seed;
        }
        for segment in buf.chunks_mut(SEGMENT) {
            let random = self.random_per_segment.min(segment.len());
            content.fill(&mut segment[..random]);
            segment[random..].fill(0);
        }
        seed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn saved_share(data: &[u8]) -> f64 {
        let packed = zstd::bulk::compress(data, 3).unwrap();
        100.0 * (1.0 - packed.len() as f64 / data.len() as f64)
    }

    fn sample(gen: &mut DataGenerator, blocks: usize, bs: usize) -> Vec<u8> {
        let mut out = vec![0u8; blocks * bs];
        for chunk in out.chunks_mut(bs) {
            gen.fill(chunk);
        }
        out
    }

    #[test]
    fn a_fork_keeps_the_settings_with_content_of_its_own() {
        let mut g = DataGenerator::with(DataKind::Random, 50.0, 0.0, 1);
        let mut fork = g.fork();
        let (a, b) = (sample(&mut g, 64, 4096), sample(&mut fork, 64, 4096));
        assert_ne!(a, b);
        let saved = saved_share(&b);
        assert!((saved - 50.0).abs() < 5.0, "fork saved {saved}%");
        // Reproducible: the same seed forks the same stream.
        let mut again = DataGenerator::with(DataKind::Random, 50.0, 0.0, 1).fork();
        assert_eq!(sample(&mut again, 64, 4096), b);
    }

    #[test]
    fn random_data_does_not_compress() {
        let mut g = DataGenerator::with(DataKind::Random, 0.0, 0.0, 1);
        let saved = saved_share(&sample(&mut g, 256, 4096));
        assert!(saved < 1.0, "saved {saved}%");
    }

    #[test]
    fn compressibility_is_within_a_few_points_of_the_request() {
        for pct in [25.0, 50.0, 75.0, 90.0] {
            let mut g = DataGenerator::with(DataKind::Random, pct, 0.0, 7);
            let saved = saved_share(&sample(&mut g, 256, 4096));
            assert!(
                (saved - pct).abs() < 3.0,
                "asked {pct}%, zstd saved {saved:.1}%"
            );
        }
    }

    #[test]
    fn dedupe_share_is_within_a_few_points_of_the_request() {
        for pct in [20.0, 50.0, 80.0] {
            let mut g = DataGenerator::with(DataKind::Random, 0.0, pct, 3);
            let n = 20_000;
            let data = sample(&mut g, n, 4096);
            let unique: HashSet<&[u8]> = data.chunks(4096).collect();
            let dup = 100.0 * (1.0 - unique.len() as f64 / n as f64);
            assert!((dup - pct).abs() < 2.0, "asked {pct}%, measured {dup:.1}%");
        }
    }

    #[test]
    fn a_working_set_bounds_the_duplicates_and_a_global_one_is_shared() {
        // 4 MiB of 4 KiB blocks, a set of 10 % of it: 103 blocks (102.4 rounded up).
        let job = |global: bool| {
            crate::job::JobSpec::from_toml(
                &format!(
                    "size = \"4m\"\ndedupe_pct = 50\n\
                     dedupe_set = {{ share_pct = 10, global = {global} }}"
                ),
                "t.toml",
            )
            .unwrap()
            .validate()
            .unwrap()
        };
        let blocks = |g: &mut DataGenerator| -> Vec<Vec<u8>> {
            (0..4000)
                .map(|_| {
                    let mut b = vec![0u8; 4096];
                    g.fill(&mut b);
                    b
                })
                .collect()
        };
        let dupes = |all: &[Vec<u8>]| -> HashSet<Vec<u8>> {
            let mut seen = HashSet::new();
            let mut twice = HashSet::new();
            for b in all {
                if !seen.insert(b.clone()) {
                    twice.insert(b.clone());
                }
            }
            twice
        };
        let a = blocks(&mut DataGenerator::new(&job(false), 1));
        let unique: HashSet<&Vec<u8>> = a.iter().collect();
        let dup = 100.0 * (1.0 - unique.len() as f64 / a.len() as f64);
        // About half the writes come from the set of 103, which they nearly all reach.
        assert!((dup - 50.0).abs() < 5.0, "{dup:.1}% duplicates");
        assert!((95..=103).contains(&dupes(&a).len()), "{}", dupes(&a).len());
        // Another thread's own set shares nothing with it; the global set is one for both.
        let b = blocks(&mut DataGenerator::new(&job(false), 2));
        assert!(dupes(&a).is_disjoint(&dupes(&b)));
        let (ga, gb) = (
            blocks(&mut DataGenerator::new(&job(true), 1)),
            blocks(&mut DataGenerator::new(&job(true), 2)),
        );
        assert!(dupes(&ga).intersection(&dupes(&gb)).count() > 90);
    }

    #[test]
    fn every_write_gets_fresh_content() {
        let mut g = DataGenerator::with(DataKind::Random, 0.0, 0.0, 9);
        let mut a = vec![0u8; 4096];
        let mut b = vec![0u8; 4096];
        g.fill(&mut a);
        g.fill(&mut b);
        assert_ne!(a, b);
    }

    #[test]
    fn zeros_are_zeros() {
        let mut g = DataGenerator::with(DataKind::Zeros, 0.0, 0.0, 9);
        let mut a = vec![1u8; 4096];
        g.fill(&mut a);
        assert!(a.iter().all(|&b| b == 0));
    }
}
