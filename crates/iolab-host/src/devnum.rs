//! Block device numbers: the kernel's `dev_t` as glibc encodes it, and `MAJ:MIN` as sysfs and
//! mountinfo write it.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

/// A device number, `(major, minor)`.
pub type DevNum = (u64, u64);

/// Major number of a `dev_t`: 12 bits at 8, and the bits above 32 (glibc's encoding).
pub fn major(dev: u64) -> u64 {
    ((dev >> 32) & 0xffff_f000) | ((dev >> 8) & 0xfff)
}

/// Minor number of a `dev_t`: 8 bits at 0, and 12 bits at 20 and up (glibc's encoding).
pub fn minor(dev: u64) -> u64 {
    ((dev >> 12) & 0xffff_ff00) | (dev & 0xff)
}

/// A `dev_t` as `(major, minor)`.
pub fn split(dev: u64) -> DevNum {
    (major(dev), minor(dev))
}

/// `MAJ:MIN`, as sysfs and mountinfo write it.
pub fn to_string(dev: u64) -> String {
    format!("{}:{}", major(dev), minor(dev))
}

/// Parses `MAJ:MIN` (surrounding whitespace allowed, as in sysfs's `dev` files).
pub fn parse(s: &str) -> Option<DevNum> {
    let (major, minor) = s.trim().split_once(':')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The device number of a block device node (following symbolic links), if `path` is one.
pub fn of_block_node(path: &Path) -> Option<DevNum> {
    let meta = fs::metadata(path).ok()?;
    meta.file_type()
        .is_block_device()
        .then(|| split(meta.rdev()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_numbers_split_like_glibc() {
        // glibc's makedev.
        let makedev = |ma: u64, mi: u64| {
            ((ma & 0xffff_f000) << 32)
                | ((ma & 0xfff) << 8)
                | ((mi & 0xffff_ff00) << 12)
                | (mi & 0xff)
        };
        for (ma, mi) in [
            (8, 1),
            (254, 0),
            (259, 3),
            (259, 65536),
            (4095, 1_048_575),
            (70_000, 300),
        ] {
            assert_eq!(split(makedev(ma, mi)), (ma, mi));
            assert_eq!(to_string(makedev(ma, mi)), format!("{ma}:{mi}"));
        }
        assert_eq!(split(0xfe00), (254, 0));
    }

    #[test]
    fn maj_min_text_parses_and_junk_does_not() {
        assert_eq!(parse("254:0\n"), Some((254, 0)));
        assert_eq!(parse("7"), None);
        assert_eq!(parse("a:b"), None);
    }
}
