//! Facts about the machine a run happens on, for the result's `host` section.

use iolab_core::result::{HostInfo, MachineCpu};
use std::fs;

/// Reads host name, kernel, CPU model, CPU count and memory from procfs (missing facts stay empty).
pub fn host_info() -> HostInfo {
    let read = |p: &str| {
        fs::read_to_string(p)
            .map(|s| s.trim().to_string())
            .unwrap_or_default()
    };
    let cpu_model = fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    let memory_bytes = fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024);
    HostInfo {
        hostname: read("/proc/sys/kernel/hostname"),
        kernel: read("/proc/sys/kernel/osrelease"),
        cpu_model,
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        memory_bytes,
    }
}

/// The whole machine's user-mode (user and nice) and steal seconds from the text of
/// /proc/stat, whose first line sums every CPU's times in ticks (`ticks_per_s`, USER_HZ); None
/// when the line is missing or malformed, or the tick rate unknown.
pub fn machine_cpu(proc_stat: &str, ticks_per_s: f64) -> Option<MachineCpu> {
    if ticks_per_s <= 0.0 {
        return None;
    }
    let line = proc_stat.lines().next()?;
    let mut fields = line.split_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    // user nice system idle iowait irq softirq steal (guest and guest_nice, part of user and
    // nice already, follow).
    let ticks: Vec<u64> = fields
        .take(8)
        .map(str::parse)
        .collect::<Result<_, _>>()
        .ok()?;
    let [user, nice, _, _, _, _, _, steal] = ticks[..] else {
        return None;
    };
    Some(MachineCpu {
        user_s: (user + nice) as f64 / ticks_per_s,
        steal_s: steal as f64 / ticks_per_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_user_and_steal_time_come_from_the_first_line() {
        let text = "cpu  1000 200 300 9000 50 10 20 40 0 0\ncpu0 500 100 150 4500 25 5 10 20 0 0\n";
        let m = machine_cpu(text, 100.0).unwrap();
        assert_eq!(m.user_s, 12.0);
        assert_eq!(m.steal_s, 0.4);
    }

    #[test]
    fn a_line_without_steal_or_an_unknown_tick_rate_gives_nothing() {
        // Kernels before 2.6.11 had no steal column.
        assert_eq!(
            machine_cpu("cpu  1000 200 300 9000 50 10 20\n", 100.0),
            None
        );
        assert_eq!(machine_cpu("cpu  1 2 3 4 5 6 7 8 0 0\n", 0.0), None);
        assert_eq!(machine_cpu("intr 1 2 3 4 5 6 7 8\n", 100.0), None);
        assert_eq!(machine_cpu("cpu  1 2 x 4 5 6 7 8\n", 100.0), None);
    }
}
