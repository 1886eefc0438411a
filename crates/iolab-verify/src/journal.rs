//! The write journal (vdbench's idea, diskchecker's method on one host): which generation of
//! every block was acknowledged, and which acknowledgements a flush of the target made durable.
//!
//! File: a 16-byte header (`iolabVJ1`, target id, sector size), then 24-byte records, each
//! `kind, 3 zero bytes, u32 len, u64 offset, u64 value`, little-endian:
//!
//! - `J`: a job begins: `len` its granule, `offset` its span's start, `value` the span's length;
//! - `A`: a write was acknowledged: `offset`, `len`, `value` its generation;
//! - `F`: a flush of the target completed: `value` acknowledgements (counted from the start of
//!   the journal) it covers.
//!
//! Batching: acknowledgements are kept in memory and written when the target is flushed, once
//! per flush interval: write the acknowledgements, flush the target (fdatasync), then append
//! `F` and flush the journal. An acknowledgement still in memory at a crash was not covered by
//! a flush either, so it is one the drive may lose anyway: the journal needs two flushes per
//! interval, never one per write. A crash between the target's flush and the journal's leaves
//! acknowledgements without their `F`: verify then treats them as ones that may be lost, which
//! is on the safe side.

use crate::check::Expected;
use crate::table::Table;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const HEADER_MAGIC: &[u8; 8] = b"iolabVJ1";
const HEADER_BYTES: usize = 16;
const RECORD_BYTES: usize = 24;

fn record(kind: u8, len: u32, offset: u64, value: u64) -> [u8; RECORD_BYTES] {
    let mut r = [0u8; RECORD_BYTES];
    r[0] = kind;
    r[4..8].copy_from_slice(&len.to_le_bytes());
    r[8..16].copy_from_slice(&offset.to_le_bytes());
    r[16..24].copy_from_slice(&value.to_le_bytes());
    r
}

/// Appends to a journal while jobs write.
#[derive(Debug)]
pub struct JournalWriter {
    inner: Mutex<Inner>,
    every: Duration,
    run_id: u32,
}

#[derive(Debug)]
struct Inner {
    file: File,
    pending: Vec<u8>,
    acks: u64,
    last_flush: Instant,
    target: Option<File>,
    flushes: u64,
    error: Option<String>,
}

impl JournalWriter {
    /// Starts a journal in `file` (new and empty) for target id `run_id`, flushing the target
    /// and the journal every `every`.
    pub fn new(mut file: File, run_id: u32, every: Duration) -> io::Result<JournalWriter> {
        let mut header = [0u8; HEADER_BYTES];
        header[..8].copy_from_slice(HEADER_MAGIC);
        header[8..12].copy_from_slice(&run_id.to_le_bytes());
        header[12..16].copy_from_slice(&(crate::stamp::SECTOR as u32).to_le_bytes());
        file.write_all(&header)?;
        file.sync_data()?;
        Ok(JournalWriter {
            inner: Mutex::new(Inner {
                file,
                pending: Vec::with_capacity(64 << 10),
                acks: 0,
                last_flush: Instant::now(),
                target: None,
                flushes: 0,
                error: None,
            }),
            every,
            run_id,
        })
    }

