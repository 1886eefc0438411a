//! How fast the model runs: host I/Os simulated per wall second on one core (4 KiB random reads
//! and writes at QD32 on the SSD 750 1.2 TB behind Z97's CPU lanes), and the one-hour
//! performance-consistency test with its wall time and peak memory: 4 KiB random writes at QD32
//! over every LBA of a filled drive for an hour, as AnandTech runs it (its performance
//! consistency test, e.g. in the SSD 750 review, and the
//! `anandtech2015` suite's step). The fill is analytic; every write of the hour is simulated.
//!
//! ```text
//! cargo run --release -p iolab-sim --example sim_speed                  # the full hour
//! cargo run --release -p iolab-sim --example sim_speed -- 60            # a shorter run
//! cargo run --release -p iolab-sim --example sim_speed -- 3600 --fresh  # from a secure-erased drive
//! ```

use iolab_core::job::{Job, JobSpec};
use std::time::Instant;

const SPEC: &str = "sim:ssd750-1200@z97/cpu";

fn job(access: &str, seconds: f64) -> Job {
    let text = format!(
        "name = \"{access} 4k qd32\"\naccess = \"{access}\"\nblock_size = \"4k\"\nqueue_depth = 32\nduration_s = {seconds}\n"
    );
    toml::from_str::<JobSpec>(&text)
        .expect("job parses")
        .validate()
        .expect("job is valid")
}

/// Peak resident memory of this process (Linux `VmHWM`), in MiB.
fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// Runs `job` and prints simulated I/Os per wall second.
fn speed(label: &str, sim: &mut iolab_sim::SimSetup, job: &Job) -> iolab_core::result::JobResult {
    let t = Instant::now();
    let run = sim.run_job(job, None).expect("model runs");
    let wall = t.elapsed().as_secs_f64();
    let r = run.result;
    let ios = r.read.ios + r.write.ios;
    println!(
        "{label:<34} {ios:>11} I/Os in {wall:>7.2} s wall = {:>9.0} simulated I/Os per wall second ({:.0} modelled IOPS)",
        ios as f64 / wall,
        r.read.iops + r.write.iops
    );
    r
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let fresh = args.iter().any(|a| a == "--fresh");
    let consistency_s: f64 = args
        .iter()
        .find(|a| !a.starts_with("--"))
        .map_or(3600.0, |a| {
            a.parse().expect("seconds of the consistency test")
        });

    let t = Instant::now();
    let mut sim = iolab_sim::open(SPEC, None).expect("catalog entry");
    // As the command line does: the engine's prefetch instruction for the model's mappings.
    sim.set_cache_hint(iolab_engine::sys::CACHE_HINT);
    sim.precondition_fill();
    println!(
        "{SPEC}: built and filled analytically in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    speed(
        "4K random read QD32 (full drive)",
        &mut sim,
        &job("randread", 10.0),
    );
    let t = Instant::now();
    sim.precondition_steady();
    println!(
        "steady state set analytically in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    speed(
        "4K random write QD32 (steady)",
        &mut sim,
        &job("randwrite", 10.0),
    );
    drop(sim);

    // Performance consistency: the spare area absorbs the first writes, then the run goes
    // through the cliff towards steady state, every I/O simulated. The timed span includes the
    // analytic fill.
    let mut sim = iolab_sim::open(SPEC, None).expect("catalog entry");
    // As the command line does: the engine's prefetch instruction for the model's mappings.
    sim.set_cache_hint(iolab_engine::sys::CACHE_HINT);
    let t = Instant::now();
    if !fresh {
        sim.precondition_fill();
    }
    let start = if fresh { "fresh" } else { "filled" };
    let r = speed(
        &format!("consistency ({start}), {consistency_s:.0} s virtual"),
        &mut sim,
        &job("randwrite", consistency_s),
    );
    let wall = t.elapsed().as_secs_f64();
    let iops = &r.series.write_iops;
    // AnandTech scores the test on its last 400 s.
    let tail = &iops[iops.len().saturating_sub(400)..];
    println!(
        "consistency: {consistency_s:.0} s of virtual time in {wall:.1} s wall; first second {:.0} IOPS, last 400 s {:.0} IOPS on average; write amplification {:.2}",
        iops.first().copied().unwrap_or(0.0),
        tail.iter().sum::<f64>() / tail.len().max(1) as f64,
        sim.tests().last().and_then(|t| t.write_amplification).unwrap_or(f64::NAN)
    );
    println!("peak resident memory: {:.0} MiB", peak_rss_mib());
}
