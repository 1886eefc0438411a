//! fio's options for jobs that run at the same time, and pauses within a job: the order of a
//! file's jobs (`stonewall`, `new_group`, `wait_for`, `group_reporting`), `exitall` and
//! `exit_what`, `thinktime` and its companions, `flow`, and where a job runs:
//! `numa_cpu_nodes`, `cpus_allowed`, `cpus_allowed_policy` and `numa_mem_policy`.

use super::translate::{FioJob, Problem, Tr};
use iolab_core::schedule::{parse_cpus, parse_nodes, EndsOthers, MemPolicy, ThinkAfter};

/// One job's keys.
pub(super) fn job_keys(tr: &mut Tr) {
    if let Some(o) = tr.o.get("wait_for") {
        tr.job.spec.wait_for = o.value.clone();
        tr.from("wait_for", "wait_for");
    }
    if tr.flag("group_reporting") {
        tr.job.spec.group_reporting = Some(true);
    }
    let what = match tr.o.value("exit_what").unwrap_or("group") {
        "group" => Some(EndsOthers::Group),
        "stonewall" => Some(EndsOthers::Running),
        "all" => Some(EndsOthers::All),
        other => {
            let other = other.to_string();
            tr.problem(
                "exit_what",
                format!("'{other}' is not group, stonewall or all"),
            );
            None
        }
    };
    if tr.flag("exitall") {
        tr.job.spec.ends_others = what;
        tr.from("ends_others", "exitall");
    } else {
        tr.note("exit_what", "no effect without exitall");
    }
    think(tr);
    if let Some(w) = tr.number::<u32>("flow").filter(|&w| w > 0) {
        tr.job.spec.flow = Some(w);
        tr.from("flow", "flow");
        if let Some(id) = tr.number::<u32>("flow_id") {
            tr.job.spec.flow_id = Some(id);
            tr.from("flow_id", "flow_id");
        }
        if let Some(s) = tr.seconds("flow_sleep", 1e-6).filter(|&s| s > 0.0) {
            tr.job.spec.flow_sleep_s = Some(s);
            tr.from("flow_sleep_s", "flow_sleep");
        }
    } else {
        for key in ["flow_id", "flow_sleep"] {
            tr.note(key, "no effect without flow");
        }
    }
    if let Some(v) = checked(tr, "numa_cpu_nodes", "cpu_nodes", parse_nodes) {
        tr.job.spec.cpu_nodes = Some(v);
    }
    if let Some(v) = checked(tr, "cpus_allowed", "cpus", parse_cpus) {
        tr.job.spec.cpus = Some(v);
    }
    if let Some(policy) = tr.o.value("cpus_allowed_policy") {
        match policy.trim() {
            "shared" | "split" if tr.job.spec.cpus.is_some() => {
                tr.job.spec.cpus_policy = Some(policy.trim().to_string());
                tr.from("cpus_policy", "cpus_allowed_policy");
            }
            "shared" | "split" => tr.note("cpus_allowed_policy", "no effect without cpus_allowed"),
            other => tr.problem(
                "cpus_allowed_policy",
                format!("'{other}' is not a policy: use shared or split"),
            ),
        }
    }
    if let Some(v) = checked(tr, "numa_mem_policy", "mem_policy", MemPolicy::parse) {
        tr.job.spec.mem_policy = Some(v);
    }
}

