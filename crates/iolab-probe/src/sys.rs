//! The only `unsafe` in this crate: the FIEMAP, FITRIM and syncfs system calls. Each wrapper
//! owns its buffers and checks the kernel's return value, so callers stay safe.
//!
//! The ioctl numbers are the asm-generic `_IOWR` encoding (x86, x86-64, arm, aarch64, riscv,
//! s390, loongarch); powerpc, mips and sparc encode directions differently and are refused.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

#[cfg(not(any(
    target_arch = "x86",
    target_arch = "x86_64",
    target_arch = "arm",
    target_arch = "aarch64",
    target_arch = "riscv64",
    target_arch = "s390x",
    target_arch = "loongarch64"
)))]
compile_error!("iolab-probe's ioctl numbers assume the asm-generic _IOC encoding");

/// `_IOWR(ty, nr, size)` in the asm-generic layout: dir(2) | size(14) | type(8) | nr(8).
const fn iowr(ty: u8, nr: u8, size: usize) -> libc::c_ulong {
    ((3 as libc::c_ulong) << 30)
        | ((size as libc::c_ulong) << 16)
        | ((ty as libc::c_ulong) << 8)
        | nr as libc::c_ulong
}

/// `struct fstrim_range` from `<linux/fs.h>`.
#[repr(C)]
struct FstrimRange {
    start: u64,
    len: u64,
    minlen: u64,
}

/// `FITRIM = _IOWR('X', 121, struct fstrim_range)`.
const FITRIM: libc::c_ulong = iowr(b'X', 121, std::mem::size_of::<FstrimRange>());

/// `struct fiemap` header from `<linux/fiemap.h>` (followed by `fm_extent_count` extents).
#[repr(C)]
#[derive(Default)]
struct FiemapHeader {
    fm_start: u64,
    fm_length: u64,
    fm_flags: u32,
    fm_mapped_extents: u32,
    fm_extent_count: u32,
    fm_reserved: u32,
}

/// `struct fiemap_extent`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtentRaw {
    fe_logical: u64,
    fe_physical: u64,
    fe_length: u64,
    fe_reserved64: [u64; 2],
    fe_flags: u32,
    fe_reserved: [u32; 3],
}

/// `FS_IOC_FIEMAP = _IOWR('f', 11, struct fiemap)`.
const FS_IOC_FIEMAP: libc::c_ulong = iowr(b'f', 11, std::mem::size_of::<FiemapHeader>());

/// `FIEMAP_FLAG_SYNC`: flush the file's dirty data before mapping.
const FIEMAP_FLAG_SYNC: u32 = 0x1;

/// One extent of a file as FIEMAP reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Extent {
    /// Byte offset in the file.
    pub logical: u64,
    /// Byte offset on the filesystem's block device.
    pub physical: u64,
    /// Length in bytes.
    pub length: u64,
    /// `FIEMAP_EXTENT_*` flags.
    pub flags: u32,
}

/// Runs FITRIM over the whole filesystem `dir` is on; returns the bytes the filesystem says it
/// trimmed (the kernel writes it back into `len`).
pub(crate) fn fitrim(dir: &File) -> io::Result<u64> {
    let mut range = FstrimRange {
        start: 0,
        len: u64::MAX,
        minlen: 0,
    };
    // SAFETY: `dir` is an open descriptor for the whole call; `range` is a live, correctly laid
    // out `struct fstrim_range` that the kernel reads and writes only within its size.
    let rc = unsafe { libc::ioctl(dir.as_raw_fd(), FITRIM as _, &mut range as *mut FstrimRange) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(range.len)
}

/// The extents covering `[start, start + len)` of `file`, after syncing its data
/// (`FIEMAP_FLAG_SYNC`). Asks for up to `max_extents` at once.
pub(crate) fn fiemap(
    file: &File,
    start: u64,
    len: u64,
    max_extents: u32,
) -> io::Result<Vec<Extent>> {
    #[repr(C)]
    struct Request {
        header: FiemapHeader,
        extents: [FiemapExtentRaw; 64],
    }
    let count = max_extents.min(64);
    let mut req = Request {
        header: FiemapHeader {
            fm_start: start,
            fm_length: len,
            fm_flags: FIEMAP_FLAG_SYNC,
            fm_extent_count: count,
            ..Default::default()
        },
        extents: [FiemapExtentRaw::default(); 64],
    };
    // SAFETY: `req` is a `struct fiemap` header immediately followed by room for 64 extents, and
    // `fm_extent_count` (≤ 64) tells the kernel how many it may write; the descriptor is open.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            FS_IOC_FIEMAP as _,
            &mut req as *mut Request,
        )
    };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = (req.header.fm_mapped_extents.min(count)) as usize;
    Ok(req.extents[..n]
        .iter()
        .map(|e| Extent {
            logical: e.fe_logical,
            physical: e.fe_physical,
            length: e.fe_length,
            flags: e.fe_flags,
        })
        .collect())
}

/// Commits the filesystem `file` is on (`syncfs(2)`), so freed blocks are really free before
/// FITRIM looks for them (ext4 does not trim blocks freed in an uncommitted transaction).
pub(crate) fn syncfs(file: &File) -> io::Result<()> {
    // SAFETY: plain system call on a descriptor that stays open for the call.
    let rc = unsafe { libc::syncfs(file.as_raw_fd()) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Bytes available to unprivileged users on the filesystem `file` is on (`fstatvfs(2)`).
pub(crate) fn free_bytes(file: &File) -> io::Result<u64> {
    // SAFETY: an all-zero `statvfs` is a valid value of this plain C struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open for the call; `st` is a live `struct statvfs` the kernel
    // fills in.
    let rc = unsafe { libc::fstatvfs(file.as_raw_fd(), &mut st) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Whether this process has `CAP_SYS_ADMIN` in its effective set (what FITRIM requires), from
/// `/proc/self/status`; `None` when that cannot be read.
pub(crate) fn has_cap_sys_admin() -> Option<bool> {
    const CAP_SYS_ADMIN: u32 = 21;
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_cap_eff(&status).map(|caps| caps & (1u64 << CAP_SYS_ADMIN) != 0)
}

fn parse_cap_eff(status: &str) -> Option<u64> {
    let hex = status.lines().find_map(|l| l.strip_prefix("CapEff:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_numbers_match_the_headers() {
        // Values from <linux/fs.h> as compiled on x86-64.
        assert_eq!(FITRIM, 0xC018_5879);
        assert_eq!(FS_IOC_FIEMAP, 0xC020_660B);
        assert_eq!(std::mem::size_of::<FiemapExtentRaw>(), 56);
    }

    #[test]
    fn capabilities() {
        let root = "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n";
        assert_eq!(parse_cap_eff(root), Some(0x1ff_ffff_ffff));
        assert!(parse_cap_eff(root).unwrap() & (1 << 21) != 0);
        let user = "CapEff:\t0000000000000000\n";
        assert_eq!(parse_cap_eff(user), Some(0));
        assert_eq!(parse_cap_eff("Name: x\n"), None);
        assert_eq!(parse_cap_eff("CapEff:\tzz\n"), None);
    }
}
