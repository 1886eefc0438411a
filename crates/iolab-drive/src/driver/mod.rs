//! The driver: keeps every worker's queue full, stamps and records every I/O.
//!
//! One driver loop serves one or more workers over one [`Target`]. The real runner gives each
//! thread its own target (its own ring) and one worker; a model runs all workers through one
//! driver over one simulated target in virtual time. Either way the loop is the same:
//!
//! 1. top up each worker to its queue depth with requests whose intended time has come,
//! 2. submit them as one batch, stamped once, and, on a target that can hand them to the device
//!    without waiting, fill spare buffers with the next writes' data while it works on them,
//! 3. reap at least one completion (or wait for the next intended start), stamped once per batch,
//! 4. record each completion's latency unless it finished during the ramp.
//!
//! Latency runs from submission, or — for paced workloads (rate limits, trace timestamps) —
//! from the intended start, so a stalled device shows up in the latency instead of silently
//! lowering the offered load (no coordinated omission).
//!
//! The loop is one `Drive` state whose phases are its methods, one side per file:
//! `source` plans each worker's requests, `state` sets the drive up, runs its turns and sums
//! it up, `issue` tops the queues up and submits, `reap` waits for and records completions, and
//! `control` follows the stop flags, the syncs and a latency-target search's depth.

mod control;
mod issue;
mod options;
mod reap;
mod source;
mod state;
#[cfg(test)]
mod tests;

pub use options::{DriveOptions, DriveOutcome, Progress};
pub use source::{fill_ahead_slots, plan_workers, JobSource, Planned, RequestSource, Worker};

use crate::clock::Clock;
use crate::target::Target;

/// Runs `workers` over `target` until their sources end, the duration passes, `stop` is set or
/// an error stops it.
pub fn drive<T, C, S>(
    target: &mut T,
    clock: &C,
    workers: Vec<Worker<S>>,
    opts: &DriveOptions,
) -> std::io::Result<DriveOutcome>
where
    T: Target + ?Sized,
    C: Clock + ?Sized,
    S: RequestSource,
{
    state::Drive::new(target, clock, workers, opts).run()
}

/// The longest the driver sleeps, with nothing in flight, before it looks at the stop flags
/// again (a person's Ctrl-C is answered within it).
pub const STOP_POLL_NS: u64 = 50_000_000;

/// Pseudo-errno recorded for a transfer shorter than requested.
pub const SHORT_TRANSFER: i32 = 0;

/// A readable description of an errno.
pub fn describe_errno(errno: i32) -> String {
    if errno == SHORT_TRANSFER {
        return "short transfer (fewer bytes than requested; past the end of the target?)".into();
    }
    std::io::Error::from_raw_os_error(errno).to_string()
}