    /// The target id every block of the journal's run carries.
    pub fn run_id(&self) -> u32 {
        self.run_id
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A job begins on `target` (a descriptor to flush it by), over `len` bytes from `base` in
    /// granules of `granule`.
    pub fn begin_job(&self, target: File, base: u64, len: u64, granule: u64) {
        let mut g = self.lock();
        g.pending
            .extend_from_slice(&record(b'J', granule as u32, base, len));
        g.target = Some(target);
        g.last_flush = Instant::now();
    }

    /// A write of `generation` at `offset` was acknowledged.
    pub fn ack(&self, offset: u64, len: u64, generation: u64) {
        let mut g = self.lock();
        g.pending
            .extend_from_slice(&record(b'A', len as u32, offset, generation));
        g.acks += 1;
        if g.last_flush.elapsed() >= self.every {
            g.flush();
        }
    }

    /// Flushes now (a job's end), and returns the flushes so far and the first error.
    pub fn finish_job(&self) -> (u64, Option<String>) {
        let mut g = self.lock();
        g.flush();
        g.target = None;
        (g.flushes, g.error.clone())
    }
}

impl Inner {
    fn flush(&mut self) {
        self.last_flush = Instant::now();
        if self.error.is_some() {
            return;
        }
        let covered = self.acks;
        let result = (|| -> Result<(), String> {
            self.file
                .write_all(&self.pending)
                .map_err(|e| format!("cannot write the journal: {e}"))?;
            self.pending.clear();
            if let Some(t) = &self.target {
                t.sync_data()
                    .map_err(|e| format!("cannot flush the target: {e}"))?;
            }
            self.file
                .write_all(&record(b'F', 0, 0, covered))
                .and_then(|()| self.file.sync_data())
                .map_err(|e| format!("cannot flush the journal: {e}"))?;
            Ok(())
        })();
        match result {
            Ok(()) => self.flushes += 1,
            Err(e) => self.error = Some(e),
        }
    }
}

/// What a journal says should be on the target.
#[derive(Debug)]
pub struct JournalState {
    /// Target id of the run.
    pub run_id: u32,
    /// Latest acknowledged write per granule.
    latest: Table,
    /// Per granule, the newest generation a flush covered (0: none).
    floor: Vec<u64>,
    /// Acknowledged writes.
    pub acks: u64,
    /// Flushes recorded.
    pub flushes: u64,
    /// Acknowledged writes a flush covered.
    pub flushed_acks: u64,
    /// Bytes at the end that were not a whole record (a writer killed mid-record).
    pub torn_tail_bytes: u64,
}

/// Reads a journal.
pub fn read_journal(path: &Path) -> Result<JournalState, String> {
    let mut bytes = Vec::new();
    File::open(path)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| format!("cannot read the journal {}: {e}", path.display()))?;
    if bytes.len() < HEADER_BYTES || &bytes[..8] != HEADER_MAGIC {
        return Err(format!(
            "{} is not an iolab verify journal (no `iolabVJ1` header); give the file \
             --verify-journal wrote",
            path.display()
        ));
    }
    let run_id = u32::from_le_bytes(bytes[8..12].try_into().expect("4 bytes"));
    let body = &bytes[HEADER_BYTES..];
    let torn_tail_bytes = (body.len() % RECORD_BYTES) as u64;
    let records: Vec<(u8, u64, u64, u64)> = body
        .chunks_exact(RECORD_BYTES)
        .map(|r| {
            (
                r[0],
                u32::from_le_bytes(r[4..8].try_into().expect("4 bytes")) as u64,
                u64::from_le_bytes(r[8..16].try_into().expect("8 bytes")),
                u64::from_le_bytes(r[16..24].try_into().expect("8 bytes")),
            )
        })
        .collect();
    // The spans of the jobs, and one granule that divides all their blocks.
    let (mut lo, mut hi, mut granule) = (u64::MAX, 0u64, 0u64);
    for (i, &(kind, len, offset, value)) in records.iter().enumerate() {
        match kind {
            b'J' => {
                lo = lo.min(offset);
                hi = hi.max(offset.saturating_add(value));
                granule = gcd(granule, len);
            }
            b'A' | b'F' => {}
            _ => {
                return Err(format!(
                    "{}: record {} at byte {} has unknown kind {kind:#04x}; the journal is \
                     damaged",
                    path.display(),
                    i + 1,
                    HEADER_BYTES + i * RECORD_BYTES
                ))
            }
        }
    }
    if lo >= hi {
        lo = 0;
        hi = 0;
    }
    let granule = granule.max(crate::stamp::SECTOR as u64);
    let latest = Table::new(lo, hi - lo, granule, None).ok_or_else(|| {
        format!(
            "{}: its span of {} bytes in granules of {granule} is too large to check at once",
            path.display(),
            hi - lo
        )
    })?;
    let mut floor = vec![0u64; (hi - lo).div_ceil(granule) as usize];
    let mut since_flush: Vec<(u64, u64, u64, u64)> = Vec::new();
    let (mut acks, mut flushes, mut flushed_acks) = (0u64, 0u64, 0u64);
    for &(kind, len, offset, value) in &records {
        match kind {
            b'A' => {
                if offset < lo || offset + len > hi || len == 0 {
                    return Err(format!(
                        "{}: a write at {offset} of {len} bytes lies outside its jobs' spans; \
                         the journal is damaged",
                        path.display()
                    ));
                }
                latest.record(offset, len, value, true);
                since_flush.push((acks, offset, len, value));
                acks += 1;
            }
            b'F' => {
                flushes += 1;
                since_flush.retain(|&(seq, offset, len, generation)| {
                    if seq >= value {
                        return true;
                    }
                    let first = ((offset - lo) / granule) as usize;
                    let end = ((offset + len - lo).div_ceil(granule)) as usize;
                    for f in &mut floor[first..end] {
                        *f = (*f).max(generation);
                    }
                    flushed_acks += 1;
                    false
                });
            }
            _ => {}
        }
    }
    Ok(JournalState {
        run_id,
        latest,
        floor,
        acks,
        flushes,
        flushed_acks,
        torn_tail_bytes,
    })
}

