//! fio's sprandom example's options end to end: one SPRandom pass over a file.

mod common;

use common::{iolab, json, text};

#[test]
fn an_sprandom_job_writes_one_pass_over_the_physical_capacity() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("p.fio"),
        "[global]\nioengine=libaio\nrw=randwrite\nbs=4k\nblockalign=4k\nnorandommap=1\n\
         iodepth=8\nsize=4m\n[preconditioning]\nsprandom=1\nspr_op=0.15\nspr_num_regions=10\n",
    )
    .unwrap();
    let out = iolab(&["run", "p.fio", "t.bin", "--json", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let j = &json(&dir.path().join("r.json"))["jobs"][0];
    assert_eq!(j["job"]["sprandom"]["regions"], 10, "{j}");
    // 1024 logical blocks, 1178 physical (15 % more): the pass writes every logical block and
    // rewrites some, within the physical capacity, and the budget is the pass.
    let ios = j["write"]["ios"].as_u64().unwrap();
    assert!((1024..=1178).contains(&ios), "{ios}");
    assert_eq!(j["job"]["io_limit_bytes"].as_u64(), Some(ios * 4096), "{j}");
}
