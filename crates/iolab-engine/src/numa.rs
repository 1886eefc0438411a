//! Where a job's threads run and its buffers live (fio's `numa_cpu_nodes`, `cpus_allowed`,
//! `cpus_allowed_policy` and `numa_mem_policy`): the CPUs of NUMA nodes, read from sysfs, or
//! CPUs by number, and the memory policy set on each worker thread before it allocates its
//! buffers.

use crate::sys;
use iolab_core::job::Job;
use iolab_core::schedule::{parse_cpus, parse_nodes, MemPolicy};
use std::io;
use std::path::Path;

/// Where the kernel lists the NUMA nodes and their CPUs.
const NODES: &str = "/sys/devices/system/node";

/// A job's placement, resolved on this machine.
#[derive(Debug)]
pub struct Placement {
    cpus: Option<Vec<usize>>,
    /// Each thread on one of `cpus` in turn (fio's `cpus_allowed_policy=split`).
    split: bool,
    mem: Option<MemPolicy>,
}

impl Placement {
    /// The job's placement, if it asks for one; an error names a node this machine lacks.
    pub fn of(job: &Job) -> io::Result<Option<Placement>> {
        Self::on(job, Path::new(NODES))
    }

    /// [`Placement::of`], with the nodes listed under `root`.
    fn on(job: &Job, root: &Path) -> io::Result<Option<Placement>> {
        let s = &job.schedule;
        if s.cpu_nodes.is_none() && s.cpus.is_none() && s.mem_policy.is_none() {
            return Ok(None);
        }
        let invalid = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
        let cpus = match (&s.cpu_nodes, &s.cpus) {
            (Some(text), _) => {
                let mut cpus = Vec::new();
                for node in parse_nodes(text).map_err(invalid)? {
                    cpus.extend(node_cpus(root, node, "cpu_nodes")?);
                }
                Some(cpus)
            }
            (None, Some(text)) => Some(usable_cpus(
                parse_cpus(text).map_err(invalid)?,
                &sys::allowed_cpus()?,
            )?),
            (None, None) => None,
        };
        let mem = match &s.mem_policy {
            Some(text) => {
                let policy = MemPolicy::parse(text).map_err(invalid)?;
                for node in policy.nodes() {
                    node_cpus(root, node, "mem_policy")?;
                }
                Some(policy)
            }
            None => None,
        };
        Ok(Some(Placement {
            cpus,
            split: s.cpus_split,
            mem,
        }))
    }

    /// Applies the placement to the calling thread, the job's `thread`-th (from 0).
    pub fn apply(&self, thread: usize) -> io::Result<()> {
        if let Some(all) = &self.cpus {
            let one;
            let cpus = if self.split && !all.is_empty() {
                one = [all[thread % all.len()]];
                &one[..]
            } else {
                all
            };
            sys::set_thread_cpus(cpus)
                .map_err(|e| io::Error::new(e.kind(), format!("binding to CPUs {cpus:?}: {e}")))?;
        }
        if let Some(policy) = &self.mem {
            let mode = match policy {
                MemPolicy::Default => sys::MPOL_DEFAULT,
                MemPolicy::Local => sys::MPOL_LOCAL,
                MemPolicy::Prefer(_) => sys::MPOL_PREFERRED,
                MemPolicy::Bind(_) => sys::MPOL_BIND,
                MemPolicy::Interleave(_) => sys::MPOL_INTERLEAVE,
            };
            sys::set_thread_mempolicy(mode, &policy.nodes())
                .map_err(|e| io::Error::new(e.kind(), format!("memory policy {policy:?}: {e}")))?;
        }
        Ok(())
    }
}

/// The CPUs of `node`, or an error naming the nodes this machine has.
fn node_cpus(root: &Path, node: u32, key: &str) -> io::Result<Vec<usize>> {
    let list = root.join(format!("node{node}")).join("cpulist");
    match std::fs::read_to_string(&list) {
        // A node with memory only lists no CPUs.
        Ok(text) if text.trim().is_empty() => Ok(Vec::new()),
        Ok(text) => parse_cpus(text.trim())
            .map(|cpus| cpus.into_iter().map(|c| c as usize).collect())
            .map_err(|e| io::Error::other(format!("{}: {e}", list.display()))),
        Err(_) => {
            let mut have: Vec<u32> = std::fs::read_dir(root)
                .map(|d| {
                    d.filter_map(|e| {
                        e.ok()?
                            .file_name()
                            .to_str()?
                            .strip_prefix("node")?
                            .parse()
                            .ok()
                    })
                    .collect()
                })
                .unwrap_or_default();
            have.sort_unstable();
            Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!(
                    "{key}: NUMA node {node} does not exist on this machine (it has node{} \
                     {}); name nodes it has (numactl --hardware lists them)",
                    if have.len() == 1 { "" } else { "s" },
                    have.iter()
                        .map(u32::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ))
        }
    }
}

