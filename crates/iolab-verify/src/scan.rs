//! Checking a target from its stamps alone, when nothing says what should be there
//! (`iolab verify TARGET` without a journal).
//!
//! Each block's first sector says where it was written, how long it is and which write it
//! was; the sectors after it must agree. What this finds: corrupted sectors, blocks in the
//! wrong place, torn blocks. What it cannot: a lost write (the older block is whole and
//! consistent), zeros or unstamped data (nothing says a block was written there) — those need
//! the journal.

use crate::check::{check, Expected, Failure, Kind, Verdict};
use crate::stamp::{head_facts, read_sector, Sector, SECTOR};
use crate::verifier::Tally;
use std::io;

/// Bytes read at a time.
const WINDOW: usize = 4 << 20;
/// The longest block a stamp may claim and still be read whole.
const MAX_BLOCK: u64 = 256 << 20;

/// What a scan found.
#[derive(Debug, Default, Clone)]
pub struct ScanOutcome {
    /// Blocks checked and failures.
    pub tally: Tally,
    /// Bytes with no stamp (never written with verify, or zeroed): not checked.
    pub unstamped_bytes: u64,
}

/// Scans `lo..hi` (multiples of 512) read through `read_at(offset, buf)`.
pub fn scan(
    lo: u64,
    hi: u64,
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<()>,
) -> io::Result<ScanOutcome> {
    scan_with(lo, hi, read_at, false)
}

/// Checks `data`, read at `offset` by a job that verifies what it reads, from its stamps
/// alone. Such a job reads where something was written with verify, so a sector without a
/// stamp (zeros, or data iolab did not write) is a failure here, not merely unchecked.
pub fn scan_read(offset: u64, data: &[u8]) -> ScanOutcome {
    let len = data.len() as u64 / SEC * SEC;
    scan_with(
        offset,
        offset + len,
        &mut |o, buf| {
            let at = (o - offset) as usize;
            buf.copy_from_slice(&data[at..at + buf.len()]);
            Ok(())
        },
        true,
    )
    .expect("reads from memory do not fail")
}

fn scan_with(
    lo: u64,
    hi: u64,
    read_at: &mut dyn FnMut(u64, &mut [u8]) -> io::Result<()>,
    unstamped_fail: bool,
) -> io::Result<ScanOutcome> {
    let mut scanner = Scanner {
        hi,
        read_at,
        buf: vec![0u8; WINDOW],
        wstart: lo,
        wend: lo,
        out: ScanOutcome::default(),
    };
    let mut pos = lo;
    while pos < hi {
        scanner.load(pos, SEC)?;
        let sector = scanner.sector_at(pos);
        pos += match read_sector(&sector) {
            Sector::Stamped {
                index: 0, offset, ..
            } if offset == pos => scanner.block(pos, &sector)?,
            Sector::Stamped {
                run_id,
                index,
                offset,
                generation,
            } => scanner.headless_run(pos, run_id, index, offset, generation)?,
            Sector::Damaged => {
                scanner.out.tally.add(
                    Verdict::Failed(Failure {
                        kind: Kind::Corrupted,
                        offset: pos,
                        len: SEC,
                        sector_offset: pos,
                        expected: "an intact stamped sector".into(),
                        found: format!(
                            "sector at {pos}: checksum mismatch (changed after the write)"
                        ),
                    }),
                    SEC,
                );
                SEC
            }
            unstamped @ (Sector::Uniform(_) | Sector::Foreign) if unstamped_fail => {
                scanner.unstamped_run(pos, unstamped)?
            }
            Sector::Uniform(_) | Sector::Foreign => {
                scanner.out.unstamped_bytes += SEC;
                SEC
            }
        };
    }
    Ok(scanner.out)
}

/// A sector's size as an offset.
const SEC: u64 = SECTOR as u64;

/// A scan under way: the window of the target read so far and what it found.
struct Scanner<'a> {
    /// End of the scanned range.
    hi: u64,
    read_at: &'a mut dyn FnMut(u64, &mut [u8]) -> io::Result<()>,
    /// The window's bytes: `wstart..wend` of the target.
    buf: Vec<u8>,
    wstart: u64,
    wend: u64,
    out: ScanOutcome,
}

