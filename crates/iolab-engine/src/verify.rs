//! Verify on real targets: a job's verifier, the pass that reads every written block back at
//! the end of a job, and the checks `iolab verify` makes of a target later (from a journal, or
//! from the blocks' stamps alone).

use crate::buf::SlotBuffers;
use crate::open::PreparedTarget;
use iolab_core::job::{Job, VerifyMode};
use iolab_core::result::VerifySummary;
use iolab_verify::check::{check, Expected, Verdict};
use iolab_verify::journal::{read_journal, JournalWriter};
use iolab_verify::scan::scan;
use iolab_verify::table::MAX_GRANULES;
use iolab_verify::verifier::{JobVerifier, Tally};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The most bytes read back at once.
const MAX_READ: u64 = 1 << 20;
/// Bytes of the span whose expected stretches are listed at a time.
const PASS_WINDOW: u64 = 256 << 20;
/// O_DIRECT reads are aligned to this (any logical block size up to 4 KiB).
const READ_ALIGN: u64 = 4096;

/// The verifier for `job` on `target`, if the job verifies; writes are journaled in `journal`.
pub fn job_verifier(
    target: &PreparedTarget,
    job: &Job,
    journal: Option<&Arc<JournalWriter>>,
) -> io::Result<Option<JobVerifier>> {
    if job.verify == VerifyMode::Off {
        return Ok(None);
    }
    let granule = job.granule();
    let span = job.span();
    let v = JobVerifier::new(
        job.verify,
        &job.name,
        (job.offset_bytes, span, granule),
        journal.cloned(),
        Some(crate::sys::advise_huge_pages),
    )
    .map_err(|e| {
        io::Error::other(format!(
            "verify keeps what each {granule}-byte block of the span should hold, and this span \
             has {} of them (more than {MAX_GRANULES}); give the job a smaller size",
            e.granules
        ))
    })?;
    if let Some(j) = journal {
        let sync = File::open(&target.path).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot open {} to flush it: {e}", target.path.display()),
            )
        })?;
        j.begin_job(sync, job.offset_bytes, span, granule);
    }
    Ok(Some(v))
}

/// Ends a job's verify: the read-back pass (`end`), then the summary.
pub fn finish(
    target: &PreparedTarget,
    job: &Job,
    v: &JobVerifier,
    stop: Option<&AtomicBool>,
) -> VerifySummary {
    let problem = if v.mode() == VerifyMode::End {
        end_pass(&target.path, job.direct, v, stop)
    } else {
        None
    };
    v.summary(problem)
}

/// Reads back every block `v` knows was written and checks it; returns what kept the pass
/// from being complete.
pub fn end_pass(
    path: &Path,
    direct: bool,
    v: &JobVerifier,
    stop: Option<&AtomicBool>,
) -> Option<String> {
    let mut reader = match TargetReader::open(path, direct) {
        Ok(r) => r,
        Err(e) => return Some(format!("cannot open {} to read back: {e}", path.display())),
    };
    let (lo, hi) = v.span();
    let mut from = lo;
    while from < hi {
        let to = from.saturating_add(PASS_WINDOW).min(hi);
        let stretches = v.stretches_between(from, to, MAX_READ);
        let outcome = check_stretches(&mut reader, &stretches, stop, &mut |e, data| {
            v.check_stretch(e, data)
        });
        if let Err(problem) = outcome {
            return Some(problem);
        }
        from = to;
    }
    None
}

/// Reads `stretches` (in offset order) in runs of up to [`MAX_READ`] bytes and hands each
/// with its data to `each`.
fn check_stretches(
    reader: &mut TargetReader,
    stretches: &[Expected],
    stop: Option<&AtomicBool>,
    each: &mut dyn FnMut(&Expected, &[u8]),
) -> Result<(), String> {
    let mut i = 0;
    while i < stretches.len() {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            return Err("interrupted: not every block was read back".into());
        }
        let start = stretches[i].start;
        let mut end = start + stretches[i].len;
        let mut j = i + 1;
        while j < stretches.len()
            && stretches[j].start == end
            && end + stretches[j].len - start <= MAX_READ
        {
            end += stretches[j].len;
            j += 1;
        }
        let data = reader
            .read(start, end - start)
            .map_err(|e| format!("cannot read back {} bytes at {start}: {e}", end - start))?;
        for e in &stretches[i..j] {
            let at = (e.start - start) as usize;
            each(e, &data[at..at + e.len as usize]);
        }
        i = j;
    }
    Ok(())
}

