//! Where trimcheck's method cannot work, and why. Only filesystems known to map files to device
//! blocks 1:1 and to implement FITRIM are accepted; everything else gets a reason.

/// Filesystems the method is known to work on.
pub(crate) const SUPPORTED: [&str; 4] = ["ext4", "ext3", "ext2", "xfs"];

/// `None` if `fs_type` is supported, else why not.
pub(crate) fn filesystem(fs_type: &str) -> Option<String> {
    if SUPPORTED.contains(&fs_type) {
        return None;
    }
    let why = match fs_type {
        "tmpfs" | "ramfs" | "devtmpfs" | "hugetlbfs" => {
            "it is memory-backed: there is no device for TRIM to reach"
        }
        "btrfs" => {
            "btrfs is copy-on-write and may compress: FIEMAP reports btrfs logical addresses, \
             not device offsets, and freed blocks may live on in snapshots"
        }
        "zfs" | "bcachefs" => "it is copy-on-write with its own volume manager and compression",
        "f2fs" | "nilfs2" => {
            "it is log-structured: freed blocks are reclaimed by its cleaner, not at deletion"
        }
        "overlay" | "aufs" => "it is a union of other filesystems; check the upper layer's",
        "nfs" | "nfs4" | "cifs" | "smb3" | "9p" | "virtiofs" | "ceph" | "glusterfs" => {
            "it is a network or shared filesystem: the drive is on another machine"
        }
        "squashfs" | "erofs" | "iso9660" | "udf" | "cramfs" => {
            "it is a read-only (often compressed) image filesystem"
        }
        "proc" | "sysfs" | "cgroup" | "cgroup2" | "debugfs" | "tracefs" | "securityfs"
        | "devpts" | "mqueue" | "pstore" | "bpf" | "configfs" | "autofs" => {
            "it is a pseudo filesystem with no storage"
        }
        t if t.starts_with("fuse") => {
            "it is a FUSE filesystem: the kernel cannot map its files to device blocks"
        }
        _ => "the method has not been verified on it (FIEMAP offsets and FITRIM must both be trustworthy)",
    };
    Some(format!(
        "{fs_type}: {why}. trimcheck works on {}; run it on a directory of such a filesystem on \
         the drive you want to check",
        SUPPORTED.join(", ")
    ))
}

/// Why a test file of `needed_bytes` (twice the padding and one block) does not fit in the
/// `free_bytes` of `dir`'s filesystem, and what to do: the padding is `--padding-mib`.
pub(crate) fn no_room(needed_bytes: u64, free_bytes: u64, dir: &std::path::Path) -> String {
    format!(
        "the test file needs {} MiB (twice the padding and one block) and only {} MiB are free \
         on {}; free some space or give a smaller padding with --padding-mib (default 32)",
        needed_bytes.div_ceil(1 << 20),
        free_bytes >> 20,
        dir.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// It said "use a smaller padding" without naming the option that sets it.
    #[test]
    fn no_room_names_the_padding_option() {
        let why = no_room(
            (64 << 20) + (16 << 10),
            40 << 20,
            std::path::Path::new("/mnt/x"),
        );
        assert_eq!(
            why,
            "the test file needs 65 MiB (twice the padding and one block) and only 40 MiB are \
             free on /mnt/x; free some space or give a smaller padding with --padding-mib \
             (default 32)"
        );
    }

    #[test]
    fn reasons() {
        assert!(filesystem("ext4").is_none());
        assert!(filesystem("xfs").is_none());
        assert!(filesystem("tmpfs").unwrap().contains("memory-backed"));
        assert!(filesystem("btrfs").unwrap().contains("copy-on-write"));
        assert!(filesystem("fuse.sshfs").unwrap().contains("FUSE"));
        assert!(filesystem("fuseblk").unwrap().contains("FUSE"));
        assert!(filesystem("nfs4").unwrap().contains("network"));
        assert!(filesystem("overlay").unwrap().contains("union"));
        assert!(filesystem("weirdfs").unwrap().contains("not been verified"));
    }
}