impl JournalState {
    /// What should be on the target, stretch by stretch: the latest acknowledged write, and
    /// the oldest generation that may be found (the newest a flush covered; where none did,
    /// anything may be found, and its floor is 0).
    pub fn stretches(&self, max_len: u64) -> Vec<Expected> {
        let granule = self.latest.granule();
        let mut out = self.latest.stretches(self.run_id, granule);
        for e in &mut out {
            let i = ((e.start - self.latest_base()) / granule) as usize;
            e.floor = self.floor[i].min(e.generation);
            e.after_crash = true;
        }
        // Joined again where the floor agrees too.
        let mut joined: Vec<Expected> = Vec::with_capacity(out.len());
        for e in out {
            if let Some(last) = joined.last_mut() {
                if last.generation == e.generation
                    && last.block_offset == e.block_offset
                    && last.floor == e.floor
                    && last.start + last.len == e.start
                    && last.len + e.len <= max_len
                {
                    last.len += e.len;
                    continue;
                }
            }
            joined.push(e);
        }
        joined
    }

    fn latest_base(&self) -> u64 {
        self.latest.base()
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_acknowledgements_a_flush_covered_must_survive() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        let target = File::create(dir.path().join("t")).unwrap();
        let w =
            JournalWriter::new(File::create(&path).unwrap(), 5, Duration::from_secs(3600)).unwrap();
        w.begin_job(target, 0, 1 << 20, 4096);
        w.ack(0, 8192, 1);
        w.ack(8192, 4096, 2);
        let (flushes, error) = w.finish_job();
        assert_eq!((flushes, error), (1, None));
        w.begin_job(File::open(dir.path().join("t")).unwrap(), 0, 1 << 20, 4096);
        w.ack(0, 4096, 3);
        // Never flushed: the process "dies" here, with the acknowledgement in memory.
        std::mem::forget(w);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[b'A', 0, 0]); // a record cut short
        std::fs::write(&path, &bytes).unwrap();
        let st = read_journal(&path).unwrap();
        assert_eq!(
            (
                st.run_id,
                st.acks,
                st.flushes,
                st.flushed_acks,
                st.torn_tail_bytes
            ),
            (5, 2, 1, 2, 3)
        );
        let s: Vec<(u64, u64, u64, u64)> = st
            .stretches(1 << 20)
            .iter()
            .map(|e| (e.start, e.len, e.generation, e.floor))
            .collect();
        assert_eq!(s, [(0, 8192, 1, 1), (8192, 4096, 2, 2)]);
    }

    #[test]
    fn a_file_that_is_not_a_journal_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j");
        std::fs::write(&path, b"hello, not a journal at all").unwrap();
        let e = read_journal(&path).unwrap_err();
        assert!(e.contains("not an iolab verify journal"), "{e}");
    }
}
