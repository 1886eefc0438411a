//! Time, behind a trait: the driver never reads the system clock itself, so the same driver runs
//! a real device in wall time and a model in virtual time.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// A monotonic clock in nanoseconds since the clock's origin.
pub trait Clock {
    /// Now.
    fn now_ns(&self) -> u64;
    /// Waits (or, for a virtual clock, jumps) until `t_ns`.
    fn sleep_until_ns(&self, t_ns: u64);
    /// How long before a deadline a waiter should stop blocking and watch the clock instead,
    /// so that paced I/Os start on time. Zero for clocks whose waits are exact.
    fn wake_early_ns(&self) -> u64 {
        0
    }
    /// Waits until about `t_ns` without keeping the CPU busy: a wait whose precision does not
    /// matter (a retry), where a spin would take the CPU from the threads doing the work.
    fn pause_until_ns(&self, t_ns: u64) {
        self.sleep_until_ns(t_ns);
    }
    /// Keeps the CPU busy until `t_ns` (a thread's think time spent computing); a virtual
    /// clock jumps, as for a sleep.
    fn spin_until_ns(&self, t_ns: u64) {
        self.sleep_until_ns(t_ns);
    }
}

/// The last stretch before a deadline that [`WallClock`] spins instead of sleeping: waking a
/// sleeping thread takes tens of µs on a VM, and a paced I/O that starts late counts that
/// lateness as latency (it is measured from the intended start).
pub const SPIN_NS: u64 = 100_000;

/// Real time, from the monotonic system clock (vDSO `clock_gettime`, TSC-backed here).
#[derive(Clone, Copy, Debug)]
pub struct WallClock {
    origin: Instant,
}

impl WallClock {
    /// A clock whose zero is now.
    pub fn new() -> Self {
        WallClock {
            origin: Instant::now(),
        }
    }

    /// A clock with a given origin, so threads share one time base.
    pub fn with_origin(origin: Instant) -> Self {
        WallClock { origin }
    }
}

impl Default for WallClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for WallClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.origin.elapsed().as_nanos() as u64
    }

    fn sleep_until_ns(&self, t_ns: u64) {
        let now = self.now_ns();
        if t_ns > now + SPIN_NS {
            std::thread::sleep(Duration::from_nanos(t_ns - now - SPIN_NS));
        }
        while self.now_ns() < t_ns {
            std::hint::spin_loop();
        }
    }

    fn wake_early_ns(&self) -> u64 {
        SPIN_NS
    }

    fn pause_until_ns(&self, t_ns: u64) {
        let now = self.now_ns();
        if t_ns > now {
            std::thread::sleep(Duration::from_nanos(t_ns - now));
        }
    }

    fn spin_until_ns(&self, t_ns: u64) {
        while self.now_ns() < t_ns {
            std::hint::spin_loop();
        }
    }
}

/// Virtual time shared between a model and the driver. The model advances it as it completes
/// requests; the driver's sleeps jump it forward. Single-threaded by design (one event loop).
#[derive(Clone, Debug, Default)]
pub struct VirtualClock {
    now: Rc<Cell<u64>>,
}

impl VirtualClock {
    /// A clock at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Moves time forward to `t_ns` (never backwards).
    pub fn advance_to(&self, t_ns: u64) {
        if t_ns > self.now.get() {
            self.now.set(t_ns);
        }
    }
}

impl Clock for VirtualClock {
    fn now_ns(&self) -> u64 {
        self.now.get()
    }

    fn sleep_until_ns(&self, t_ns: u64) {
        self.advance_to(t_ns);
    }
}

/// Sleeps `seconds` (finite, not negative) of wall time in short steps, ending early once
/// `stop` is set: a pause of minutes must not hold up saving what was measured.
pub fn sleep_unless_stopped(seconds: f64, stop: Option<&std::sync::atomic::AtomicBool>) {
    let end = Instant::now() + Duration::from_secs_f64(seconds);
    while !stop.is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// Now, ns since the Unix epoch.
pub fn unix_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_clock_only_moves_forward() {
        let c = VirtualClock::new();
        let shared = c.clone();
        c.sleep_until_ns(100);
        shared.advance_to(50);
        assert_eq!(c.now_ns(), 100);
        shared.advance_to(150);
        assert_eq!(c.now_ns(), 150);
    }

    #[test]
    fn wall_clock_advances() {
        let c = WallClock::new();
        let a = c.now_ns();
        c.sleep_until_ns(a + 1_000_000);
        assert!(c.now_ns() >= a + 1_000_000);
    }
}
