//! The layout of a verified block: a 32-byte stamp at the head of every 512-byte sector, and
//! 24 more bytes of block facts in the first sector.
//!
//! Every sector carries its own stamp and its own checksum because the failures worth finding
//! are sector-sized: a write torn at a sector boundary leaves sectors of two generations in one
//! block, each intact on its own, and only per-sector generations tell that from a block that
//! is simply old or corrupted. The stamps sit where the data generator puts its random bytes
//! (the head of each 512-byte segment), so a block compresses as `compress_pct` asks as long as
//! that leaves at least the stamp's bytes random (up to 89 % at 4 KiB blocks).
//!
//! Sector stamp, little-endian:
//!
//! | bytes  | field                                                                 |
//! |--------|-----------------------------------------------------------------------|
//! | 0..4   | magic `iolV`                                                          |
//! | 4..8   | checksum of bytes 8..512 of the sector (stamp fields and payload)     |
//! | 8..12  | target id: the run that wrote it (a later run's blocks are not ours)  |
//! | 12..16 | index of this sector in its block                                     |
//! | 16..24 | the block's offset on the target                                      |
//! | 24..32 | generation: the write's number, unique and rising within a run        |
//!
//! First sector only, after the stamp:
//!
//! | bytes  | field                                                                 |
//! |--------|-----------------------------------------------------------------------|
//! | 32..40 | content seed of the payload                                           |
//! | 40..48 | time the block was filled, µs since the Unix epoch                    |
//! | 48..52 | block length in bytes                                                 |
//! | 52..56 | job id (XXH3 of the job's name, low 32 bits)                          |
//!
//! The checksum covers bytes 8..512 as listed; bytes 8..32 (and 32..56 of the first sector) are
//! then stored XORed with a keystream drawn from the checksum. Plain, the fields repeat from sector
//! to sector (the same offset and generation eight times in a 4 KiB block) and a block asked to
//! be incompressible compressed by 4 %; scrambled, they are as random as the payload they
//! replace. A sector whose index field reads 0 is a first sector.
//!
//! The checksum is XXH3-64 (its low 32 bits), not CRC-32C: over 504 bytes the CRC instruction
//! runs one dependent chain (about 4.5 GB/s on this project's machine), XXH3 twice that with
//! plain SSE2 and 1.4 times more with AVX2 (`twox-hash` picks it at run time), and a 32-bit
//! check is as strong against random damage either way.

/// Bytes per sector: the unit of stamps, checksums and tearing.
pub const SECTOR: usize = 512;
/// Stamp bytes at the head of every sector.
pub const STAMP_BYTES: usize = 32;
/// Further bytes of block facts in the first sector.
pub const HEAD_EXTRA_BYTES: usize = 24;
/// The magic at byte 0 of every stamped sector.
pub const MAGIC: [u8; 4] = *b"iolV";

/// What a block's stamps say about the write that filled it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BlockFacts {
    /// The run (target id).
    pub run_id: u32,
    /// Offset of the block on the target.
    pub offset: u64,
    /// Generation of the write.
    pub generation: u64,
    /// Seed of the payload's content.
    pub seed: u64,
    /// When it was filled, µs since the Unix epoch.
    pub time_us: u64,
    /// Job id.
    pub job_id: u32,
}

/// Stamps every sector of `block` (its length a multiple of [`SECTOR`]) after the payload was
/// filled. The payload bytes under the stamps are overwritten.
pub fn stamp_block(block: &mut [u8], facts: &BlockFacts) {
    debug_assert_eq!(block.len() % SECTOR, 0);
    let len = block.len() as u64;
    for (index, sector) in block.chunks_exact_mut(SECTOR).enumerate() {
        let first = facts.run_id as u64 | (index as u64) << 32;
        if index == 0 {
            let tail = len | (facts.job_id as u64) << 32;
            let words = [
                first,
                facts.offset,
                facts.generation,
                facts.seed,
                facts.time_us,
                tail,
            ];
            stamp_sector(sector, words);
        } else {
            stamp_sector(sector, [first, facts.offset, facts.generation]);
        }
    }
}

/// Stamps one sector with `N` words (3, or 6 in a block's first sector). `N` is a constant so
/// that the words' stores compile to moves: a computed length became a call to memcpy, 2 % of a
/// verified write's CPU on zram.
fn stamp_sector<const N: usize>(sector: &mut [u8], mut words: [u64; N]) {
    sector[0..4].copy_from_slice(&MAGIC);
    put_words(sector, &words);
    let sum = sector_checksum(&sector[8..]);
    sector[4..8].copy_from_slice(&sum.to_le_bytes());
    scramble(&mut words, sum);
    put_words(sector, &words);
}

fn put_words<const N: usize>(sector: &mut [u8], words: &[u64; N]) {
    for (slot, w) in sector[8..8 + 8 * N].chunks_exact_mut(8).zip(words) {
        let slot: &mut [u8; 8] = slot.try_into().expect("8 bytes");
        *slot = w.to_le_bytes();
    }
}

/// The checksum of a sector's bytes 8..512.
pub fn sector_checksum(bytes: &[u8]) -> u32 {
    twox_hash::XxHash3_64::oneshot(bytes) as u32
}

