//! fio job files whose jobs run at the same time, end to end: a group run together and
//! reported as one (`group_reporting`), a job whose end stops the others (`exitall`), a
//! thinking job, and the refusal of such a group on a model.

mod common;

use common::{iolab, json, text};
use std::path::Path;

fn write(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn jobs_without_a_stonewall_run_together_and_report_as_fio_groups_them() {
    let dir = tempfile::tempdir().unwrap();
    // Group 1: two readers reported as one, and a writer of its own reporting group whose
    // end after 100 writes (paced by pauses) stops every job then running (exit_what).
    // Group 2, after a stonewall: one reader in turn.
    let job = write(
        dir.path(),
        "g.fio",
        "[global]\nsize=4m\ndirect=1\nbs=4k\ngroup_reporting\n\
         [r1]\nrw=randread\ntime_based\nruntime=60\n\
         [r2]\nrw=randread\ntime_based\nruntime=60\n\
         [w]\nnew_group\nrw=randwrite\nnumber_ios=100\nthinktime=1000\nexitall\n\
         exit_what=stonewall\n\
         [after]\nstonewall\nrw=read\nnumber_ios=64\n",
    );
    let out = iolab(&["run", &job, "t.bin", "--json", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&dir.path().join("r.json"));
    let jobs = r["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["r1", "w", "after"], "{r}");
    // The readers ran until w ended them, long before their minute, and whole.
    let readers = &jobs[0];
    assert_eq!(readers["complete"], true, "{readers}");
    assert!(readers["measured_ns"].as_u64().unwrap() < 60_000_000_000);
    assert!(readers["read"]["ios"].as_u64().unwrap() > 0);
    assert_eq!(jobs[1]["write"]["ios"], 100);
    assert_eq!(jobs[2]["read"]["ios"], 64);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("the results of jobs r1, r2 run at the same time, merged")
            && notes.contains("jobs 'r1', 'r2', 'w' ran at the same time"),
        "{notes}"
    );
}

#[test]
fn jobs_at_the_same_time_on_a_model_are_refused_naming_the_job() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "m.fio",
        "[global]\nsize=4m\ndirect=1\nrw=randread\n[a]\n[b]\n",
    );
    let out = iolab(&["run", &job, "sim:ssd750-400@z97"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("m.fio:6: [b]: job 'b' runs at the same time"),
        "{}",
        text(&out)
    );
}
