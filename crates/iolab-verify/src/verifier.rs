//! A job's verifier: stamps its writes, tracks what each granule should hold, checks blocks
//! read back and keeps the tally. Shared by the job's threads.

use crate::check::{check, Expected, Failure, Kind, Verdict};
use crate::journal::JournalWriter;
use crate::stamp::{stamp_block, BlockFacts};
use crate::table::{AdviseHugePages, Table};
use iolab_core::job::VerifyMode;
use iolab_core::result::{VerifyFailure, VerifySummary};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Failures kept in full; the rest are counted.
pub const KEPT_FAILURES: usize = 100;

/// Generations are unique within a process (across its jobs), so a journal spanning several
/// jobs never sees one twice.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

/// This process's target id: what its blocks carry, so that blocks of earlier runs on the same
/// target are never taken for this run's.
pub fn process_run_id() -> u32 {
    static ID: OnceLock<u32> = OnceLock::new();
    *ID.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let seed = format!("{nanos}:{}", std::process::id());
        (twox_hash::XxHash3_64::oneshot(seed.as_bytes()) as u32).max(1)
    })
}

/// Microseconds since the Unix epoch.
fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Counts by kind and the first failures.
#[derive(Debug, Default, Clone)]
pub struct Tally {
    /// Stretches checked.
    pub blocks: u64,
    /// Bytes checked.
    pub bytes: u64,
    /// Failures per kind, in [`Kind::ALL`] order.
    pub by_kind: [u64; 6],
    /// Losses allowed after a crash.
    pub allowed: u64,
    /// The first failures.
    pub kept: Vec<Failure>,
}

impl Tally {
    /// Adds a verdict on `len` bytes.
    pub fn add(&mut self, verdict: Verdict, len: u64) {
        self.blocks += 1;
        self.bytes += len;
        match verdict {
            Verdict::Ok => {}
            Verdict::Allowed => self.allowed += 1,
            Verdict::Failed(f) => {
                let i = Kind::ALL.iter().position(|k| *k == f.kind).expect("a kind");
                self.by_kind[i] += 1;
                if self.kept.len() < KEPT_FAILURES {
                    self.kept.push(f);
                }
            }
        }
    }

    /// Adds a failure that a crash allows (a write no flush covered): counted, not failed.
    pub fn add_allowed(&mut self, len: u64) {
        self.blocks += 1;
        self.bytes += len;
        self.allowed += 1;
    }

    /// Failures in all.
    pub fn failures(&self) -> u64 {
        self.by_kind.iter().sum()
    }

    /// The result's summary.
    pub fn summary(&self, mode: &str) -> VerifySummary {
        let k = |kind: Kind| self.by_kind[Kind::ALL.iter().position(|x| *x == kind).unwrap()];
        VerifySummary {
            mode: mode.into(),
            checksum: "xxh3-32 per sector".into(),
            blocks_checked: self.blocks,
            bytes_checked: self.bytes,
            failures: self.failures(),
            corrupted: k(Kind::Corrupted),
            misplaced: k(Kind::Misplaced),
            zeros: k(Kind::Zeros),
            torn: k(Kind::Torn),
            stale: k(Kind::Stale),
            foreign: k(Kind::Foreign),
            unflushed_lost: self.allowed,
            first_failures: self
                .kept
                .iter()
                .map(|f| VerifyFailure {
                    kind: f.kind.name().into(),
                    offset: f.offset,
                    len: f.len,
                    sector_offset: f.sector_offset,
                    expected: f.expected.clone(),
                    found: f.found.clone(),
                })
                .collect(),
            journal: None,
            journal_flushes: 0,
            problem: None,
        }
    }
}

/// Why a job cannot be verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TooLarge {
    /// Granules the span would need.
    pub granules: u64,
}

/// The verifier of one job.
#[derive(Debug)]
pub struct JobVerifier {
    mode: VerifyMode,
    run_id: u32,
    job_id: u32,
    table: Table,
    journal: Option<Arc<JournalWriter>>,
    tally: Mutex<Tally>,
    /// Writes completing after this (ns on the run's clock) were never acknowledged: the power
    /// was cut first (a model's `--power-loss-at`).
    ack_deadline_ns: AtomicU64,
    /// The Unix time of the run clock's zero, in µs: a stamp's time is this plus the clock's
    /// reading, which the driver has at hand (reading the system clock per write cost ~2 % of
    /// a write's CPU on zram).
    clock_zero_unix_us: AtomicU64,
}