/// `wanted` (the job's `cpus`), or an error naming those this process may not run on and those
/// it may.
fn usable_cpus(wanted: Vec<u32>, allowed: &[usize]) -> io::Result<Vec<usize>> {
    let wanted: Vec<usize> = wanted.into_iter().map(|c| c as usize).collect();
    let missing: Vec<String> = wanted
        .iter()
        .filter(|c| !allowed.contains(c))
        .map(usize::to_string)
        .collect();
    if missing.is_empty() {
        return Ok(wanted);
    }
    let have: Vec<String> = allowed.iter().map(usize::to_string).collect();
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "cpus: CPU{} {} {} not among those this process may run on ({}); name CPUs from \
             that list (nproc and taskset -p $$ show it)",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", "),
            if missing.len() == 1 { "is" } else { "are" },
            have.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::JobSpec;

    fn job(toml: &str) -> Job {
        JobSpec::from_toml(toml, "t.toml")
            .unwrap()
            .validate()
            .unwrap()
    }

    #[test]
    fn nodes_resolve_to_their_cpus_and_a_missing_node_is_named() {
        let dir = tempfile::tempdir().unwrap();
        for (n, cpus) in [(0, "0-1,4\n"), (1, "2-3\n")] {
            let d = dir.path().join(format!("node{n}"));
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("cpulist"), cpus).unwrap();
        }
        let p = Placement::on(&job("cpu_nodes = \"0-1\""), dir.path())
            .unwrap()
            .unwrap();
        assert_eq!(p.cpus.unwrap(), [0, 1, 4, 2, 3]);
        let e = Placement::on(&job("mem_policy = \"bind:2\""), dir.path()).unwrap_err();
        assert!(
            e.to_string().contains(
                "mem_policy: NUMA node 2 does not exist on this machine (it has nodes 0, 1)"
            ),
            "{e}"
        );
        assert!(Placement::on(&job("size = \"1m\""), dir.path())
            .unwrap()
            .is_none());
    }

    #[test]
    fn node_zero_binds_this_thread() {
        let Ok(Some(p)) = Placement::of(&job("cpu_nodes = \"0\"\nmem_policy = \"bind:0\"")) else {
            println!("skipped: no NUMA node 0 listed in {NODES}");
            return;
        };
        // On a thread of its own, so the test's thread keeps its CPUs and memory policy.
        std::thread::spawn(move || p.apply(0))
            .join()
            .unwrap()
            .unwrap();
    }

    /// Where a thread the placement binds as the job's `thread`-th may run.
    fn bound(p: &std::sync::Arc<Placement>, thread: usize) -> Vec<usize> {
        let p = p.clone();
        std::thread::spawn(move || {
            p.apply(thread).unwrap();
            sys::allowed_cpus().unwrap()
        })
        .join()
        .unwrap()
    }

    #[test]
    fn cpus_bind_every_thread_to_all_of_them_or_split_them_in_turn() {
        let allowed = sys::allowed_cpus().unwrap();
        let list = |cpus: &[usize]| {
            cpus.iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(",")
        };
        let shared = Placement::of(&job(&format!("cpus = \"{}\"", list(&allowed))))
            .unwrap()
            .unwrap();
        let shared = std::sync::Arc::new(shared);
        assert_eq!(bound(&shared, 0), allowed);
        assert_eq!(bound(&shared, 5), allowed);
        if allowed.len() < 2 {
            println!("skipped the split: this process may run on one CPU only");
            return;
        }
        let two = &allowed[..2];
        let split = Placement::of(&job(&format!(
            "cpus = \"{}\"\ncpus_policy = \"split\"",
            list(two)
        )))
        .unwrap()
        .unwrap();
        let split = std::sync::Arc::new(split);
        assert_eq!(bound(&split, 0), [two[0]]);
        assert_eq!(bound(&split, 1), [two[1]]);
        assert_eq!(bound(&split, 2), [two[0]]);
    }

    #[test]
    fn cpus_this_process_may_not_use_are_named_with_those_it_may() {
        let allowed = sys::allowed_cpus().unwrap();
        let e = Placement::of(&job("cpus = \"1023\"")).unwrap_err();
        let have: Vec<String> = allowed.iter().map(usize::to_string).collect();
        assert_eq!(
            e.to_string(),
            format!(
                "cpus: CPU 1023 is not among those this process may run on ({}); name CPUs \
                 from that list (nproc and taskset -p $$ show it)",
                have.join(", ")
            )
        );
    }
}
