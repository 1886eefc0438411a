//! `/proc/self/mountinfo`: which filesystem a path lives on.

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
    /// Device number of the filesystem as `MAJ:MIN` (`0:N` for filesystems without a block
    /// device of their own, e.g. tmpfs and btrfs).
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
}

/// mountinfo escapes space, tab, newline and backslash as `\ooo` octal.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0');
            out.push(v);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses one mountinfo line; `None` for a malformed one (skipped, never fatal).
pub(crate) fn parse_line(line: &str) -> Option<Mount> {
    // id parent MAJ:MIN root mount_point mount_opts [optional fields...] - fstype source super_opts
    let (left, right) = line.split_once(" - ")?;
    let l: Vec<&str> = left.split(' ').collect();
    let r: Vec<&str> = right.split(' ').collect();
    if l.len() < 6 || r.len() < 2 {
        return None;
    }
    Some(Mount {
        dev: l[2].to_string(),
        mount_point: PathBuf::from(unescape(l[4])),
        mount_options: l[5].to_string(),
        fs_type: r[0].to_string(),
        source: unescape(r[1]),
        super_options: r.get(2).map(|s| s.to_string()).unwrap_or_default(),
    })
}

/// All mounts in a mountinfo text, in table order (later entries shadow earlier ones).
pub(crate) fn parse(text: &str) -> Vec<Mount> {
    text.lines().filter_map(parse_line).collect()
}

/// The mount a canonical path lives on: the longest mount point that is a prefix of the path,
/// the last such entry winning (a later mount over the same point shadows the earlier). When
/// `dev` is given, entries with that device number are preferred, which settles bind mounts and
/// shadowed mounts.
pub(crate) fn find<'a>(mounts: &'a [Mount], path: &Path, dev: Option<&str>) -> Option<&'a Mount> {
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

    const SAMPLE: &str = "\
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw,size=24684084k
40 27 7:0 / /mnt/my\\040disk rw - ext4 /dev/loop0 rw
41 27 0:50 / /mnt/x rw shared:1 master:2 - fuse.sshfs host:/x rw
";

    #[test]
    fn parses_and_unescapes() {
        let m = parse(SAMPLE);
        assert_eq!(m.len(), 4);
        assert_eq!(m[0].fs_type, "ext4");
        assert!(m[0].has_option("discard"));
        assert_eq!(m[2].mount_point, PathBuf::from("/mnt/my disk"));
        assert_eq!(m[3].fs_type, "fuse.sshfs");
        assert_eq!(m[3].source, "host:/x");
        assert!(parse_line("garbage").is_none());
    }

    #[test]
    fn longest_prefix_wins() {
        let m = parse(SAMPLE);
        let f = |p: &str, d| find(&m, Path::new(p), d).unwrap().mount_point.clone();
        assert_eq!(f("/dev/shm/a", None), PathBuf::from("/dev/shm"));
        assert_eq!(f("/dev/shmx", None), PathBuf::from("/"));
        assert_eq!(
            f("/mnt/my disk/f", Some("7:0")),
            PathBuf::from("/mnt/my disk")
        );
        assert_eq!(f("/tmp", Some("254:0")), PathBuf::from("/"));
    }
}
