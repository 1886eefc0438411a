//! What tests stack on devices and files: loop devices on existing devices or files, loop
//! devices with partitions, active swap, bind mounts and device-mapper targets. Each is torn
//! down on drop.

use crate::cmd::run;
use crate::retry;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn utf8(p: &Path) -> Result<&str, String> {
    p.to_str()
        .ok_or_else(|| format!("{} is not UTF-8", p.display()))
}

/// Detaches the loop device `dev`, retrying while it is briefly busy (udev probing it);
/// a failure is said, not raised: this runs in `Drop`.
fn detach(dev: &Path) {
    let dev = dev.to_string_lossy().into_owned();
    if let Err(e) = retry(10, Duration::from_millis(100), || {
        run("losetup", &["-d", &dev])
    }) {
        eprintln!("iolab-testkit: cleanup: {e}");
    }
}

/// A loop device on something that is not a fresh image (another device, a partition, an
/// existing file), attached with `losetup -f --show ARGS…`; detached on drop.
#[derive(Debug)]
pub struct AttachedLoop {
    /// The device node, e.g. `/dev/loop4`.
    pub path: PathBuf,
}

impl AttachedLoop {
    /// `losetup -f --show ARGS…` (e.g. `["-o", "1048576", "/dev/loop3"]`).
    pub fn new(args: &[&str]) -> Result<AttachedLoop, String> {
        let mut all = vec!["-f", "--show"];
        all.extend(args);
        let dev = run("losetup", &all)?;
        if !dev.starts_with("/dev/loop") {
            return Err(format!("losetup printed {dev:?}, not a loop device"));
        }
        Ok(AttachedLoop {
            path: PathBuf::from(dev),
        })
    }

    /// The kernel name, e.g. `loop4`.
    pub fn name(&self) -> String {
        self.path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }
}

impl Drop for AttachedLoop {
    fn drop(&mut self) {
        detach(&self.path);
    }
}

/// A loop device that carries partitions (`losetup -P`) over a backing file holding a given
/// image, in its own temp dir; detached on drop (and the file removed).
///
/// Partitions the kernel did not find in the image are added through BLKPG (`addpart`), so a
/// kernel without partition-table parsers has them too.
#[derive(Debug)]
pub struct PartitionedLoop {
    /// The whole device's node, e.g. `/dev/loop3`.
    pub path: PathBuf,
    _dir: tempfile::TempDir,
}

impl PartitionedLoop {
    /// A device of `size_bytes` zero bytes (sparse) with partitions at `(start, sectors)` in
    /// 512-byte sectors.
    pub fn new(size_bytes: u64, parts: &[(u64, u64)]) -> Result<PartitionedLoop, String> {
        PartitionedLoop::make(
            |backing| {
                let f = std::fs::File::create(backing).map_err(|e| e.to_string())?;
                f.set_len(size_bytes).map_err(|e| e.to_string())
            },
            parts,
        )
    }

    /// A device holding `image` (its length a multiple of 512), with partitions at
    /// `(start, sectors)` in 512-byte sectors.
    pub fn with_image(image: &[u8], parts: &[(u64, u64)]) -> Result<PartitionedLoop, String> {
        PartitionedLoop::make(
            |backing| std::fs::write(backing, image).map_err(|e| e.to_string()),
            parts,
        )
    }

