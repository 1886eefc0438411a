//! zram block devices.

use crate::cmd::{is_root, missing_tool, run};
use crate::retry;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

const CONTROL: &str = "/sys/class/zram-control";

/// Why zram tests cannot run here (not root, no zram module and `modprobe zram` fails, zram0 in
/// use and no `hot_add`), or `None`. May load the zram module.
pub fn zram_skip_reason() -> Option<String> {
    if !is_root() {
        return Some("not root (configuring zram needs root)".into());
    }
    if let Err(e) = load_module() {
        return Some(e);
    }
    if !Path::new(CONTROL).join("hot_add").exists() && free_zram0().is_none() {
        return Some("zram0 is in use and this kernel has no zram-control/hot_add".into());
    }
    None
}

/// Loads the zram module unless it is there already.
fn load_module() -> Result<(), String> {
    if Path::new(CONTROL).exists() || Path::new("/sys/block/zram0").exists() {
        return Ok(());
    }
    if let Some(why) = missing_tool(&["modprobe"]) {
        return Err(format!("no zram module loaded and {why}"));
    }
    run("modprobe", &["zram"]).map_err(|e| format!("no zram module: {e}"))?;
    Ok(())
}

/// `Some(0)` when zram0 exists and is unconfigured (disksize 0).
fn free_zram0() -> Option<u32> {
    let size = fs::read_to_string("/sys/block/zram0/disksize").ok()?;
    (size.trim() == "0").then_some(0)
}

/// A zram block device configured to `size_bytes`; reset (and hot-removed if it was hot-added)
/// on drop.
///
/// A new device from `/sys/class/zram-control/hot_add` when the kernel has it, else the free
/// `zram0` (after `modprobe zram`). Compression is the kernel's default algorithm.
#[derive(Debug)]
pub struct Zram {
    /// The device node, e.g. `/dev/zram1`.
    pub path: PathBuf,
    id: u32,
    hot_added: bool,
}

impl Zram {
    /// Configures a zram device of `size_bytes` (rounded up to a page by the kernel).
    pub fn new(size_bytes: u64) -> Result<Zram, String> {
        if size_bytes == 0 {
            return Err("a zram device of 0 bytes cannot be configured".into());
        }
        load_module()?;
        let hot_add = Path::new(CONTROL).join("hot_add");
        let (id, hot_added) = if hot_add.exists() {
            let id = fs::read_to_string(&hot_add)
                .map_err(|e| format!("reading {}: {e}", hot_add.display()))?;
            let id = id
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("{} gave {id:?}", hot_add.display()))?;
            (id, true)
        } else {
            let id = free_zram0().ok_or("zram0 is in use and there is no hot_add")?;
            (id, false)
        };
        // From here on, Drop resets (and hot-removes) the device, also on error.
        let z = Zram {
            path: PathBuf::from(format!("/dev/zram{id}")),
            id,
            hot_added,
        };
        let knob = format!("/sys/block/{}/disksize", z.name());
        fs::write(&knob, size_bytes.to_string())
            .map_err(|e| format!("writing {size_bytes} to {knob}: {e}"))?;
        // devtmpfs creates the node asynchronously to hot_add.
        retry(50, Duration::from_millis(20), || {
            if z.path.exists() {
                Ok(())
            } else {
                Err(format!("{} did not appear", z.path.display()))
            }
        })?;
        Ok(z)
    }

    /// The kernel name, e.g. `zram1`.
    pub fn name(&self) -> String {
        format!("zram{}", self.id)
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let reset = format!("/sys/block/{}/reset", self.name());
        let r = retry(25, Duration::from_millis(200), || {
            fs::write(&reset, "1").map_err(|e| format!("writing 1 to {reset}: {e}"))
        });
        if let Err(e) = r {
            eprintln!("iolab-testkit: cleanup: {e}");
            return;
        }
        if self.hot_added {
            let remove = Path::new(CONTROL).join("hot_remove");
            let r = retry(25, Duration::from_millis(200), || {
                fs::write(&remove, self.id.to_string())
                    .map_err(|e| format!("writing {} to {}: {e}", self.id, remove.display()))
            });
            if let Err(e) = r {
                eprintln!("iolab-testkit: cleanup: {e}");
            }
        }
    }
}
