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
    let mut out = ScanOutcome::default();
    let mut buf = vec![0u8; WINDOW];
    let (mut wstart, mut wend) = (lo, lo);
    let mut pos = lo;
    let sec = SECTOR as u64;
    // Makes `pos..pos + need` readable in the window.
    let mut load = |pos: u64, need: u64, buf: &mut Vec<u8>, ws: &mut u64, we: &mut u64| {
        if pos >= *ws && pos + need <= *we {
            return Ok(());
        }
        let len = (need.max(WINDOW as u64)).min(hi - pos);
        if buf.len() < len as usize {
            buf.resize(len as usize, 0);
        }
        read_at(pos, &mut buf[..len as usize])?;
        *ws = pos;
        *we = pos + len;
        Ok::<(), io::Error>(())
    };
    // The sector at `p` of a window starting at `ws`.
    let at = |p: u64, ws: u64, buf: &[u8]| -> Vec<u8> {
        let i = (p - ws) as usize;
        buf[i..i + SECTOR].to_vec()
    };
    while pos < hi {
        load(pos, sec, &mut buf, &mut wstart, &mut wend)?;
        let sector = at(pos, wstart, &buf);
        match read_sector(&sector) {
            Sector::Stamped {
                index: 0, offset, ..
            } if offset == pos => {
                let (facts, len) = head_facts(&sector).expect("a first sector");
                let len = (len as u64).clamp(sec, MAX_BLOCK).min(hi - pos) / sec * sec;
                load(pos, len, &mut buf, &mut wstart, &mut wend)?;
                let i0 = (pos - wstart) as usize;
                let data = &buf[i0..i0 + len as usize];
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
                        let here = pos + i as u64 * sec;
                        if run_id == facts.run_id
                            && offset != pos
                            && generation > facts.generation
                            && offset + index as u64 * sec == here
                        {
                            end = i as u64 * sec;
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
                out.tally.add(check(&exp, &data[..end as usize]), end);
                pos += end;
            }
            Sector::Stamped {
                run_id,
                index,
                offset,
                generation,
            } => {
                // A run of sectors of one block without its first sector here.
                let mut n = 1u64;
                while pos + n * sec < hi {
                    load(pos + n * sec, sec, &mut buf, &mut wstart, &mut wend)?;
                    let next = read_sector(&at(pos + n * sec, wstart, &buf));
                    let same = matches!(next, Sector::Stamped { run_id: r, index: k, offset: o, generation: g }
                        if r == run_id && o == offset && g == generation && k as u64 == index as u64 + n);
                    if !same {
                        break;
                    }
                    n += 1;
                }
                if offset + index as u64 * sec == pos {
                    // The rest of a block whose head a later write covered: intact.
                    out.tally.add(Verdict::Ok, n * sec);
                } else {
                    out.tally.add(
                        Verdict::Failed(Failure {
                            kind: Kind::Misplaced,
                            offset: pos,
                            len: n * sec,
                            sector_offset: pos,
                            expected: format!("a block written at {pos}"),
                            found: format!(
                                "sector {index} of the block written at {offset}, generation \
                                 {generation}"
                            ),
                        }),
                        n * sec,
                    );
                }
                pos += n * sec;
            }
            Sector::Damaged => {
                out.tally.add(
                    Verdict::Failed(Failure {
                        kind: Kind::Corrupted,
                        offset: pos,
                        len: sec,
                        sector_offset: pos,
                        expected: "an intact stamped sector".into(),
                        found: format!(
                            "sector at {pos}: checksum mismatch (changed after the write)"
                        ),
                    }),
                    sec,
                );
                pos += sec;
            }
            Sector::Uniform(_) | Sector::Foreign => {
                out.unstamped_bytes += sec;
                pos += sec;
            }
        }
    }
    Ok(out)
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
