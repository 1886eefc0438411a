//! When a job's I/O runs beside other jobs' and how it is paced from within: jobs that start
//! together (fio's jobs without `stonewall`), `wait_for`, reporting groups, a job whose end
//! stops others (`exitall`/`exit_what`), pauses between I/Os (`thinktime`), progress shared in
//! proportion between jobs (`flow`), and the NUMA nodes a job's threads and buffers live on.

use crate::job::{JobError, JobSpec};
use serde::{Deserialize, Serialize};

/// Which other jobs a job's end stops (fio's `exitall` with `exit_what`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EndsOthers {
    /// The jobs of its reporting group (`group`).
    Group,
    /// Every job running at the time; the next jobs in turn still run (fio's `stonewall`).
    Running,
    /// Every job, also those not started yet.
    All,
}

/// What counts towards the I/Os between two pauses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThinkAfter {
    /// Completed I/Os (fio's default).
    #[default]
    Complete,
    /// Issued I/Os.
    Issue,
}

/// A pause in each thread after every `blocks` I/Os: the thread lets its I/Os in flight
/// complete, then spins for `spin_ns` and sleeps for the rest of `pause_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Think {
    /// The whole pause.
    pub pause_ns: u64,
    /// Its part spent busy (CPU), at its start.
    pub spin_ns: u64,
    /// I/Os between pauses.
    pub blocks: u32,
    /// Whether issued or completed I/Os count.
    pub after: ThinkAfter,
}

/// A job's share of the I/Os of the jobs with the same flow `id` that run at the same time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    /// The flow the job belongs to.
    pub id: u32,
    /// Its weight: jobs of one flow issue I/Os in proportion to their weights.
    pub weight: u32,
    /// How long a job ahead of its share waits before it looks again (0: it retries at once).
    pub sleep_ns: u64,
}

/// Everything of [`JobSpec`]'s scheduling keys, checked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// Starts at the same time as the job before it, instead of after it ends.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub together: bool,
    /// Starts when this job (one before it) ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for: Option<String>,
    /// Its reporting group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
    /// Its result is merged with those of its group's other jobs into one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub group_reporting: bool,
    /// The jobs its end stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ends_others: Option<EndsOthers>,
    /// Pauses between I/Os.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<Think>,
    /// Its share of a flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
    /// NUMA nodes whose CPUs its threads run on (`0`, `0-1`, `0,2`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_nodes: Option<String>,
    /// CPUs its threads run on (`1`, `0-3,6`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// Each thread on one CPU of `cpus`, in turn, rather than all on any of them.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpus_split: bool,
    /// Where its buffers live: `default`, `local`, `prefer:N`, `bind:NODES`,
    /// `interleave:NODES`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem_policy: Option<String>,
    /// The engine it runs on where it differs from the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
}

impl Schedule {
    /// Whether nothing is set (left out of results).
    pub fn is_default(&self) -> bool {
        *self == Schedule::default()
    }

