//! A run of many ranks (under MPI): a line per host (its ranks, what they moved over every job,
//! and its rate), the ranks' start skew and clock offsets, stonewalling and faults.

use crate::svg::{esc, fmt_value};
use iolab_core::result::{JobResult, RunResult};
use iolab_core::scale::ScaleSummary;
use std::fmt::Write;

/// I/Os, bytes and measured time of `jobs` together.
fn totals<'a>(jobs: impl Iterator<Item = &'a JobResult>) -> (u64, u64, u64) {
    jobs.fold((0, 0, 0), |(ios, bytes, ns), j| {
        (
            ios + j.read.ios + j.write.ios,
            bytes + j.read.bytes + j.write.bytes,
            ns + j.measured_ns,
        )
    })
}

/// The per-host table of `r`, if it ran on many ranks.
pub(super) fn hosts_table(out: &mut String, r: &RunResult) {
    let Some(s) = &r.scale else { return };
    let _ = write!(
        out,
        "<table class=\"hosts\"><tr><th class=\"l\">host</th><th class=\"l\">ranks</th>\
         <th>I/Os</th><th>MB</th><th>MB/s</th></tr>"
    );
    let mut row = |who: &str, ranks: String, (ios, bytes, ns): (u64, u64, u64)| {
        let rate = if ns > 0 {
            fmt_value(bytes as f64 / 1e6 / (ns as f64 / 1e9))
        } else {
            "-".into()
        };
        let _ = write!(
            out,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td>{ios}</td><td>{}</td>\
             <td>{rate}</td></tr>",
            esc(who),
            esc(&ranks),
            fmt_value(bytes as f64 / 1e6)
        );
    };
    for h in &s.hosts {
        let ranks: Vec<String> = h.ranks.iter().map(u32::to_string).collect();
        row(&h.host, ranks.join(", "), totals(h.jobs.iter()));
    }
    row("all", format!("{} ranks", s.ranks), totals(r.jobs.iter()));
    out.push_str("</table>\n");
    let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&summary(s)));
}

/// The ranks' start, clocks, stonewalling and faults in a sentence or two.
fn summary(s: &ScaleSummary) -> String {
    let worst = s
        .rank_info
        .iter()
        .map(|r| r.clock_offset_ns.unsigned_abs())
        .max()
        .unwrap_or(0);
    let mut text = format!(
        "{} ranks under {} ({}): rates are each host's bytes over the jobs' measured time; \
         the ranks started each job within {:.3} ms of each other (clock offsets to rank 0 up \
         to {:.3} ms, removed)",
        s.ranks,
        s.launcher,
        s.share,
        s.start_skew_ns as f64 / 1e6,
        worst as f64 / 1e6
    );
    if s.stonewall {
        text.push_str("; stonewalled: every rank stopped when the first finished");
    }
    for f in &s.faults {
        let _ = write!(text, "; rank {} on {}: {}", f.rank, f.host, f.reason);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::JobSpec;
    use iolab_core::result::{DirectionResult, HostInfo, TargetInfo, ToolInfo, SCHEMA_VERSION};
    use iolab_core::scale::{HostJobs, RankFault};

    fn job(ios: u64) -> JobResult {
        JobResult {
            name: "j".into(),
            measured_ns: 2_000_000_000,
            read: DirectionResult {
                ios,
                bytes: ios * 4096,
                ..DirectionResult::default()
            },
            ..JobResult::unmeasured(JobSpec::default().validate().unwrap())
        }
    }

    fn result(jobs: Vec<JobResult>) -> RunResult {
        RunResult {
            schema_version: SCHEMA_VERSION,
            tool: ToolInfo {
                name: "iolab".into(),
                version: "0.1.0".into(),
            },
            kind: "run".into(),
            started_unix_s: 0.0,
            complete: true,
            incomplete_reason: None,
            host: HostInfo::default(),
            target: TargetInfo::default(),
            notes: Vec::new(),
            jobs,
            suite: None,
            replay: None,
            scale: None,
        }
    }

    #[test]
    fn a_line_per_host_and_the_ranks_faults_are_said() {
        let scale = ScaleSummary {
            launcher: "mpi".into(),
            ranks: 3,
            share: "own target".into(),
            hosts: vec![
                HostJobs {
                    host: "node-a".into(),
                    ranks: vec![0, 1],
                    jobs: vec![job(2000)],
                },
                HostJobs {
                    host: "node-b".into(),
                    ranks: vec![2],
                    jobs: vec![job(1000)],
                },
            ],
            faults: vec![RankFault {
                rank: 2,
                host: "node-b".into(),
                reason: "EIO".into(),
            }],
            ..ScaleSummary::default()
        };
        let mut out = String::new();
        let mut r = result(vec![job(3000)]);
        hosts_table(&mut out, &r);
        assert!(out.is_empty(), "{out}");
        r.scale = Some(scale);
        hosts_table(&mut out, &r);
        let line = |host: &str, ranks: &str, ios: u64| {
            format!("<td class=\"l\">{host}</td><td class=\"l\">{ranks}</td><td>{ios}</td>")
        };
        assert!(out.contains(&line("node-a", "0, 1", 2000)), "{out}");
        assert!(out.contains(&line("node-b", "2", 1000)), "{out}");
        assert!(out.contains(&line("all", "3 ranks", 3000)), "{out}");
        assert!(out.contains("rank 2 on node-b: EIO"), "{out}");
    }
}