    fn make(
        fill: impl FnOnce(&Path) -> Result<(), String>,
        parts: &[(u64, u64)],
    ) -> Result<PartitionedLoop, String> {
        let dir = tempfile::Builder::new()
            .prefix("iolab-ploop-")
            .tempdir()
            .map_err(|e| format!("temp dir: {e}"))?;
        let backing = dir.path().join("disk.img");
        fill(&backing)?;
        let dev = run("losetup", &["-f", "--show", "-P", utf8(&backing)?])?;
        if !dev.starts_with("/dev/loop") {
            return Err(format!("losetup printed {dev:?}, not a loop device"));
        }
        // From here on, Drop detaches it, also on error.
        let me = PartitionedLoop {
            path: PathBuf::from(dev),
            _dir: dir,
        };
        let whole = utf8(&me.path)?.to_string();
        for (i, (start, sectors)) in parts.iter().enumerate() {
            if !me.partition(i + 1).exists() {
                run(
                    "addpart",
                    &[
                        &whole,
                        &(i + 1).to_string(),
                        &start.to_string(),
                        &sectors.to_string(),
                    ],
                )?;
            }
        }
        // udev may be absent; devtmpfs shows the nodes a little later.
        for i in 1..=parts.len() {
            let node = me.partition(i);
            retry(100, Duration::from_millis(20), || {
                if node.exists() {
                    Ok(())
                } else {
                    Err(format!("{} did not appear", node.display()))
                }
            })?;
        }
        Ok(me)
    }

    /// Partition `n`'s node, e.g. `/dev/loop3p2`.
    pub fn partition(&self, n: usize) -> PathBuf {
        PathBuf::from(format!("{}p{n}", self.path.display()))
    }
}

impl Drop for PartitionedLoop {
    fn drop(&mut self) {
        detach(&self.path);
    }
}

/// Active swap on a device or file (`mkswap`, then `swapon`); switched off on drop.
#[derive(Debug)]
pub struct SwapOn {
    /// The swap device or file.
    pub path: PathBuf,
}

impl SwapOn {
    /// Makes `path` swap and switches it on. A file must have no holes and mode 0600, on a
    /// filesystem that takes swap files (ext4 does; tmpfs and overlayfs do not).
    pub fn new(path: &Path) -> Result<SwapOn, String> {
        let p = utf8(path)?;
        run("mkswap", &["-q", p])?;
        run("swapon", &[p])?;
        Ok(SwapOn {
            path: path.to_path_buf(),
        })
    }
}

impl Drop for SwapOn {
    fn drop(&mut self) {
        let p = self.path.to_string_lossy().into_owned();
        if let Err(e) = retry(10, Duration::from_millis(200), || run("swapoff", &[&p])) {
            eprintln!("iolab-testkit: cleanup: {e}");
        }
    }
}

/// A file or directory bind-mounted over another; unmounted (lazily if busy) on drop.
#[derive(Debug)]
pub struct BindMount {
    /// The mount point: what the source now shows through.
    pub target: PathBuf,
}

impl BindMount {
    /// `mount --bind SOURCE TARGET`.
    pub fn new(source: &Path, target: &Path) -> Result<BindMount, String> {
        run("mount", &["--bind", utf8(source)?, utf8(target)?])?;
        Ok(BindMount {
            target: target.to_path_buf(),
        })
    }
}

impl Drop for BindMount {
    fn drop(&mut self) {
        let t = self.target.to_string_lossy().into_owned();
        if run("umount", &[&t]).is_err() {
            if let Err(e) = run("umount", &["-l", &t]) {
                eprintln!("iolab-testkit: cleanup: {e}");
            }
        }
    }
}

/// A device-mapper linear target over the first sectors of a device (a holder of it); removed
/// on drop. Needs `dmsetup` and the kernel's device-mapper.
#[derive(Debug)]
pub struct DmLinear {
    /// The target's name under `/dev/mapper`.
    pub name: String,
}

impl DmLinear {
    /// A linear target named `name` over the first `sectors` 512-byte sectors of `dev`.
    pub fn new(name: &str, dev: &Path, sectors: u64) -> Result<DmLinear, String> {
        let table = format!("0 {sectors} linear {} 0", utf8(dev)?);
        run(
            "dmsetup",
            &["create", name, "--noudevsync", "--table", &table],
        )?;
        Ok(DmLinear {
            name: name.to_string(),
        })
    }
}

impl Drop for DmLinear {
    fn drop(&mut self) {
        if let Err(e) = retry(10, Duration::from_millis(100), || {
            run("dmsetup", &["remove", "--noudevsync", &self.name])
        }) {
            eprintln!("iolab-testkit: cleanup: {e}");
        }
    }
}
