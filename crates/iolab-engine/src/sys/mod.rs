//! Every `unsafe` block of the engine lives below this module: the io_uring target (raw
//! pointers into registered buffers), CPU-time accounting and the interrupt handler.
//! Each block carries a `SAFETY:` comment.

pub mod uring;

use std::sync::atomic::{AtomicBool, Ordering};

/// User and system CPU seconds of the whole process so far.
pub fn process_cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage writes into the zeroed struct we own; RUSAGE_SELF is always valid.
    let usage = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_SELF, &mut u) != 0 {
            return (0.0, 0.0);
        }
        u
    };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// Set by SIGINT/SIGTERM; runs poll it and stop issuing, then save what they measured.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    // A second Ctrl-C falls through to the default action and ends the process at once.
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        // SAFETY: resetting a signal disposition and re-raising are async-signal-safe.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::raise(libc::SIGINT);
        }
    }
}

/// Routes SIGINT and SIGTERM to [`INTERRUPTED`] (first press: stop cleanly and save; second:
/// default action).
pub fn install_interrupt_handler() {
    // SAFETY: `on_signal` only touches an atomic and async-signal-safe calls.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}
