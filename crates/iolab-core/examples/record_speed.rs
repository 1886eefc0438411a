//! What recording one completed I/O costs the driver (histogram, counters, series bin), per
//! core: the per-I/O statistics must stay far below a fast device's time per I/O. Run with
//! `cargo run --release -p iolab-core --example record_speed`.

use iolab_core::job::Direction;
use iolab_core::rng::Rng;
use iolab_core::stats::RunStats;
use std::time::Instant;

fn main() {
    const N: usize = 1 << 20;
    const ROUNDS: u64 = 100;
    // Latencies of an SSD (all under 10 ms), of a busy one (1 % over 10 ms) and of a disk
    // (about half over 10 ms, the worst case for the branch on slow I/Os).
    for (label, slow_share) in [("ssd", 0.0), ("busy ssd", 0.01), ("hdd", 0.5)] {
        let mut rng = Rng::new(7);
        let lat: Vec<u64> = (0..N)
            .map(|_| {
                if rng.unit() < slow_share {
                    10_000_000 + rng.below(90_000_000)
                } else {
                    20_000 + rng.below(2_000_000)
                }
            })
            .collect();
        let mut best = f64::MAX;
        for _ in 0..5 {
            let mut s = RunStats::new(1_000_000_000);
            let start = Instant::now();
            let mut at = 0u64;
            for _ in 0..ROUNDS {
                for &l in &lat {
                    at += 1_000;
                    s.record(Direction::Read, 4096, l, at);
                }
            }
            let ns = start.elapsed().as_nanos() as f64 / (ROUNDS as f64 * N as f64);
            std::hint::black_box(&s);
            best = best.min(ns);
        }
        println!("{label:<9} {best:>6.2} ns per recorded I/O (best of 5)");
    }
}