    /// Checks `spec`'s scheduling keys.
    pub fn of(spec: &JobSpec, job: &str) -> Result<Schedule, JobError> {
        let fail = |key: &'static str, message: String| JobError {
            job: job.to_string(),
            key,
            message,
        };
        let seconds = |key: &'static str, v: Option<f64>| -> Result<u64, JobError> {
            match v {
                None => Ok(0),
                Some(s) if s.is_finite() && (0.0..=3600.0).contains(&s) => Ok((s * 1e9) as u64),
                Some(s) => Err(fail(
                    key,
                    format!("{s} must be zero or more seconds, at most an hour"),
                )),
            }
        };
        let pause_ns = seconds("think_s", spec.think_s)?;
        let spin_ns = seconds("think_spin_s", spec.think_spin_s)?;
        let think = if pause_ns > 0 {
            let blocks = spec.think_blocks.unwrap_or(1);
            if blocks == 0 {
                return Err(fail(
                    "think_blocks",
                    "0 I/Os between pauses; give 1 or more".into(),
                ));
            }
            Some(Think {
                pause_ns,
                spin_ns: spin_ns.min(pause_ns),
                blocks,
                after: spec.think_after.unwrap_or_default(),
            })
        } else {
            for (key, set) in [
                ("think_blocks", spec.think_blocks.is_some()),
                ("think_spin_s", spin_ns > 0),
                ("think_after", spec.think_after.is_some()),
            ] {
                if set {
                    return Err(fail(
                        key,
                        "only pauses between I/Os take it: set think_s, or drop it".into(),
                    ));
                }
            }
            None
        };
        let flow_sleep_ns = seconds("flow_sleep_s", spec.flow_sleep_s)?;
        let flow = match spec.flow {
            Some(0) => {
                return Err(fail(
                    "flow",
                    "a weight of 0 would never issue; give 1 or more".into(),
                ))
            }
            Some(weight) => Some(Flow {
                id: spec.flow_id.unwrap_or(0),
                weight,
                sleep_ns: flow_sleep_ns,
            }),
            None if spec.flow_id.is_some() || spec.flow_sleep_s.is_some() => {
                let key = if spec.flow_id.is_some() {
                    "flow_id"
                } else {
                    "flow_sleep_s"
                };
                return Err(fail(
                    key,
                    "only a job in a flow takes it: set flow (its weight), or drop it".into(),
                ));
            }
            None => None,
        };
        if let Some(w) = spec.wait_for.as_deref().filter(|w| w.trim().is_empty()) {
            return Err(fail(
                "wait_for",
                format!("'{w}' names no job; give the name of a job before this one"),
            ));
        }
        if let Some(e) = spec.engine.as_deref() {
            if !matches!(e, "auto" | "io_uring" | "psync" | "psync-per-slot") {
                return Err(fail(
                    "engine",
                    format!("unknown engine '{e}': use auto, io_uring, psync or psync-per-slot"),
                ));
            }
        }
        if let Some(nodes) = &spec.cpu_nodes {
            parse_nodes(nodes).map_err(|e| fail("cpu_nodes", e))?;
        }
        if let Some(cpus) = &spec.cpus {
            parse_cpus(cpus).map_err(|e| fail("cpus", e))?;
            if spec.cpu_nodes.is_some() {
                return Err(fail(
                    "cpus",
                    "cpus and cpu_nodes both say where the job's threads run: give one".into(),
                ));
            }
        }
        let cpus_split = match spec.cpus_policy.as_deref().map(str::trim) {
            None | Some("shared") => false,
            Some("split") => true,
            Some(other) => {
                return Err(fail(
                    "cpus_policy",
                    format!("'{other}' is not a policy: use shared or split"),
                ))
            }
        };
        if spec.cpus_policy.is_some() && spec.cpus.is_none() {
            return Err(fail(
                "cpus_policy",
                "it says how the job's threads share the CPUs of `cpus`: give cpus too".into(),
            ));
        }
        if let Some(policy) = &spec.mem_policy {
            MemPolicy::parse(policy).map_err(|e| fail("mem_policy", e))?;
        }
        Ok(Schedule {
            together: spec.together.unwrap_or(false),
            wait_for: spec.wait_for.clone(),
            group: spec.group,
            group_reporting: spec.group_reporting.unwrap_or(false),
            ends_others: spec.ends_others,
            think,
            flow,
            cpu_nodes: spec.cpu_nodes.clone(),
            cpus: spec.cpus.clone(),
            cpus_split,
            mem_policy: spec.mem_policy.clone(),
            engine: spec.engine.clone(),
        })
    }
}

/// A list of NUMA nodes as fio and numactl write it: `0`, `0-3`, `0,2-3`.
pub fn parse_nodes(text: &str) -> Result<Vec<u32>, String> {
    parse_list(text, "NUMA nodes (0, 0-1, 0,2)")
}

/// A list of CPUs as the kernel writes them (`1`, `0-3,6`), sorted, each once.
pub fn parse_cpus(text: &str) -> Result<Vec<u32>, String> {
    parse_list(text, "CPUs (1, 0-3, 0-3,6)")
}