impl JobVerifier {
    /// A verifier for a job named `name` over `len` bytes from `base`, whose blocks are all
    /// multiples of `granule`; writes are journaled in `journal` if given. `huge_pages` backs
    /// a large expected-state table with huge pages (see [`Table::new`]).
    pub fn new(
        mode: VerifyMode,
        name: &str,
        (base, len, granule): (u64, u64, u64),
        journal: Option<Arc<JournalWriter>>,
        huge_pages: Option<AdviseHugePages>,
    ) -> Result<JobVerifier, TooLarge> {
        let table = Table::new(base, len, granule, huge_pages).ok_or(TooLarge {
            granules: len.div_ceil(granule),
        })?;
        Ok(JobVerifier {
            mode,
            run_id: journal.as_ref().map_or_else(process_run_id, |j| j.run_id()),
            job_id: twox_hash::XxHash3_64::oneshot(name.as_bytes()) as u32,
            table,
            journal,
            tally: Mutex::new(Tally::default()),
            ack_deadline_ns: AtomicU64::new(u64::MAX),
            clock_zero_unix_us: AtomicU64::new(now_us()),
        })
    }

    /// The mode.
    pub fn mode(&self) -> VerifyMode {
        self.mode
    }

    /// Whether each write is read back as soon as it completes.
    pub fn inline(&self) -> bool {
        self.mode == VerifyMode::Inline
    }

    /// What [`begin_write`](Self::begin_write) will read first for a write at `offset`: the
    /// driver prefetches it when it plans the write, one request ahead.
    pub fn claim_word(&self, offset: u64) -> &impl Sized {
        self.table.state_word(offset)
    }

    /// Claims a write's block and gives it a generation; `None` while another write to the
    /// block is in flight (the caller tries again later).
    pub fn begin_write(&self, offset: u64, len: u64) -> Option<u64> {
        self.table
            .claim(offset, len)
            .then(|| NEXT_GENERATION.fetch_add(1, Ordering::Relaxed))
    }

    /// The run's clock read `clock_ns` at Unix time `unix_us`: stamps take their time from the
    /// clock from now on.
    pub fn set_clock(&self, clock_ns: u64, unix_us: u64) {
        self.clock_zero_unix_us
            .store(unix_us.saturating_sub(clock_ns / 1000), Ordering::Relaxed);
    }

    /// Stamps a filled write buffer, filled at `clock_ns` on the run's clock.
    pub fn stamp(&self, block: &mut [u8], offset: u64, generation: u64, seed: u64, clock_ns: u64) {
        stamp_block(
            block,
            &BlockFacts {
                run_id: self.run_id,
                offset,
                generation,
                seed,
                time_us: self.clock_zero_unix_us.load(Ordering::Relaxed) + clock_ns / 1000,
                job_id: self.job_id,
            },
        );
    }

    /// Writes that complete after `at_ns` are not acknowledged: the host never learns of them.
    pub fn set_ack_deadline(&self, at_ns: u64) {
        self.ack_deadline_ns.store(at_ns, Ordering::Relaxed);
    }

    /// A write completed at `at_ns`: `ok` when it transferred everything. Inline, its block
    /// stays claimed until [`checked_inline`](Self::checked_inline).
    pub fn write_done(&self, offset: u64, len: u64, generation: u64, ok: bool, at_ns: u64) {
        if ok && at_ns > self.ack_deadline_ns.load(Ordering::Relaxed) {
            // Completed after the power cut: never acknowledged, so nothing is owed.
            self.table.release(offset, len);
            return;
        }
        if ok {
            self.table.record(offset, len, generation, !self.inline());
            if let Some(j) = &self.journal {
                j.ack(offset, len, generation);
            }
        } else {
            self.table.forget(offset, len);
            self.table.release(offset, len);
        }
    }

    /// A write's read-back (inline) completed with `data`, or failed (`None`: counted as not
    /// checked); frees the block.
    pub fn checked_inline(&self, offset: u64, len: u64, generation: u64, data: Option<&[u8]>) {
        if let Some(data) = data {
            let exp = self.expected(offset, len, generation);
            let verdict = check(&exp, &data[..len as usize]);
            self.lock().add(verdict, len);
        }
        self.table.release(offset, len);
    }

    /// Frees a block whose inline read-back will not happen (the job stopped).
    pub fn abandon_inline(&self, offset: u64, len: u64) {
        self.table.release(offset, len);
    }

    fn expected(&self, offset: u64, len: u64, generation: u64) -> Expected {
        Expected {
            run_id: self.run_id,
            block_offset: offset,
            start: offset,
            len,
            generation,
            floor: generation,
            after_crash: false,
        }
    }

    /// What should be on the target now, in stretches of at most `max_len` bytes.
    pub fn stretches(&self, max_len: u64) -> Vec<Expected> {
        self.table.stretches(self.run_id, max_len)
    }

    /// What should be on bytes `from..to` of the target, in stretches of at most `max_len`.
    pub fn stretches_between(&self, from: u64, to: u64, max_len: u64) -> Vec<Expected> {
        self.table.stretches_between(self.run_id, from, to, max_len)
    }

    /// The bytes the verifier covers.
    pub fn span(&self) -> (u64, u64) {
        (self.table.base(), self.table.end())
    }