/// What `iolab verify` found.
#[derive(Debug, Clone)]
pub struct TargetCheck {
    /// The tally.
    pub tally: Tally,
    /// Acknowledged writes in the journal, and how many a flush covered.
    pub acks: Option<(u64, u64)>,
    /// Flushes recorded in the journal.
    pub flushes: u64,
    /// Bytes without stamps (scan only).
    pub unstamped_bytes: u64,
    /// Bytes at the journal's end that were not a whole record.
    pub torn_tail_bytes: u64,
}

/// Checks `target` against `journal`: every acknowledged write that a flush covered must be
/// there (or a newer one); a later one may be lost.
pub fn verify_with_journal(
    target: &Path,
    journal: &Path,
    stop: Option<&AtomicBool>,
) -> Result<TargetCheck, String> {
    let state = read_journal(journal)?;
    let mut reader = TargetReader::open(target, true)
        .map_err(|e| format!("cannot open {} to read: {e}", target.display()))?;
    let mut tally = Tally::default();
    let stretches = state.stretches(MAX_READ);
    check_stretches(&mut reader, &stretches, stop, &mut |e, data| {
        let verdict = check(e, data);
        match verdict {
            // No flush covered any write here: whatever is found, nothing had to survive.
            Verdict::Failed(_) if e.floor == 0 => tally.add_allowed(e.len),
            v => tally.add(v, e.len),
        }
    })?;
    Ok(TargetCheck {
        tally,
        acks: Some((state.acks, state.flushed_acks)),
        flushes: state.flushes,
        unstamped_bytes: 0,
        torn_tail_bytes: state.torn_tail_bytes,
    })
}

/// Checks `lo..hi` of `target` from the blocks' stamps alone.
pub fn verify_by_stamps(target: &Path, lo: u64, hi: u64) -> Result<TargetCheck, String> {
    let mut reader = TargetReader::open(target, true)
        .map_err(|e| format!("cannot open {} to read: {e}", target.display()))?;
    let out = scan(lo, hi, &mut |offset, buf| {
        let data = reader.read(offset, buf.len() as u64)?;
        buf.copy_from_slice(data);
        Ok(())
    })
    .map_err(|e| format!("cannot read {}: {e}", target.display()))?;
    Ok(TargetCheck {
        tally: out.tally,
        acks: None,
        flushes: 0,
        unstamped_bytes: out.unstamped_bytes,
        torn_tail_bytes: 0,
    })
}

/// Reads a target for checking: with O_DIRECT where it can (what the device holds, not what
/// the page cache remembers), through an aligned buffer.
pub struct TargetReader {
    file: File,
    direct: bool,
    buf: SlotBuffers,
}

impl TargetReader {
    /// Opens `path` read-only, with O_DIRECT if `direct` and the filesystem takes it.
    pub fn open(path: &Path, direct: bool) -> io::Result<TargetReader> {
        let direct_file = direct
            .then(|| {
                OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_DIRECT)
                    .open(path)
            })
            .and_then(Result::ok);
        let (file, direct) = match direct_file {
            Some(f) => (f, true),
            None => (File::open(path)?, false),
        };
        Ok(TargetReader {
            file,
            direct,
            buf: SlotBuffers::try_new(1, MAX_READ as usize + 2 * READ_ALIGN as usize)?,
        })
    }

    /// Reads `len` bytes at `offset`.
    pub fn read(&mut self, offset: u64, len: u64) -> io::Result<&[u8]> {
        let (start, end) = if self.direct {
            (
                offset / READ_ALIGN * READ_ALIGN,
                (offset + len).div_ceil(READ_ALIGN) * READ_ALIGN,
            )
        } else {
            (offset, offset + len)
        };
        let want = (end - start) as usize;
        if self.buf.slot_bytes() < want {
            self.buf = SlotBuffers::try_new(1, want)?;
        }
        let slot = self.buf.slot_mut(0);
        let mut got = 0usize;
        while got < want {
            match self.file.read_at(&mut slot[got..want], start + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let need = (offset + len - start) as usize;
        if got < need {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the target ends at {}", start + got as u64),
            ));
        }
        let at = (offset - start) as usize;
        Ok(&self.buf.slot(0)[at..at + len as usize])
    }
}

/// The size of a file or block device, in bytes.
pub fn target_size(path: &Path) -> io::Result<u64> {
    use std::io::Seek;
    File::open(path)?.seek(io::SeekFrom::End(0))
}