/// fio's `key`, as iolab's job key `to` where `parse` takes it (as written, trimmed); a
/// problem where it does not.
fn checked<T>(
    tr: &mut Tr,
    key: &str,
    to: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Option<String> {
    let text = tr.o.value(key)?.trim().to_string();
    match parse(&text) {
        Ok(_) => {
            tr.from(to, key);
            Some(text)
        }
        Err(e) => {
            tr.problem(key, e);
            None
        }
    }
}

/// `thinktime`, `thinktime_blocks`, `thinktime_spin`, `thinktime_blocks_type`.
fn think(tr: &mut Tr) {
    let pause = tr.seconds("thinktime", 1e-6).filter(|&t| t > 0.0);
    let Some(pause) = pause else {
        for key in [
            "thinktime_blocks",
            "thinktime_spin",
            "thinktime_blocks_type",
        ] {
            tr.note(key, "no effect without thinktime");
        }
        return;
    };
    tr.job.spec.think_s = Some(pause);
    tr.from("think_s", "thinktime");
    if let Some(n) = tr.number::<u32>("thinktime_blocks") {
        tr.job.spec.think_blocks = Some(n.max(1));
        tr.from("think_blocks", "thinktime_blocks");
    }
    if let Some(s) = tr.seconds("thinktime_spin", 1e-6).filter(|&s| s > 0.0) {
        tr.job.spec.think_spin_s = Some(s.min(pause));
        tr.from("think_spin_s", "thinktime_spin");
    }
    match tr.o.value("thinktime_blocks_type") {
        None | Some("complete") => {}
        Some("issue") => {
            tr.job.spec.think_after = Some(ThinkAfter::Issue);
            tr.from("think_after", "thinktime_blocks_type");
        }
        Some(other) => {
            let other = other.to_string();
            tr.problem(
                "thinktime_blocks_type",
                format!("'{other}' is not complete or issue"),
            );
        }
    }
}

/// The order of a file's jobs: which start together (no `stonewall` between them), their
/// reporting groups (fio starts a new one at `stonewall` or `new_group`), and `wait_for`.
/// On a model, jobs that fio runs at the same time are refused (`lenient`: run in turn).
pub(super) fn file_order(jobs: &mut [FioJob], on_model: bool, lenient: bool) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut group = 0u32;
    let mut in_group = 0usize;
    let mut sizes: Vec<usize> = Vec::new();
    for i in 0..jobs.len() {
        if i > 0 && (jobs[i].stonewall || jobs[i].new_group) && in_group > 0 {
            sizes.push(in_group);
            group += 1;
            in_group = 0;
        }
        in_group += 1;
        let name = jobs[i].spec.name.clone().unwrap_or_default();
        if let Some((other, at)) = jobs[i].wait_for.clone() {
            if !jobs[..i]
                .iter()
                .any(|j| j.spec.name.as_deref() == Some(&other))
            {
                problems.push(Problem {
                    at,
                    option: format!("wait_for={other}"),
                    why: format!("no job named '{other}' comes before '{name}'"),
                });
                jobs[i].spec.wait_for = None;
            }
        }
        let job = &mut jobs[i];
        job.spec.group = Some(group);
        if i > 0 && !job.stonewall {
            if on_model {
                problems.push(Problem {
                    at: job.header.clone(),
                    option: format!("[{name}]"),
                    why: format!(
                        "job '{name}' runs at the same time as the one before it in fio (no \
                         stonewall); a model runs one job at a time in virtual time: add \
                         stonewall to run them in turn, or run on a file or device"
                    ),
                });
                if !lenient {
                    continue;
                }
            } else {
                job.spec.together = Some(true);
            }
        }
    }
    sizes.push(in_group);
    for job in jobs.iter_mut() {
        let g = job.spec.group.unwrap_or(0) as usize;
        let shared = sizes.get(g).is_some_and(|&n| n > 1);
        // A group of one job has nothing to merge, and no group to stop.
        if !shared {
            job.spec.group_reporting = None;
            if job.spec.ends_others == Some(EndsOthers::Group) {
                job.spec.ends_others = None;
            }
        }
        let needs_group =
            job.spec.group_reporting.is_some() || job.spec.ends_others == Some(EndsOthers::Group);
        if !needs_group {
            job.spec.group = None;
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::super::{load, LoadOptions};
    use iolab_core::job::JobSpec;
    use iolab_core::schedule::ThinkAfter;
    use iolab_core::size::ByteSize;

    fn specs(text: &str) -> Vec<JobSpec> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.fio");
        std::fs::write(&path, text).unwrap();
        let target = dir.path().join("t.bin");
        let opts = LoadOptions {
            lenient: false,
            target: Some(&target),
        };
        match load(&path, &opts) {
            Ok(t) => t.file.specs,
            Err(e) => panic!("{e:#}"),
        }
    }

    #[test]
    fn thinktime_becomes_pauses_in_seconds() {
        let s = &specs(
            "[a]\nsize=1m\nthinktime=2000\nthinktime_blocks=4\nthinktime_spin=500\n\
             thinktime_blocks_type=issue\nnumber_ios=1000\n",
        )[0];
        assert_eq!(s.think_s, Some(0.002));
        assert_eq!(s.think_spin_s, Some(0.0005));
        assert_eq!(s.think_blocks, Some(4));
        assert_eq!(s.think_after, Some(ThinkAfter::Issue));
        assert_eq!(s.ios_limit, Some(1000));
        assert!(s.clone().validate().unwrap().schedule.think.is_some());
    }

    #[test]
    fn flows_and_numa_placement_become_job_keys() {
        let s = specs(
            "[global]\nsize=1m\nflow_sleep=1000\n[w]\nflow=1\nnuma_cpu_nodes=0\n\
             numa_mem_policy=bind:0\n[r]\nflow=8\nflow_id=2\n",
        );
        assert_eq!(
            (s[0].flow, s[0].flow_id, s[0].flow_sleep_s),
            (Some(1), None, Some(0.001))
        );
        assert_eq!((s[1].flow, s[1].flow_id), (Some(8), Some(2)));
        assert_eq!(s[0].cpu_nodes.as_deref(), Some("0"));
        assert_eq!(s[0].mem_policy.as_deref(), Some("bind:0"));
    }

    #[test]
    fn allowed_cpus_and_their_policy_become_job_keys() {
        let s =
            specs("[a]\nsize=1m\ncpus_allowed=0-1,3\ncpus_allowed_policy=split\n[b]\nsize=1m\n");
        assert_eq!(s[0].cpus.as_deref(), Some("0-1,3"));
        assert_eq!(s[0].cpus_policy.as_deref(), Some("split"));
        assert!(s[0].clone().validate().unwrap().schedule.cpus_split);
        assert_eq!(
            (s[1].cpus.as_deref(), s[1].cpus_policy.as_deref()),
            (None, None)
        );
    }

    #[test]
    fn caps_per_direction_become_the_total_that_keeps_each() {
        // 50/50: reads and writes each at 300 B/s is 600 B/s in all; each of 3 clones has
        // its own caps, iolab's threads share the job's.
        let s = &specs("[a]\nrw=randrw\nsize=1m\nrate=300,300,300\nnumjobs=3\n")[0];
        assert_eq!(s.rate_bytes_per_s, Some(ByteSize(1800)));
        // 75 % reads capped at 300 IOPS: 400 in all, leaving writes (cap 1000) at 100.
        let s = &specs("[a]\nrw=randrw\nrwmixread=75\nsize=1m\nrate_iops=300,1000\n")[0];
        assert_eq!(s.rate_iops, Some(400.0));
        let s = &specs("[a]\nrw=read\nsize=1m\nrate=1m,5m\n")[0];
        assert_eq!(s.rate_bytes_per_s, Some(ByteSize(1 << 20)));
    }
}
