//! The contract of the `Target` seam, checked on every kind of target the same way, as
//! ripgrep's searcher tester runs each case through every code path: a file (buffered and
//! direct, on each engine), a block device (root only: a loop device the test makes), the null
//! target and a model. The driver relies on each point; a target that breaks one is caught here
//! rather than by a wrong figure.

use iolab_core::job::{Direction, Job, JobSpec};
use iolab_engine::open::{prepare_target, EngineChoice, WritePolicy};
use iolab_engine::psync::NullTarget;
use iolab_engine::target::{Completion, IoReq, Target};
use iolab_testkit::{loop_skip_reason, LoopDevice, MachineLock};
use std::collections::BTreeMap;
use std::path::Path;

const SLOTS: u32 = 8;
const SLOT_BYTES: usize = 64 << 10;
const BLOCK: u32 = 4096;

/// Reaps until every tag of `tags` has completed, checking each completes once.
fn reap_all(t: &mut dyn Target, tags: &[u32], who: &str) -> BTreeMap<u32, Completion> {
    let mut seen = BTreeMap::new();
    let mut out = Vec::new();
    let mut calls = 0;
    while seen.len() < tags.len() {
        calls += 1;
        assert!(calls < 10_000, "{who}: completions never arrived: {seen:?}");
        t.reap(1, None, &mut out)
            .unwrap_or_else(|e| panic!("{who}: reap: {e}"));
        for c in out.drain(..) {
            assert!(
                tags.contains(&c.tag),
                "{who}: completion of a tag never submitted: {c:?}"
            );
            assert!(
                seen.insert(c.tag, c).is_none(),
                "{who}: tag {} completed twice",
                c.tag
            );
        }
    }
    seen
}

/// A byte pattern that differs per slot and per position, so a read into the wrong slot or at
/// the wrong offset shows.
fn pattern(slot: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32 * 31 + slot * 7 + 1) as u8)
        .collect()
}

/// Every point of the contract on one target.
fn check_contract(t: &mut dyn Target, who: &str) {
    let caps = t.capabilities().clone();
    assert!(
        caps.size_bytes >= u64::from(SLOTS) * u64::from(BLOCK),
        "{who}: {caps:?}"
    );
    assert!(
        caps.logical_block_bytes.is_power_of_two(),
        "{who}: {caps:?}"
    );
    assert!(!caps.engine.is_empty(), "{who}: an engine name for results");
    t.prepare(SLOTS, SLOT_BYTES)
        .unwrap_or_else(|e| panic!("{who}: prepare: {e}"));

    // Buffers: one per slot, as large as asked where the data matters, and kept apart.
    if caps.needs_data {
        for tag in 0..SLOTS {
            let buf = t.buffer_mut(tag);
            assert!(
                buf.len() >= SLOT_BYTES,
                "{who}: slot {tag} holds {} bytes",
                buf.len()
            );
            buf[..BLOCK as usize].copy_from_slice(&pattern(tag, BLOCK as usize));
        }
        for tag in 0..SLOTS {
            let same = t.buffer_mut(tag)[..BLOCK as usize] == pattern(tag, BLOCK as usize)[..];
            assert!(same, "{who}: writing one slot changed slot {tag}");
        }
    }

    // Writes: every tag completes exactly once, with every byte moved.
    let offset = |tag: u32| u64::from(tag) * u64::from(BLOCK) * 3;
    let writes: Vec<IoReq> = (0..SLOTS)
        .map(|tag| IoReq {
            tag,
            dir: Direction::Write,
            offset: offset(tag),
            len: BLOCK,
            ioprio: 0,
        })
        .collect();
    t.submit(&writes)
        .unwrap_or_else(|e| panic!("{who}: submit: {e}"));
    let tags: Vec<u32> = (0..SLOTS).collect();
    for (tag, c) in reap_all(t, &tags, who) {
        assert_eq!(
            c.result,
            i64::from(BLOCK),
            "{who}: write of tag {tag}: {c:?}"
        );
    }

    // Reads, submitted one at a time and in two halves: what was written comes back, into the
    // slot that asked for it (a slot other than the one that wrote it).
    for tag in 0..SLOTS {
        t.buffer_mut(tag)[..BLOCK as usize].fill(0xEE);
    }
    let reads: Vec<IoReq> = (0..SLOTS)
        .map(|tag| IoReq {
            tag,
            dir: Direction::Read,
            offset: offset((tag + 1) % SLOTS),
            len: BLOCK,
            ioprio: 0,
        })
        .collect();
    let (first, second) = reads.split_at(SLOTS as usize / 2);
    for r in first {
        t.submit(std::slice::from_ref(r)).unwrap();
    }
    t.submit(second).unwrap();
    for (tag, c) in reap_all(t, &tags, who) {
        assert_eq!(
            c.result,
            i64::from(BLOCK),
            "{who}: read of tag {tag}: {c:?}"
        );
    }
    // A real target keeps what was written; a model keeps no content, only its effects.
    if caps.needs_data && !caps.modelled {
        for tag in 0..SLOTS {
            let wrote = (tag + 1) % SLOTS;
            let same = t.buffer_mut(tag)[..BLOCK as usize] == pattern(wrote, BLOCK as usize)[..];
            assert!(
                same,
                "{who}: slot {tag} did not read back what slot {wrote} wrote at {}",
                offset(wrote)
            );
        }
    }

    // `reap(min)` waits for `min` where that many are in flight.
    let four: Vec<IoReq> = (0..4)
        .map(|tag| IoReq {
            tag,
            dir: Direction::Read,
            offset: offset(tag),
            len: BLOCK,
            ioprio: 0,
        })
        .collect();
    t.submit(&four).unwrap();
    let mut out = Vec::new();
    t.reap(4, None, &mut out).unwrap();
    assert!(
        out.len() >= 4,
        "{who}: reap(4) returned {} completions",
        out.len()
    );

    // Past the end: a completion that says so (an error or a short transfer), never a panic or
    // a claim that the bytes moved.
    let end = caps.size_bytes / u64::from(BLOCK) * u64::from(BLOCK);
    t.submit(&[IoReq {
        tag: 0,
        dir: Direction::Read,
        offset: end,
        len: BLOCK,
        ioprio: 0,
    }])
    .unwrap();
    let past = reap_all(t, &[0], who);
    assert!(
        past[&0].result < i64::from(BLOCK),
        "{who}: a read past the end moved every byte: {:?}",
        past[&0]
    );

    // Nothing in flight and a timeout: the call returns.
    out.clear();
    t.reap(1, Some(1_000_000), &mut out).unwrap();
    assert!(out.is_empty(), "{who}: completions from nowhere: {out:?}");
}

