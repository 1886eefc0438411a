//! Where a thread runs and allocates: CPU affinity and NUMA memory policy.

/// Runs the calling thread only on `cpus`.
pub fn set_thread_cpus(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is the empty set; CPU_SET stays within it for indices below
    // CPU_SETSIZE (checked), and sched_setaffinity reads the set we pass for its size.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            if c >= libc::CPU_SETSIZE as usize {
                return Err(std::io::Error::other(format!(
                    "CPU {c} is beyond the {} CPUs a thread can be bound to",
                    libc::CPU_SETSIZE
                )));
            }
            libc::CPU_SET(c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The CPUs the calling thread may run on (its affinity mask, which `taskset` or a cgroup
/// narrows).
pub fn allowed_cpus() -> std::io::Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is the empty set; sched_getaffinity writes at most its size,
    // and CPU_ISSET reads indices below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// The memory policies of [`set_thread_mempolicy`].
pub use libc::{MPOL_BIND, MPOL_DEFAULT, MPOL_INTERLEAVE, MPOL_LOCAL, MPOL_PREFERRED};

/// Sets where the calling thread's new memory is allocated: `mode` (an `MPOL_*`) over `nodes`.
pub fn set_thread_mempolicy(mode: libc::c_int, nodes: &[u32]) -> std::io::Result<()> {
    const WORDS: usize = 16;
    let mut mask = [0 as libc::c_ulong; WORDS];
    let bits = libc::c_ulong::BITS as usize;
    for &n in nodes {
        let n = n as usize;
        if n >= WORDS * bits {
            return Err(std::io::Error::other(format!(
                "NUMA node {n} is out of range"
            )));
        }
        mask[n / bits] |= 1 << (n % bits);
    }
    let (ptr, maxnode) = if nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), (WORDS * bits) as libc::c_ulong)
    };
    // SAFETY: the mask outlives the call, and maxnode bits of it are readable.
    let rc = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