/// XORs `words` with the keystream of `sum` (its own inverse).
fn scramble(words: &mut [u64], sum: u32) {
    let mut state = (sum as u64) << 32 | sum as u64;
    for w in words {
        // splitmix64: every word of the stream differs, whatever the CRC.
        *w ^= iolab_core::rng::splitmix64(&mut state);
    }
}

/// The stamp's words of a sector, if its CRC matches, and how many there are: 3, or 6 in a
/// block's first sector.
fn unscramble(sector: &[u8]) -> Option<([u64; 6], usize)> {
    let stored = u32::from_le_bytes(sector[4..8].try_into().expect("4 bytes"));
    let mut words = [0u64; 6];
    for (i, w) in words.iter_mut().enumerate() {
        *w = u64::from_le_bytes(sector[8 + 8 * i..16 + 8 * i].try_into().expect("8 bytes"));
    }
    scramble(&mut words, stored);
    let n = if words[0] >> 32 == 0 { 6 } else { 3 };
    // The sector as it was checksummed: plain stamp words, then the payload.
    let mut plain = [0u8; SECTOR - 8];
    for (i, w) in words[..n].iter().enumerate() {
        plain[8 * i..8 * i + 8].copy_from_slice(&w.to_le_bytes());
    }
    plain[8 * n..].copy_from_slice(&sector[8 + 8 * n..]);
    (sector_checksum(&plain) == stored).then_some((words, n))
}

/// What one sector read back holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sector {
    /// An intact stamp and payload.
    Stamped {
        /// Target id.
        run_id: u32,
        /// Index in its block.
        index: u32,
        /// Its block's offset.
        offset: u64,
        /// Its write's generation.
        generation: u64,
    },
    /// A stamp whose checksum does not match: bits changed after the write.
    Damaged,
    /// Every byte the same (zeros, or 0xff): unmapped, trimmed or zeroed.
    Uniform(u8),
    /// Something iolab did not stamp.
    Foreign,
}

/// Bits in which a magic may differ and still be taken for a damaged stamp rather than
/// someone else's data.
const MAGIC_SLACK_BITS: u32 = 3;

/// Reads one sector.
pub fn read_sector(sector: &[u8]) -> Sector {
    debug_assert_eq!(sector.len(), SECTOR);
    let magic = u32::from_le_bytes(sector[0..4].try_into().expect("4 bytes"));
    let magic_off = (magic ^ u32::from_le_bytes(MAGIC)).count_ones();
    if magic_off == 0 {
        if let Some((w, _)) = unscramble(sector) {
            return Sector::Stamped {
                run_id: w[0] as u32,
                index: (w[0] >> 32) as u32,
                offset: w[1],
                generation: w[2],
            };
        }
    }
    if magic_off <= MAGIC_SLACK_BITS {
        return Sector::Damaged;
    }
    let first = sector[0];
    if sector.iter().all(|&b| b == first) {
        return Sector::Uniform(first);
    }
    Sector::Foreign
}

/// The block facts of a first sector, and the block's length.
pub fn head_facts(sector: &[u8]) -> Option<(BlockFacts, u32)> {
    if sector[0..4] != MAGIC {
        return None;
    }
    let (w, n) = unscramble(sector)?;
    (n == 6).then(|| {
        let facts = BlockFacts {
            run_id: w[0] as u32,
            offset: w[1],
            generation: w[2],
            seed: w[3],
            time_us: w[4],
            job_id: (w[5] >> 32) as u32,
        };
        (facts, w[5] as u32)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> BlockFacts {
        BlockFacts {
            run_id: 7,
            offset: 8192,
            generation: 42,
            seed: 99,
            time_us: 1_700_000_000_000_000,
            job_id: 3,
        }
    }

    #[test]
    fn a_stamped_block_reads_back_sector_by_sector() {
        let mut block: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        stamp_block(&mut block, &facts());
        for (i, s) in block.chunks(SECTOR).enumerate() {
            assert_eq!(
                read_sector(s),
                Sector::Stamped {
                    run_id: 7,
                    index: i as u32,
                    offset: 8192,
                    generation: 42
                }
            );
        }
        assert_eq!(head_facts(&block[..SECTOR]), Some((facts(), 4096)));
        assert_eq!(head_facts(&block[SECTOR..2 * SECTOR]), None);
    }

    #[test]
    fn any_flipped_bit_damages_its_sector() {
        let mut block = vec![0x5au8; 1024];
        stamp_block(&mut block, &facts());
        for bit in [0usize, 5, 33, 64, 300 * 8 + 1, 511 * 8 + 7] {
            let mut b = block.clone();
            b[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(read_sector(&b[..SECTOR]), Sector::Damaged, "bit {bit}");
            assert!(matches!(read_sector(&b[SECTOR..]), Sector::Stamped { .. }));
        }
    }

    #[test]
    fn blank_and_foreign_sectors_are_told_apart() {
        assert_eq!(read_sector(&[0u8; SECTOR]), Sector::Uniform(0));
        assert_eq!(read_sector(&[0xffu8; SECTOR]), Sector::Uniform(0xff));
        let other: Vec<u8> = (0..SECTOR).map(|i| (i % 251) as u8).collect();
        assert_eq!(read_sector(&other), Sector::Foreign);
    }
}
