//! Times the stages of `trace analyze` separately on one file (read only, read + reorder,
//! read + reorder + analyse), to see where the time goes.
//!
//! cargo run --release -p iolab-trace --example read_speed -- FILE

use std::time::Instant;

use iolab_trace::{analyze, open_path, AnalyzeOptions, ReadOptions, Reorder};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: read_speed FILE")?;
    let path = std::path::Path::new(&path);
    let opts = ReadOptions::default();

    let t = Instant::now();
    let mut n = 0u64;
    for r in open_path(path, &opts)? {
        r?;
        n += 1;
    }
    let read = t.elapsed().as_secs_f64();
    println!(
        "read only          {n} records  {:.2} M/s",
        n as f64 / read / 1e6
    );

    let t = Instant::now();
    let mut m = 0u64;
    for r in Reorder::new(open_path(path, &opts)?, iolab_trace::DEFAULT_WINDOW) {
        r?;
        m += 1;
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "read + reorder     {m} records  {:.2} M/s",
        m as f64 / s / 1e6
    );

    let t = Instant::now();
    let rep = analyze(
        open_path(path, &opts)?,
        "f",
        "msr",
        &AnalyzeOptions::default(),
    )?;
    let s = t.elapsed().as_secs_f64();
    println!(
        "read + analyse     {} records  {:.2} M/s",
        rep.total.requests,
        rep.total.requests as f64 / s / 1e6
    );
    Ok(())
}
