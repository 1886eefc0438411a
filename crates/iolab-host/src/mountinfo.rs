//! `/proc/self/mountinfo` (`proc(5)`): what is mounted where, from which source.

use crate::devnum::{self, DevNum};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One mounted filesystem.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mount {
    /// Where it is mounted.
    pub mount_point: PathBuf,
    /// Filesystem type (`ext4`, `tmpfs`, `fuse.sshfs`, …).
    pub fs_type: String,
    /// Mount source (`/dev/sda2`, `tmpfs`, a server path, …).
    pub source: String,
    /// Device number of the filesystem as `MAJ:MIN`: its `s_dev`, which for filesystems without
    /// a block device of their own (tmpfs), and for those that can span several (btrfs), is an
    /// anonymous `0:N`, not a device's.
    pub dev: String,
    /// Per-mount options (`rw,relatime`).
    pub mount_options: String,
    /// Per-superblock options (`rw,discard,errors=remount-ro`).
    pub super_options: String,
}

impl Mount {
    /// Whether an option is set at either level (e.g. `discard`).
    pub fn has_option(&self, opt: &str) -> bool {
        self.mount_options
            .split(',')
            .chain(self.super_options.split(','))
            .any(|o| o == opt)
    }

    /// [`Mount::dev`] as a number.
    pub fn devnum(&self) -> Option<DevNum> {
        devnum::parse(&self.dev)
    }
}

/// Undoes the kernel's octal escapes in mountinfo fields (`\040` for a space, `\011` for a tab,
/// `\012` for a newline, `\134` for a backslash); a backslash not followed by three octal
/// digits stays as it is.
pub fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match (bytes[i], octal) {
            (b'\\', Some(d)) => {
                out.push((d[0] - b'0') * 64 + (d[1] - b'0') * 8 + (d[2] - b'0'));
                i += 4;
            }
            (b, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses one mountinfo line: ID, parent, `MAJ:MIN`, root, mount point, options, any number of
/// optional fields (`shared:1`, `master:2`), `-`, type, source, super options. `None` for a
/// malformed line (skipped by [`parse`], never fatal).
pub fn parse_line(line: &str) -> Option<Mount> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    let dash = fields.iter().skip(6).position(|f| *f == "-")? + 6;
    Some(Mount {
        dev: fields.get(2)?.to_string(),
        mount_point: PathBuf::from(unescape(fields.get(4)?)),
        mount_options: fields.get(5)?.to_string(),
        fs_type: fields.get(dash + 1)?.to_string(),
        source: unescape(fields.get(dash + 2)?),
        super_options: fields
            .get(dash + 3)
            .map(|s| s.to_string())
            .unwrap_or_default(),
    })
}

/// All mounts of a mountinfo text, in table order (later entries shadow earlier ones).
pub fn parse(text: &str) -> Vec<Mount> {
    text.lines().filter_map(parse_line).collect()
}

/// The mounts this process can see.
pub fn read() -> std::io::Result<Vec<Mount>> {
    Ok(parse(&std::fs::read_to_string("/proc/self/mountinfo")?))
}

/// The mount a canonical path lives on: the longest mount point that is a prefix of the path,
/// the last such entry winning (a later mount over the same point shadows the earlier). When
/// `dev` is given, entries with that device number are preferred, which settles bind mounts and
/// shadowed mounts.
pub fn find<'a>(mounts: &'a [Mount], path: &Path, dev: Option<&str>) -> Option<&'a Mount> {
    let candidates = mounts.iter().filter(|m| path.starts_with(&m.mount_point));
    let best = |it: &mut dyn Iterator<Item = &'a Mount>| {
        it.fold(None, |best: Option<&'a Mount>, m| match best {
            Some(b) if b.mount_point.as_os_str().len() > m.mount_point.as_os_str().len() => Some(b),
            _ => Some(m),
        })
    };
    if let Some(dev) = dev {
        let mut same_dev = candidates.clone().filter(|m| m.dev == dev);
        if let Some(m) = best(&mut same_dev) {
            return Some(m);
        }
    }
    best(&mut candidates.into_iter())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A btrfs on loop1, an ext4 on loop2p1 and at a point with a space, a FUSE mount with
    /// optional fields, as `/proc/self/mountinfo` shows them.
    const SAMPLE: &str = "\
22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard
43 22 0:39 / /mnt/btr rw,relatime shared:30 - btrfs /dev/loop1 rw,space_cache=v2
44 22 259:1 / /mnt/my\\040disk rw - ext4 /dev/loop2p1 rw
25 22 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684084k
41 22 0:50 / /mnt/x rw shared:1 master:2 - fuse.sshfs host:/x rw
";

    #[test]
    fn lines_give_number_source_type_options_and_unescaped_point() {
        let m = parse(SAMPLE);
        assert_eq!(m.len(), 5);
        assert_eq!(m[0].fs_type, "ext4");
        assert!(m[0].has_option("discard"));
        assert_eq!(m[1].devnum(), Some((0, 39)));
        assert_eq!(m[1].source, "/dev/loop1");
        assert_eq!(m[2].mount_point, PathBuf::from("/mnt/my disk"));
        // Optional fields (shared:, master:) do not shift the type or the source.
        assert_eq!(m[4].fs_type, "fuse.sshfs");
        assert_eq!(m[4].source, "host:/x");
        assert!(parse_line("garbage").is_none());
        assert!(parse_line("1 2 3:4 / /x rw no-dash ext4 src").is_none());
    }

    #[test]
    fn escapes_are_undone_and_near_misses_kept() {
        assert_eq!(unescape(r"a\011b\134c\040"), "a\tb\\c ");
        assert_eq!(unescape(r"odd\04"), r"odd\04");
    }

    #[test]
    fn the_longest_mount_point_wins_and_a_device_number_settles_ties() {
        let m = parse(SAMPLE);
        let f = |p: &str, d| find(&m, Path::new(p), d).unwrap().mount_point.clone();
        assert_eq!(f("/dev/shm/a", None), PathBuf::from("/dev/shm"));
        assert_eq!(f("/dev/shmx", None), PathBuf::from("/"));
        assert_eq!(
            f("/mnt/my disk/f", Some("259:1")),
            PathBuf::from("/mnt/my disk")
        );
        assert_eq!(f("/tmp", Some("254:0")), PathBuf::from("/"));
    }
}
