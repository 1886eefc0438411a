//! Every `unsafe` block of the engine lives below this module: the io_uring target (raw
//! pointers into registered buffers), CPU-time accounting, the interrupt handler and the other
//! libc calls (extended attributes, free space, advice to the kernel).
//! Each block carries a `SAFETY:` comment.

mod placement;
pub mod uring;

pub use placement::{
    allowed_cpus, set_thread_cpus, set_thread_mempolicy, MPOL_BIND, MPOL_DEFAULT, MPOL_INTERLEAVE,
    MPOL_LOCAL, MPOL_PREFERRED,
};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// User and system CPU seconds of the whole process so far.
fn process_cpu_seconds() -> (f64, f64) {
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

/// This process's CPU time and, where /proc/stat tells it, the whole machine's.
pub fn cpu_reading() -> iolab_core::result::CpuReading {
    let (user_s, system_s) = process_cpu_seconds();
    // SAFETY: sysconf only reads a system constant.
    let ticks_per_s = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let machine = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|text| crate::host::machine_cpu(&text, ticks_per_s as f64));
    iolab_core::result::CpuReading {
        user_s,
        system_s,
        machine,
    }
}

/// Set by SIGINT/SIGTERM; runs poll it and stop issuing, then save what they measured.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// When the first SIGINT/SIGTERM arrived (CLOCK_MONOTONIC nanoseconds; 0: none yet).
static FIRST_SIGNAL_NS: AtomicU64 = AtomicU64::new(0);

/// How long after the first signal another one still counts as the same interrupt. GNU
/// `timeout -s INT` and a terminal's Ctrl-C both signal the whole process group as well as
/// (for timeout) the process itself, so one interrupt can arrive as two signals microseconds
/// apart; a person pressing Ctrl-C again takes longer than this.
pub const SECOND_SIGNAL_AFTER_NS: u64 = 1_000_000_000;

/// Whether a signal at `now_ns` is a second, deliberate interrupt after the first one at
/// `first_ns` (that ends the process at once), rather than a copy of the first.
pub fn is_second_interrupt(first_ns: u64, now_ns: u64) -> bool {
    now_ns.saturating_sub(first_ns) > SECOND_SIGNAL_AFTER_NS
}

/// CLOCK_MONOTONIC in nanoseconds, at least 1 (0 marks "no signal yet").
fn monotonic_ns() -> u64 {
    // SAFETY: clock_gettime writes into the zeroed struct we own; it is async-signal-safe.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
        ts
    };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
        .max(1)
}

extern "C" fn on_signal(_sig: libc::c_int) {
    let now = monotonic_ns();
    match FIRST_SIGNAL_NS.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => INTERRUPTED.store(true, Ordering::SeqCst),
        // A second Ctrl-C falls through to the default action and ends the process at once;
        // a copy of the first (see SECOND_SIGNAL_AFTER_NS) is ignored.
        Err(first) if is_second_interrupt(first, now) => {
            // SAFETY: resetting a signal disposition and re-raising are async-signal-safe.
            unsafe {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::raise(libc::SIGINT);
            }
        }
        Err(_) => {}
    }
}