fn job(direct: bool, engine_size: u64) -> Job {
    JobSpec::from_toml(
        &format!(
            "access = \"randrw\"\nqueue_depth = {SLOTS}\ndirect = {direct}\nsize = {engine_size}"
        ),
        "contract.toml",
    )
    .unwrap()
    .validate()
    .unwrap()
}

/// The contract on `path` through the same opening path as a run, on every engine.
fn check_real(path: &Path, policy: &WritePolicy, what: &str) {
    for direct in [false, true] {
        for engine in [EngineChoice::Uring, EngineChoice::Psync] {
            let mut job = job(direct, 1 << 20);
            let prepared = prepare_target(path, &mut job, policy, engine, None)
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let who = format!("{what}, {engine:?}, direct = {direct}");
            let mut t = prepared
                .open_worker(&job, engine, 1)
                .unwrap_or_else(|e| panic!("{who}: {e}"));
            check_contract(&mut t, &who);
        }
    }
}

#[test]
fn a_file_keeps_the_contract_on_every_engine() {
    let dir = tempfile::tempdir().unwrap();
    check_real(
        &dir.path().join("t.iolab-tmp"),
        &WritePolicy::default(),
        "a file",
    );
}

#[test]
fn a_block_device_keeps_the_contract_on_every_engine() {
    if let Some(why) = loop_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = MachineLock::take();
    let dev = LoopDevice::new(4 << 20).expect("a loop device");
    let policy = WritePolicy {
        destroy_data: Some(dev.path.clone()),
        overwrite: false,
    };
    check_real(&dev.path, &policy, "a loop device");
}

#[test]
fn the_null_target_keeps_the_contract() {
    check_contract(&mut NullTarget::new(1 << 20), "the null target");
}

#[test]
fn a_model_keeps_the_contract() {
    for spec in ["sim:ssd750-1200@z97", "sim:sf1200-120@p55"] {
        let mut sim = iolab_sim::open(spec, None).unwrap_or_else(|e| panic!("{spec}: {e}"));
        for needs_data in [false, true] {
            let mut t = sim.target(needs_data);
            check_contract(&mut t, &format!("{spec}, needs_data = {needs_data}"));
        }
    }
}