impl Scanner<'_> {
    /// Makes `pos..pos + need` readable in the window.
    fn load(&mut self, pos: u64, need: u64) -> io::Result<()> {
        if pos >= self.wstart && pos + need <= self.wend {
            return Ok(());
        }
        let len = (need.max(WINDOW as u64)).min(self.hi - pos);
        if self.buf.len() < len as usize {
            self.buf.resize(len as usize, 0);
        }
        (self.read_at)(pos, &mut self.buf[..len as usize])?;
        self.wstart = pos;
        self.wend = pos + len;
        Ok(())
    }

    /// The sector at `p`, which the window holds.
    fn sector_at(&self, p: u64) -> Vec<u8> {
        let i = (p - self.wstart) as usize;
        self.buf[i..i + SECTOR].to_vec()
    }

    /// Checks the block whose first sector `head` is at `pos`, up to where a newer, smaller
    /// write covered the rest of it; returns the bytes checked.
    fn block(&mut self, pos: u64, head: &[u8]) -> io::Result<u64> {
        let (facts, len) = head_facts(head).expect("a first sector");
        let len = (len as u64).clamp(SEC, MAX_BLOCK).min(self.hi - pos) / SEC * SEC;
        self.load(pos, len)?;
        let i0 = (pos - self.wstart) as usize;
        let data = &self.buf[i0..i0 + len as usize];
        // Where a newer, smaller write covered the rest of the block.
        let mut end = len;
        for (i, s) in data.chunks_exact(SECTOR).enumerate().skip(1) {
            if let Sector::Stamped {
                run_id,
                index,
                offset,
                generation,
            } = read_sector(s)
            {
                let here = pos + i as u64 * SEC;
                if run_id == facts.run_id
                    && offset != pos
                    && generation > facts.generation
                    && offset + index as u64 * SEC == here
                {
                    end = i as u64 * SEC;
                    break;
                }
            }
        }
        let exp = Expected {
            run_id: facts.run_id,
            block_offset: pos,
            start: pos,
            len: end,
            generation: facts.generation,
            floor: facts.generation,
            after_crash: false,
        };
        self.out.tally.add(check(&exp, &data[..end as usize]), end);
        Ok(end)
    }

    /// A run of sectors without stamps like the one at `pos` (`first`), counted as one failure;
    /// returns the run's bytes.
    fn unstamped_run(&mut self, pos: u64, first: Sector) -> io::Result<u64> {
        let mut n = 1u64;
        while pos + n * SEC < self.hi {
            self.load(pos + n * SEC, SEC)?;
            if read_sector(&self.sector_at(pos + n * SEC)) != first {
                break;
            }
            n += 1;
        }
        let (kind, found) = match first {
            Sector::Uniform(b) => (Kind::Zeros, format!("every byte {b:#04x}")),
            _ => (Kind::Foreign, "data without iolab's stamps".to_string()),
        };
        self.out.unstamped_bytes += n * SEC;
        self.out.tally.add(
            Verdict::Failed(Failure {
                kind,
                offset: pos,
                len: n * SEC,
                sector_offset: pos,
                expected: "a block written with verify".into(),
                found: format!("{} bytes at {pos}: {found}", n * SEC),
            }),
            n * SEC,
        );
        Ok(n * SEC)
    }

    /// A run of sectors of one block without its first sector here, starting at `pos` with
    /// the sector stamped (`run_id`, `index`, `offset`, `generation`): intact when it is where
    /// its block puts it, else misplaced. Returns the run's bytes.
    fn headless_run(
        &mut self,
        pos: u64,
        run_id: u32,
        index: u32,
        offset: u64,
        generation: u64,
    ) -> io::Result<u64> {
        let mut n = 1u64;
        while pos + n * SEC < self.hi {
            self.load(pos + n * SEC, SEC)?;
            let next = read_sector(&self.sector_at(pos + n * SEC));
            let same = matches!(next, Sector::Stamped { run_id: r, index: k, offset: o, generation: g }
                if r == run_id && o == offset && g == generation && k as u64 == index as u64 + n);
            if !same {
                break;
            }
            n += 1;
        }
        if offset + index as u64 * SEC == pos {
            // The rest of a block whose head a later write covered: intact.
            self.out.tally.add(Verdict::Ok, n * SEC);
        } else {
            self.out.tally.add(
                Verdict::Failed(Failure {
                    kind: Kind::Misplaced,
                    offset: pos,
                    len: n * SEC,
                    sector_offset: pos,
                    expected: format!("a block written at {pos}"),
                    found: format!(
                        "sector {index} of the block written at {offset}, generation \
                         {generation}"
                    ),
                }),
                n * SEC,
            );
        }
        Ok(n * SEC)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stamp::{stamp_block, BlockFacts};

    fn put(target: &mut [u8], offset: u64, len: usize, generation: u64, claims: u64) {
        let mut b: Vec<u8> = (0..len).map(|i| (i * 13 + 1) as u8).collect();
        stamp_block(
            &mut b,
            &BlockFacts {
                run_id: 4,
                offset: claims,
                generation,
                ..Default::default()
            },
        );
        target[offset as usize..offset as usize + len].copy_from_slice(&b);
    }

    fn run(target: &[u8]) -> ScanOutcome {
        scan(0, target.len() as u64, &mut |o, buf| {
            buf.copy_from_slice(&target[o as usize..o as usize + buf.len()]);
            Ok(())
        })
        .unwrap()
    }

    #[test]
    fn a_read_without_stamps_fails() {
        let mut t = vec![0u8; 16 << 10];
        put(&mut t, 0, 8192, 1, 0);
        let out = scan_read(0, &t);
        assert_eq!(out.tally.failures(), 1, "{:?}", out.tally.kept);
        assert_eq!(out.tally.kept[0].kind, Kind::Zeros);
        assert_eq!(
            (out.tally.kept[0].offset, out.tally.kept[0].len),
            (8192, 8192)
        );
        // A read of the written block alone, at its offset: clean; at another: misplaced.
        assert_eq!(scan_read(0, &t[..8192]).tally.failures(), 0);
        let moved = scan_read(4 << 20, &t[..8192]);
        assert!(moved.tally.failures() > 0);
        t[8192..].fill(7);
        t[8192] = 1;
        assert_eq!(scan_read(0, &t).tally.kept[0].kind, Kind::Foreign);
    }

    #[test]
    fn stamps_alone_find_corruption_misplacement_and_tears() {
        let mut t = vec![0u8; 64 << 10];
        for (i, g) in (0..8u64).zip(1..) {
            put(&mut t, i * 8192, 8192, g, i * 8192);
        }
        // A smaller, newer write over the second half of block 0: not a failure.
        put(&mut t, 4096, 4096, 20, 4096);
        let clean = run(&t);
        assert_eq!(clean.tally.failures(), 0, "{:?}", clean.tally.kept);
        assert_eq!(clean.unstamped_bytes, 0);
        t[16384 + 700] ^= 4;
        let copy = t[24576..32768].to_vec();
        t[40960..49152].copy_from_slice(&copy);
        // Block 7 (generation 8) torn by a rewrite of generation 30: only its first half
        // landed.
        let mut full = vec![0u8; 8192];
        for (k, b) in full.iter_mut().enumerate() {
            *b = (k * 13 + 1) as u8;
        }
        stamp_block(
            &mut full,
            &BlockFacts {
                run_id: 4,
                offset: 57344,
                generation: 30,
                ..Default::default()
            },
        );
        t[57344..61440].copy_from_slice(&full[..4096]);
        let found: Vec<(Kind, u64)> = run(&t)
            .tally
            .kept
            .iter()
            .map(|f| (f.kind, f.sector_offset))
            .collect();
        assert_eq!(
            found,
            [
                (Kind::Corrupted, 16384 + 512),
                (Kind::Misplaced, 40960),
                (Kind::Torn, 61440)
            ]
        );
    }
}