/// Routes SIGINT and SIGTERM to [`INTERRUPTED`] (first press: stop cleanly and save; another
/// more than [`SECOND_SIGNAL_AFTER_NS`] later: default action).
pub fn install_interrupt_handler() {
    // SAFETY: `on_signal` only touches an atomic and async-signal-safe calls.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

/// Lets a closed standard output (`iolab sim list | head`) end the process quietly, as for any
/// Unix filter, instead of failing the next print. Only for commands that do not measure: a
/// measuring command keeps running to save its result.
pub fn exit_quietly_on_closed_pipe() {
    // SAFETY: restoring a signal's default disposition has no preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Asks the kernel to back `table` with transparent huge pages (`madvise(MADV_HUGEPAGE)`). A
/// large table read at random offsets (the model's FTL map: 1.2 GB for a 1.2 TB drive) otherwise
/// takes a TLB miss and a page walk on nearly every access. Best effort: on a kernel that refuses,
/// the table simply keeps 4 KiB pages.
pub fn advise_huge_pages<T>(table: &mut [T]) {
    const PAGE: usize = 4096;
    let start = table.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(table);
    let first = start.next_multiple_of(PAGE);
    if end < first + (2 << 20) {
        return; // under one huge page: nothing to gain
    }
    let len = (end - first) / PAGE * PAGE;
    // SAFETY: [first, first + len) lies inside `table`'s allocation, which the borrow keeps
    // alive; MADV_HUGEPAGE changes only how the pages are backed, never their contents.
    unsafe {
        libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

/// Starts loading `item`'s cache line (a hint: nothing happens on other architectures).
#[inline]
pub fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and does not change memory; `item` is a valid reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((item as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
}

/// [`prefetch`] as the seam's cache hint, which the engine's targets give the driver (and a
/// model can be given) so that code without `unsafe` can hint too.
pub const CACHE_HINT: iolab_drive::hint::CacheHint =
    iolab_drive::hint::CacheHint::new(prefetch_address);

/// Starts loading the cache line at `addr`, any address: a prefetch never faults and never
/// reads through the pointer, so no address can make it unsound.
fn prefetch_address(addr: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and does not change memory, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(addr.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = addr;
}

/// The extended attribute that marks a file iolab created (so a later run may overwrite it).
pub const CREATED_XATTR: &str = "user.iolab.created";

/// Marks `file` as created by iolab. Filesystems without user xattrs (some tmpfs, FUSE) return
/// an error; the file is then simply not recognised as iolab's later.
pub fn mark_created(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let name = std::ffi::CString::new(CREATED_XATTR).expect("no NUL in the name");
    let value = b"1";
    // SAFETY: name is a valid C string, value a live buffer of the given length, fd is open.
    let rc = unsafe {
        libc::fsetxattr(
            file.as_raw_fd(),
            name.as_ptr(),
            value.as_ptr().cast(),
            value.len(),
            0,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Whether `file` carries iolab's creation mark.
pub fn is_marked_created(file: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    let name = std::ffi::CString::new(CREATED_XATTR).expect("no NUL in the name");
    let mut value = [0u8; 8];
    // SAFETY: name is a valid C string; value is a live buffer of the length passed.
    let rc = unsafe {
        libc::fgetxattr(
            file.as_raw_fd(),
            name.as_ptr(),
            value.as_mut_ptr().cast(),
            value.len(),
        )
    };
    rc == 1 && value[0] == b'1'
}

/// Bytes an unprivileged writer may still allocate on the filesystem holding `path` (statvfs:
/// available blocks × fragment size; the blocks reserved for root are not counted).
pub fn free_bytes(path: &std::path::Path) -> std::io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes())?;
    // SAFETY: name is a valid C string; statvfs writes into the zeroed struct we own.
    let st = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(name.as_ptr(), &mut st) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        st
    };
    Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Drops `file`'s pages from the page cache (after a buffered fill, so that reads measure the
/// device and not memory). Advisory: errors are ignored.
pub fn drop_cached_pages(file: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: plain advisory call on an open descriptor; offset 0 and length 0 mean "all".
    unsafe {
        libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

/// Whether the kernel can attempt I/O on `file` without blocking (FMODE_NOWAIT). Where it
/// cannot (zram and other bio drivers without NOWAIT support), io_uring first tries every
/// request inline, fails with EAGAIN and only then hands it to an io-wq worker. Probed with one
/// RWF_NOWAIT read of `probe_bytes` at offset 0, which answers EOPNOTSUPP exactly when the mode
/// is missing.
pub fn supports_nowait(file: &std::fs::File, probe_bytes: usize) -> bool {
    use std::os::fd::AsRawFd;
    let mut buf = crate::buf::SlotBuffers::new(1, probe_bytes.max(512));
    let slot = buf.slot_mut(0);
    let iov = libc::iovec {
        iov_base: slot.as_mut_ptr().cast(),
        iov_len: probe_bytes.max(512),
    };
    // SAFETY: one iovec pointing into a live, aligned buffer of the stated length.
    let rc = unsafe { libc::preadv2(file.as_raw_fd(), &iov, 1, 0, libc::RWF_NOWAIT) };
    rc >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EOPNOTSUPP)
}

/// Raises the soft limit on open descriptors to the hard limit: a job on the psync-per-slot
/// engine opens one descriptor per queue slot (QD 64 × 16 threads is 1024, the usual soft
/// limit). Best effort: the job's own open then reports any shortage.
pub fn raise_open_file_limit() {
    // SAFETY: getrlimit/setrlimit read and write the struct we own.
    unsafe {
        let mut lim: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// Makes this thread's timed waits end on time: the default 50 µs timer slack would make a
/// paced I/O start up to 50 µs late, and that lateness would count as its latency.
pub fn tighten_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer argument and affects only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong);
    }
}

/// Deallocates `[offset, offset + len)` of a regular file, keeping its size: the file reads
/// back as zeros and its blocks are freed (the filesystem discards them if mounted so).
pub fn punch_hole(file: &std::fs::File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
    // SAFETY: plain system call on an open descriptor with integer arguments.
    let rc = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            mode,
            offset as libc::off_t,
            len as libc::off_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Discards `[offset, offset + len)` of a block device (BLKDISCARD, TRIM/UNMAP/Deallocate).
pub fn discard(file: &std::fs::File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // BLKDISCARD = _IO(0x12, 119)
    const BLKDISCARD: libc::c_ulong = (0x12 << 8) | 119;
    let range: [u64; 2] = [offset, len];
    // SAFETY: BLKDISCARD reads a two-u64 range from the pointer, which points at `range`.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), BLKDISCARD, range.as_ptr()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Sets this thread's I/O priority (`ioprio`: class << 13 | hint << 3 | level; 0 goes back to
/// none): what the psync engine's next reads and writes are issued at.
pub fn set_thread_ioprio(ioprio: u16) -> std::io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    // SAFETY: ioprio_set takes three integers; who = 0 is the calling thread.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0 as libc::c_long,
            libc::c_long::from(ioprio),
        )
    };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// This thread's I/O priority (as [`set_thread_ioprio`] takes it).
pub fn thread_ioprio() -> std::io::Result<u16> {
    const IOPRIO_WHO_PROCESS: libc::c_long = 1;
    // SAFETY: ioprio_get takes two integers; who = 0 is the calling thread.
    let rc = unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0 as libc::c_long) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(rc as u16)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_signal_well_after_the_first_ends_the_process() {
        let first = 5_000_000_000;
        // timeout's copies to the process and its group: microseconds apart.
        assert!(!is_second_interrupt(first, first));
        assert!(!is_second_interrupt(first, first + 30_000));
        assert!(!is_second_interrupt(first, first + SECOND_SIGNAL_AFTER_NS));
        // A person pressing Ctrl-C again.
        assert!(is_second_interrupt(
            first,
            first + SECOND_SIGNAL_AFTER_NS + 1
        ));
        assert!(is_second_interrupt(first, first + 3_000_000_000));
        // A clock read out of order is not a second press.
        assert!(!is_second_interrupt(first, first - 1));
    }
}
