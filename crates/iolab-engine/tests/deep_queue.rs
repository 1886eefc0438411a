//! A job that keeps far more I/Os in flight than its device queues counts what the device did
//! (root only: a loop device with a short request queue; skipped elsewhere).

use iolab_core::job::JobSpec;
use iolab_engine::open::{prepare_target, EngineChoice, WritePolicy};
use iolab_engine::runner::{run_job, RunControl};
use iolab_testkit::{
    loop_skip_reason, mount_skip_reason, BlockStat, LoopDevice, MachineLock, Mount,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// A block device's `queue/nr_requests`, lowered for a test and put back on drop.
struct ShortQueue {
    knob: String,
    before: String,
}

impl ShortQueue {
    /// Sets `dev`'s request queue to `slots`, or says why it cannot.
    fn set(dev: &str, slots: u32) -> Result<ShortQueue, String> {
        let knob = format!("/sys/block/{dev}/queue/nr_requests");
        let before = std::fs::read_to_string(&knob).map_err(|e| format!("{knob}: {e}"))?;
        std::fs::write(&knob, slots.to_string()).map_err(|e| format!("writing {knob}: {e}"))?;
        Ok(ShortQueue { knob, before })
    }
}

impl Drop for ShortQueue {
    fn drop(&mut self) {
        let _ = std::fs::write(&self.knob, self.before.trim());
    }
}

/// The device's read count over time, sampled every millisecond until `done` is set.
fn sample_reads(dev: &str, done: &AtomicBool) -> Vec<(Instant, u64)> {
    let mut samples = Vec::new();
    while !done.load(Ordering::Relaxed) {
        let reads = BlockStat::read(dev)
            .expect("the loop device's counters")
            .read_ios;
        samples.push((Instant::now(), reads));
        std::thread::sleep(Duration::from_millis(1));
    }
    samples
}

#[test]
fn sixteen_threads_far_deeper_than_the_device_queue_count_what_the_device_did() {
    if let Some(why) = loop_skip_reason().or_else(mount_skip_reason) {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    // On a tmpfs, so the test's I/O stays in memory and the loop device is fast.
    let ram = Mount::tmpfs(200 << 20).expect("a tmpfs");
    let dev = LoopDevice::new_in(&ram.dir, 160 << 20).expect("a loop device");
    let name = dev.name();
    let _short = match ShortQueue::set(&name, 32) {
        Ok(q) => q,
        Err(why) => {
            println!("skipped: cannot shorten the request queue of {name}: {why}");
            return;
        }
    };
    // A file on a filesystem: its direct reads wait inside io_uring_enter for a block-layer
    // tag once the 32 are taken (a raw device's fail fast and go to io-wq instead).
    let fs = Mount::ext4(&dev.path).expect("ext4 on the loop device");
    let path = fs.dir.join("t.iolab-tmp");
    // 32,768 in flight against 32 slots. Handed over in one call per reap, the completions of
    // a whole thread's queue waited unreaped behind one call, and those of the last calls of
    // the run were never counted: 63-69 % of what the device did in the window.
    let mut job = JobSpec::from_toml(
        "access = \"randread\"\nthreads = 16\nqueue_depth = 2048\nduration_s = 0.5\n\
         size = \"64m\"",
        "deep.toml",
    )
    .unwrap()
    .validate()
    .unwrap();
    let target = prepare_target(
        &path,
        &mut job,
        &WritePolicy::default(),
        EngineChoice::Uring,
        None,
    )
    .expect("the test file");
    let done = AtomicBool::new(false);
    let (samples, run) = std::thread::scope(|s| {
        let sampler = s.spawn(|| sample_reads(&name, &done));
        let run = run_job(&target, &job, RunControl::default());
        done.store(true, Ordering::Relaxed);
        (sampler.join().unwrap(), run)
    });
    let result = run.expect("the job runs").result;
    assert!(result.complete, "{:?}", result.stop_reason);
    // The run starts with the device's first reads; its measured window ends `measured_ns`
    // later. The device's count at that moment lies between the samples on either side.
    let base = samples[0].1;
    let first = samples
        .iter()
        .position(|&(_, n)| n > base)
        .expect("the device saw reads");
    let start = samples[first.saturating_sub(1)].0;
    let end = start + Duration::from_nanos(result.measured_ns);
    let before_end = samples.iter().rev().find(|(t, _)| *t <= end).unwrap().1 - base;
    // Never more than the device did in all: a starved sampler makes the window's end only
    // coarsely known, so the upper bound is the whole run's count.
    let in_all = samples.last().unwrap().1 - base;
    let counted = result.read.ios;
    println!(
        "iolab counted {counted} reads in {} ms; the device did {before_end} by then, {in_all} in all",
        result.measured_ns / 1_000_000
    );
    assert!(
        counted as f64 >= 0.95 * before_end as f64 && counted <= in_all,
        "iolab counted {counted} reads, the device did {before_end} in the window, {in_all} \
         in all"
    );
}
