//! The file and device I/O of trimcheck: aligned buffers, random data, direct writes and
//! aligned direct reads. Safe code only (the flags come from libc, the calls from std).

use iolab_core::rng::Rng;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Direct I/O needs buffers, offsets and lengths aligned to the logical block size; 4 KiB
/// covers every common device.
pub(crate) const ALIGN: usize = 4096;

/// A heap buffer whose usable slice starts on an `ALIGN` boundary.
pub(crate) struct AlignedBuf {
    raw: Vec<u8>,
    off: usize,
    len: usize,
}

impl AlignedBuf {
    pub(crate) fn new(len: usize) -> Self {
        let raw = vec![0u8; len + ALIGN];
        let off = (ALIGN - raw.as_ptr() as usize % ALIGN) % ALIGN;
        AlignedBuf { raw, off, len }
    }
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.raw[self.off..self.off + self.len]
    }
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.raw[self.off..self.off + self.len]
    }
}

/// A generator for the padding, seeded from the kernel so no two runs (and no deduplicating
/// drive) see the same bytes.
pub(crate) fn padding_rng() -> io::Result<Rng> {
    let mut seed = [0u8; 8];
    File::open("/dev/urandom")?.read_exact(&mut seed)?;
    Ok(Rng::new(u64::from_le_bytes(seed)))
}

/// Fills `buf` from the kernel's CSPRNG (the unique test block).
pub(crate) fn urandom(buf: &mut [u8]) -> io::Result<()> {
    File::open("/dev/urandom")?.read_exact(buf)
}

/// Creates `path` exclusively for direct, write-through writes.
pub(crate) fn create_direct(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_DIRECT | libc::O_DSYNC)
        .open(path)
}

/// Writes `len` bytes of padding from `rng` in 1 MiB direct writes.
pub(crate) fn write_padding(f: &mut File, rng: &mut Rng, len: u64) -> io::Result<()> {
    let mut buf = AlignedBuf::new(1 << 20);
    let mut left = len;
    while left > 0 {
        let n = left.min(1 << 20) as usize;
        rng.fill(&mut buf.as_mut_slice()[..n]);
        f.write_all(&buf.as_slice()[..n])?;
        left -= n as u64;
    }
    Ok(())
}

/// Opens a block device read-only for direct reads.
pub(crate) fn open_device(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
}

/// Reads `len` bytes at `offset` with direct I/O, widening the read to `ALIGN` boundaries.
pub(crate) fn read_direct(dev: &File, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let a = ALIGN as u64;
    let start = offset / a * a;
    let end = (offset + len as u64).div_ceil(a) * a;
    let mut buf = AlignedBuf::new((end - start) as usize);
    dev.read_exact_at(buf.as_mut_slice(), start)?;
    let skip = (offset - start) as usize;
    Ok(buf.as_slice()[skip..skip + len].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_random() {
        let b = AlignedBuf::new(10_000);
        assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.as_slice().len(), 10_000);
        let mut r = Rng::new(1);
        let mut x = [0u8; 13];
        r.fill(&mut x);
        assert!(x.iter().any(|&v| v != 0));
    }
}
