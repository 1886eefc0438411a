//! How fast the write-data generator fills buffers, per core: it must outrun the device, or a
//! write benchmark measures the generator. Run with
//! `cargo run --release -p iolab-core --example datagen_speed`.

use iolab_core::data::DataGenerator;
use iolab_core::job::DataKind;
use std::time::Instant;

fn main() {
    let mut buf = vec![0u8; 1 << 20];
    for (label, compress, dedupe) in [
        ("random", 0.0, 0.0),
        ("50 % compressible", 50.0, 0.0),
        ("random, 50 % dedupable", 0.0, 50.0),
    ] {
        for block in [4096usize, 128 << 10, 1 << 20] {
            let mut g = DataGenerator::with(DataKind::Random, compress, dedupe, 1);
            let total: usize = 4 << 30;
            let start = Instant::now();
            let mut done = 0;
            while done < total {
                for chunk in buf.chunks_mut(block) {
                    g.fill(chunk);
                }
                done += buf.len();
            }
            let secs = start.elapsed().as_secs_f64();
            println!(
                "{label:<24} {:>5} KiB blocks: {:>6.2} GB/s per core",
                block / 1024,
                total as f64 / secs / 1e9
            );
        }
    }
}