    /// Counts a verdict reached elsewhere (a model's power cut).
    pub fn add_verdict(&self, verdict: Verdict, len: u64) {
        self.lock().add(verdict, len);
    }

    /// Checks a block the job read (verify `reads`) from its stamps alone.
    pub fn check_read(&self, offset: u64, data: &[u8]) {
        let out = crate::scan::scan_read(offset, data);
        let mut t = self.lock();
        t.blocks += out.tally.blocks;
        t.bytes += out.tally.bytes;
        t.allowed += out.tally.allowed;
        for (sum, n) in t.by_kind.iter_mut().zip(out.tally.by_kind) {
            *sum += n;
        }
        let room = KEPT_FAILURES.saturating_sub(t.kept.len());
        t.kept.extend(out.tally.kept.into_iter().take(room));
    }

    /// Checks a stretch read back at the end.
    pub fn check_stretch(&self, exp: &Expected, data: &[u8]) {
        let verdict = check(exp, data);
        self.lock().add(verdict, exp.len);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The tally so far.
    pub fn tally(&self) -> Tally {
        self.lock().clone()
    }

    /// The result's summary, with the journal's flushes and any problem.
    pub fn summary(&self, problem: Option<String>) -> VerifySummary {
        let mut s = self.lock().summary(self.mode.name());
        if let Some(j) = &self.journal {
            let (flushes, error) = j.finish_job();
            s.journal_flushes = flushes;
            s.problem = error.map(|e| format!("journal: {e}"));
        }
        if problem.is_some() {
            s.problem = problem;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::data::DataGenerator;
    use iolab_core::job::DataKind;

    /// Blocks as a verified job writes them: filled by the data generator, then stamped.
    fn written(compress_pct: f64, dedupe_pct: f64, blocks: usize) -> Vec<u8> {
        let v = JobVerifier::new(VerifyMode::End, "j", (0, 1 << 30, 4096), None, None).unwrap();
        let mut g = DataGenerator::with(DataKind::Random, compress_pct, dedupe_pct, 5);
        let mut out = vec![0u8; blocks * 4096];
        for (i, b) in out.chunks_mut(4096).enumerate() {
            let offset = i as u64 * 4096;
            let generation = v.begin_write(offset, 4096).unwrap();
            let seed = g.fill(b);
            v.stamp(b, offset, generation, seed, 0);
            v.write_done(offset, 4096, generation, true, 0);
        }
        out
    }

    #[test]
    fn stamped_blocks_still_compress_as_asked() {
        for pct in [0.0, 50.0, 80.0] {
            let data = written(pct, 0.0, 512);
            let packed = zstd::bulk::compress(&data, 3).unwrap();
            let saved = 100.0 * (1.0 - packed.len() as f64 / data.len() as f64);
            assert!(
                (saved - pct).abs() < 3.0,
                "asked {pct}%, zstd saved {saved:.1}%"
            );
        }
    }

    #[test]
    fn duplicate_blocks_repeat_their_payload_under_their_own_stamps() {
        // The payload (after the stamps) repeats as dedupe_pct asks; the stamps differ, so
        // that a block in the wrong place is still told from the right one.
        let data = written(0.0, 50.0, 4000);
        let payloads: std::collections::HashSet<Vec<u8>> = data
            .chunks(4096)
            .map(|b| {
                use crate::stamp::{HEAD_EXTRA_BYTES, SECTOR, STAMP_BYTES};
                b.chunks(SECTOR)
                    .enumerate()
                    .flat_map(|(i, s)| {
                        let skip = STAMP_BYTES + if i == 0 { HEAD_EXTRA_BYTES } else { 0 };
                        s[skip..].to_vec()
                    })
                    .collect()
            })
            .collect();
        let dup = 100.0 * (1.0 - payloads.len() as f64 / 4000.0);
        assert!((dup - 50.0).abs() < 4.0, "{dup:.1}% duplicate payloads");
    }

    #[test]
    fn a_write_stamped_recorded_and_read_back_is_ok() {
        let v = JobVerifier::new(VerifyMode::End, "j", (0, 1 << 20, 4096), None, None).unwrap();
        let g = v.begin_write(4096, 8192).unwrap();
        assert_eq!(v.begin_write(8192, 4096), None, "in flight");
        let mut block = vec![7u8; 8192];
        v.stamp(&mut block, 4096, g, 11, 0);
        v.write_done(4096, 8192, g, true, 0);
        let s = v.stretches(1 << 20);
        assert_eq!(s.len(), 1);
        v.check_stretch(&s[0], &block);
        let mut bad = block.clone();
        bad[5000] ^= 1;
        v.check_stretch(&s[0], &bad);
        let sum = v.summary(None);
        assert_eq!((sum.blocks_checked, sum.failures, sum.corrupted), (2, 1, 1));
        assert_eq!(sum.first_failures[0].sector_offset, 4096 + 4608);
    }
}
