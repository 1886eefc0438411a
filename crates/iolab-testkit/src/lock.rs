//! A lock over machine-wide resources, shared by all test binaries.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The lock file every iolab test binary uses.
pub const LOCK_PATH: &str = "/tmp/iolab-loopdev.lock";

/// How long [`MachineLock::take`] waits before it panics.
const MAX_WAIT: Duration = Duration::from_secs(900);

/// Serialises use of machine-wide resources (loop devices, zram) across test binaries and
/// across test threads of one binary.
///
/// An exclusive `flock(2)` on [`LOCK_PATH`]: the kernel releases it when the holder exits, even
/// by a crash, so there are no stale locks. Not re-entrant: a thread that already holds it and
/// takes it again waits forever (well, until the timeout panics).
#[derive(Debug)]
pub struct MachineLock {
    _file: File,
}

impl MachineLock {
    /// Waits for the lock (up to 15 minutes, then panics, naming the holder's pid).
    pub fn take() -> MachineLock {
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(LOCK_PATH)
            .unwrap_or_else(|e| panic!("opening the test lock {LOCK_PATH}: {e}"));
        let deadline = Instant::now() + MAX_WAIT;
        loop {
            // SAFETY: flock on a descriptor we own; LOCK_NB so it never blocks.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                break;
            }
            let err = std::io::Error::last_os_error();
            if err.raw_os_error() != Some(libc::EWOULDBLOCK)
                && err.raw_os_error() != Some(libc::EINTR)
            {
                panic!("locking {LOCK_PATH}: {err}");
            }
            if Instant::now() > deadline {
                let holder = std::fs::read_to_string(LOCK_PATH).unwrap_or_default();
                panic!(
                    "machine lock {LOCK_PATH} held for over {} s (holder pid {})",
                    MAX_WAIT.as_secs(),
                    holder.trim()
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // For whoever wonders who holds it; the lock itself is the flock.
        let _ = file.set_len(0);
        let _ = write!(file, "{}", std::process::id());
        MachineLock { _file: file }
    }
}
// Dropping the File closes the descriptor, which releases the flock. The file stays: removing it
// would let a waiter lock the old inode while a newcomer locks a new one.