/// Numbers and ranges of them, comma-separated, each below 1024 (the kernel's CPU_SETSIZE).
fn parse_list(text: &str, what: &str) -> Result<Vec<u32>, String> {
    let bad = || format!("'{text}' is not a list of {what}");
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let lo: u32 = lo.parse().map_err(|_| bad())?;
        let hi: u32 = hi.parse().map_err(|_| bad())?;
        if hi < lo || hi > 1023 {
            return Err(bad());
        }
        out.extend(lo..=hi);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Where a job's buffers are allocated (fio's `numa_mem_policy`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MemPolicy {
    /// The system's default.
    Default,
    /// The node of the CPU that allocates.
    Local,
    /// This node first.
    Prefer(u32),
    /// Only these nodes.
    Bind(Vec<u32>),
    /// Spread over these nodes.
    Interleave(Vec<u32>),
}

impl MemPolicy {
    /// Parses `default`, `local`, `prefer:N`, `bind:NODES` or `interleave:NODES`.
    pub fn parse(text: &str) -> Result<MemPolicy, String> {
        let (mode, nodes) = match text.split_once(':') {
            Some((m, n)) => (m.trim(), Some(n)),
            None => (text.trim(), None),
        };
        let nodes = |what: &str| -> Result<Vec<u32>, String> {
            nodes
                .ok_or_else(|| format!("{what} needs nodes: {what}:0 or {what}:0-1"))
                .and_then(parse_nodes)
        };
        Ok(match mode {
            "default" => MemPolicy::Default,
            "local" => MemPolicy::Local,
            "prefer" => {
                let n = nodes("prefer")?;
                if n.len() != 1 {
                    return Err("prefer takes one node (prefer:0)".into());
                }
                MemPolicy::Prefer(n[0])
            }
            "bind" => MemPolicy::Bind(nodes("bind")?),
            "interleave" => MemPolicy::Interleave(nodes("interleave")?),
            other => {
                return Err(format!(
                    "'{other}' is not a memory policy: default, local, prefer:N, bind:NODES or \
                     interleave:NODES"
                ))
            }
        })
    }

    /// The nodes the policy names.
    pub fn nodes(&self) -> Vec<u32> {
        match self {
            MemPolicy::Default | MemPolicy::Local => Vec::new(),
            MemPolicy::Prefer(n) => vec![*n],
            MemPolicy::Bind(n) | MemPolicy::Interleave(n) => n.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(text: &str) -> JobSpec {
        JobSpec::from_toml(text, "t.toml").unwrap()
    }

    #[test]
    fn think_flow_and_numa_keys_are_checked() {
        let s = Schedule::of(
            &spec("think_s = 0.002\nthink_blocks = 4\nthink_after = \"issue\""),
            "j",
        )
        .unwrap();
        let t = s.think.unwrap();
        assert_eq!(
            (t.pause_ns, t.blocks, t.after),
            (2_000_000, 4, ThinkAfter::Issue)
        );
        let e = Schedule::of(&spec("think_blocks = 4"), "j").unwrap_err();
        assert_eq!(e.key, "think_blocks");
        let e = Schedule::of(&spec("flow = 0"), "j").unwrap_err();
        assert_eq!(e.key, "flow");
        let f = Schedule::of(&spec("flow = 8\nflow_sleep_s = 0.001"), "j")
            .unwrap()
            .flow
            .unwrap();
        assert_eq!((f.id, f.weight, f.sleep_ns), (0, 8, 1_000_000));
        assert_eq!(parse_nodes("0,2-3").unwrap(), [0, 2, 3]);
        assert!(parse_nodes("1-0").is_err());
        assert_eq!(
            MemPolicy::parse("interleave:0-1").unwrap(),
            MemPolicy::Interleave(vec![0, 1])
        );
        assert!(MemPolicy::parse("bind").is_err());
        assert!(MemPolicy::parse("prefer:0-1").is_err());
        let e = Schedule::of(&spec("mem_policy = \"spread\""), "j").unwrap_err();
        assert_eq!(e.key, "mem_policy");
    }

    #[test]
    fn cpus_and_their_policy_are_checked() {
        assert_eq!(parse_cpus("0-3,6,2").unwrap(), [0, 1, 2, 3, 6]);
        let s = Schedule::of(&spec("cpus = \"1\"\ncpus_policy = \"split\""), "j").unwrap();
        assert_eq!((s.cpus.as_deref(), s.cpus_split), (Some("1"), true));
        let s = Schedule::of(&spec("cpus = \"0-1\"\ncpus_policy = \"shared\""), "j").unwrap();
        assert!(!s.cpus_split);
        let refused = |text: &str| Schedule::of(&spec(text), "j").unwrap_err();
        let e = refused("cpus = \"two\"");
        assert_eq!(e.key, "cpus");
        assert!(
            e.message.contains("'two' is not a list of CPUs"),
            "{}",
            e.message
        );
        assert!(refused("cpus = \"1024\"")
            .message
            .contains("not a list of CPUs"));
        let e = refused("cpus = \"0\"\ncpu_nodes = \"0\"");
        assert_eq!(e.key, "cpus");
        assert!(e.message.contains("give one"), "{}", e.message);
        let e = refused("cpus = \"0\"\ncpus_policy = \"spread\"");
        assert_eq!(
            (e.key, e.message.as_str()),
            (
                "cpus_policy",
                "'spread' is not a policy: use shared or split"
            )
        );
        assert_eq!(refused("cpus_policy = \"split\"").key, "cpus_policy");
    }
}
