//! A job's steady-state stop on a real target: the spawning thread samples the job's counters
//! (all its threads together, as fio's group does) every interval and, once the window is
//! steady, sets the end every thread's driver honours. The judgement is
//! [`iolab_core::steady_stop`]'s.

use crate::clock::{Clock, WallClock};
use crate::driver::Progress;
use iolab_core::steady_stop::{Metric, SteadyStop, SteadyStopOutcome, SteadyWatch};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// How often the watch looks whether the job's threads all ended while it waits for a sample.
const POLL: Duration = Duration::from_millis(20);

/// Samples `progress` from `first_ns` (after the ramps) every interval until `ended()`, and
/// stores the time the job became steady in `end_at`.
pub(crate) fn watch(
    stop: &SteadyStop,
    progress: &Progress,
    start_ns: u64,
    first_ns: u64,
    clock: &WallClock,
    end_at: &AtomicU64,
    ended: &dyn Fn() -> bool,
) -> Option<SteadyStopOutcome> {
    let mut w = SteadyWatch::new(stop).ok()?;
    let interval_ns = (stop.interval() * 1e9) as u64;
    let sample = || {
        (
            progress.ios.load(Ordering::Relaxed),
            progress.bytes.load(Ordering::Relaxed),
            progress.measured_ios.load(Ordering::Relaxed),
            progress.lat_ns.load(Ordering::Relaxed),
        )
    };
    if !sleep_until(clock, first_ns, ended) {
        return Some(w.outcome().clone());
    }
    let mut last = (clock.now_ns(), sample());
    loop {
        if !sleep_until(clock, last.0 + interval_ns, ended) {
            break;
        }
        let now = clock.now_ns();
        let s = sample();
        let secs = (now - last.0) as f64 / 1e9;
        let value = match w.metric() {
            Metric::Iops => (s.0 - last.1 .0) as f64 / secs,
            Metric::Bw => (s.1 - last.1 .1) as f64 / secs,
            Metric::Lat => {
                let n = s.2 - last.1 .2;
                if n == 0 {
                    // No I/O completed in the interval: its latency is at least the interval.
                    (now - last.0) as f64
                } else {
                    (s.3 - last.1 .3) as f64 / n as f64
                }
            }
        };
        last = (now, s);
        if w.push(value, (now - start_ns) as f64 / 1e9) {
            end_at.store(now, Ordering::Relaxed);
            break;
        }
    }
    Some(w.outcome().clone())
}

/// Sleeps until `t_ns`, looking every [`POLL`] whether the job ended; false if it did.
fn sleep_until(clock: &WallClock, t_ns: u64, ended: &dyn Fn() -> bool) -> bool {
    loop {
        if ended() {
            return false;
        }
        let now = clock.now_ns();
        if now >= t_ns {
            return true;
        }
        std::thread::sleep(POLL.min(Duration::from_nanos(t_ns - now)));
    }
}
