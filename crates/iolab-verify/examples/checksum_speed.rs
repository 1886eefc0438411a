//! Checksum and stamp speed on one core: `cargo run --release -p iolab-verify --example
//! checksum_speed`. Prints GB/s of the sector checksum (XXH3) over whole sectors, of stamping 4 KiB blocks, and of
//! checking them read back, per second of CPU this thread ran (from /proc/self/schedstat), so
//! that a busy machine does not halve the figure. The verify benchmark (bench/verify.sh) runs it.

use iolab_verify::check::{check, Expected, Verdict};
use iolab_verify::stamp::{sector_checksum, stamp_block, BlockFacts, SECTOR};

/// Nanoseconds this process has run on a CPU (it has one thread).
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .expect("/proc/self/schedstat")
}

/// Measures `f` in CPU time.
struct Timer(u64);

impl Timer {
    fn now() -> Timer {
        Timer(cpu_ns())
    }
    fn elapsed_s(&self) -> f64 {
        (cpu_ns() - self.0) as f64 / 1e9
    }
}

fn main() {
    let block = 4096usize;
    let blocks = 64 * 1024; // 256 MiB
    let mut data: Vec<u8> = (0..block * blocks)
        .map(|i| (i * 2_654_435_761) as u8)
        .collect();
    let rounds = 4;
    let gbps = |bytes: usize, s: f64| bytes as f64 / s / 1e9;

    let t = Timer::now();
    let mut acc = 0u32;
    for _ in 0..rounds {
        for s in data.chunks_exact(SECTOR) {
            acc ^= sector_checksum(&s[8..]);
        }
    }
    let crc = gbps(data.len() * rounds, t.elapsed_s());

    let t = Timer::now();
    for _ in 0..rounds {
        for (i, b) in data.chunks_exact_mut(block).enumerate() {
            stamp_block(
                b,
                &BlockFacts {
                    run_id: 1,
                    offset: (i * block) as u64,
                    generation: i as u64 + 1,
                    ..Default::default()
                },
            );
        }
    }
    let stamp = gbps(data.len() * rounds, t.elapsed_s());

    let t = Timer::now();
    let mut ok = 0usize;
    for _ in 0..rounds {
        for (i, b) in data.chunks_exact(block).enumerate() {
            let exp = Expected {
                run_id: 1,
                block_offset: (i * block) as u64,
                start: (i * block) as u64,
                len: block as u64,
                generation: i as u64 + 1,
                floor: i as u64 + 1,
                after_crash: false,
            };
            ok += (check(&exp, b) == Verdict::Ok) as usize;
        }
    }
    let verify = gbps(data.len() * rounds, t.elapsed_s());
    assert_eq!(ok, blocks * rounds, "every block checks");
    println!("checksum_gb_per_s {crc:.2}");
    println!("stamp_gb_per_s {stamp:.2}");
    println!("check_gb_per_s {verify:.2}");
    std::hint::black_box(acc);
}
