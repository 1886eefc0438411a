//! Shared helpers for iolab's tests that need real block devices.
//!
//! Loop devices and zram are machine-wide: test binaries of different crates run at the same
//! time under `cargo test`, so every test that creates one holds a [`MachineLock`] first.
//! Everything this kit creates is torn down by `Drop`, also when the test panics: declare the
//! guards so that they drop in reverse order of use (a [`Mount`] after the [`LoopDevice`] it
//! mounts, so it is unmounted first).
//!
//! Tests that need root, loop devices or zram ask [`loop_skip_reason`], [`zram_skip_reason`] or
//! [`mount_skip_reason`] first, print `skipped: <reason>` and return:
//!
//! ```no_run
//! use iolab_testkit::{loop_skip_reason, mount_skip_reason, LoopDevice, MachineLock, Mount};
//!
//! if let Some(why) = loop_skip_reason().or_else(mount_skip_reason) {
//!     println!("skipped: {why}");
//!     return;
//! }
//! let _lock = MachineLock::take();
//! let dev = LoopDevice::new(64 << 20).unwrap();
//! let fs = Mount::ext4(&dev.path).unwrap(); // dropped (unmounted) before `dev` (detached)
//! std::fs::write(fs.dir.join("hello"), b"hi").unwrap();
//! ```
//!
//! Nothing here touches a device it did not create. Used only as a dev-dependency.

#![deny(missing_docs)]

mod blockstat;
mod checksum;
mod cmd;
mod lock;
mod loopdev;
mod mount;
mod sha256;
mod stack;
mod zram;

pub use blockstat::BlockStat;
pub use checksum::checksum;
pub use cmd::{is_root, open_exclusive, run, which};
pub use lock::{MachineLock, LOCK_PATH};
pub use loopdev::{loop_skip_reason, LoopDevice};
pub use mount::{mount_skip_reason, Mount};
pub use sha256::{sha256, sha256_bytes};
pub use stack::{AttachedLoop, BindMount, DmLinear, PartitionedLoop, SwapOn};
pub use zram::{zram_skip_reason, Zram};

use std::time::Duration;

/// Retries `f` up to `tries` times, `pause` apart, until it succeeds; the last error otherwise.
pub(crate) fn retry<T>(
    tries: u32,
    pause: Duration,
    mut f: impl FnMut() -> Result<T, String>,
) -> Result<T, String> {
    let mut last = String::new();
    for i in 0..tries.max(1) {
        if i > 0 {
            std::thread::sleep(pause);
        }
        match f() {
            Ok(v) => return Ok(v),
            Err(e) => last = e,
        }
    }
    Err(last)
}
