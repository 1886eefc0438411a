//! The labels that tell overlaid results apart in a report's legends and tables.
//!
//! A label is `[tool: ]target[ @ host][ (start)]`, with only the parts that tell the results
//! apart beyond the target: the tool where fio's and iolab's results are overlaid, the host
//! where hosts differ (or the targets are alike), the start time where all else is alike. A long target path keeps
//! what distinguishes it: directories every result shares are shortened to `…`, the file name
//! is kept (legends cut a label at their width, and a path cut at its end lost exactly the part
//! where two results differed).

use iolab_core::result::RunResult;

/// Labels longer than this have their shared directories shortened.
const SHORT: usize = 24;

/// One label per result, in order; all different.
pub fn result_labels(results: &[RunResult]) -> Vec<String> {
    let all_alike =
        |f: &dyn Fn(&RunResult) -> String| results.windows(2).all(|w| f(&w[0]) == f(&w[1]));
    let tool = |r: &RunResult| format!("{} {}", r.tool.name, r.tool.version);
    let host = |r: &RunResult| {
        if r.host.hostname.is_empty() {
            "unknown host".to_string()
        } else {
            r.host.hostname.clone()
        }
    };
    let tools_differ = !all_alike(&tool);
    // One result keeps its host, as before; several show it where hosts differ, or where the
    // targets are alike (the label then says where they ran).
    let paths: Vec<String> = results.iter().map(|r| r.target.path.clone()).collect();
    let show_host = results.len() == 1
        || !all_alike(&host)
        || all_alike(&|r: &RunResult| r.target.path.clone());
    let paths = shorten_paths(&paths);
    let base: Vec<String> = results
        .iter()
        .zip(&paths)
        .map(|(r, p)| {
            let mut l = String::new();
            if tools_differ {
                l.push_str(&format!("{}: ", tool(r)));
            }
            l.push_str(p);
            if show_host {
                l.push_str(&format!(" @ {}", host(r)));
            }
            l
        })
        .collect();
    // Alike labels: the start time where it differs, else a number in front.
    let timed: Vec<String> = base
        .iter()
        .zip(results)
        .map(|(b, r)| {
            if base.iter().filter(|o| *o == b).count() > 1 {
                let alike_times = results
                    .iter()
                    .zip(&base)
                    .filter(|(o, ob)| *ob == b && o.started_unix_s == r.started_unix_s)
                    .count();
                if alike_times == 1 {
                    let t = iolab_core::time::UtcTime::from_unix(r.started_unix_s).readable();
                    return format!("{b} ({t})");
                }
            }
            b.clone()
        })
        .collect();
    timed
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if timed.iter().filter(|o| *o == b).count() > 1 {
                format!("#{} {b}", i + 1)
            } else {
                b.clone()
            }
        })
        .collect()
}

/// Paths with the directories they all share shortened to `…`, where they are long; the file
/// name is always kept. Paths that are all short, or a single path, are kept whole.
fn shorten_paths(paths: &[String]) -> Vec<String> {
    if paths.len() < 2 || paths.iter().all(|p| p.chars().count() <= SHORT) {
        return paths.to_vec();
    }
    let parts: Vec<Vec<&str>> = paths.iter().map(|p| p.split('/').collect()).collect();
    let shortest = parts.iter().map(Vec::len).min().unwrap_or(0);
    // Leading components all share (never the file name).
    let lead = (0..shortest.saturating_sub(1))
        .take_while(|&i| parts.iter().all(|p| p[i] == parts[0][i]))
        .count();
    // Trailing directories all share, before the file name.
    let trail = (1..shortest.saturating_sub(lead))
        .take_while(|&k| {
            let first = &parts[0];
            parts
                .iter()
                .all(|p| p[p.len() - 1 - k] == first[first.len() - 1 - k])
        })
        .count();
    parts
        .iter()
        .zip(paths)
        .map(|(p, whole)| {
            if p.len() < 2 {
                return whole.clone();
            }
            let name = p[p.len() - 1];
            let middle = &p[lead..p.len() - 1 - trail];
            let mut out = Vec::new();
            // An empty lead is the root's: `/dev/sdx` splits into "", "dev", "sdx".
            if lead > 0 && !(lead == 1 && p[0].is_empty()) {
                out.push("…");
            } else if lead == 1 {
                out.push("");
            }
            out.extend(middle.iter().copied());
            if trail > 0 {
                out.push("…");
            }
            out.push(name);
            out.join("/")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_paths_keep_the_part_that_differs() {
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            shorten_paths(&p(&[
                "/home/someone/benchmarks/nvme0/iolab/test.bin",
                "/home/someone/benchmarks/sata1/iolab/test.bin"
            ])),
            p(&["…/nvme0/…/test.bin", "…/sata1/…/test.bin"])
        );
        assert_eq!(
            shorten_paths(&p(&[
                "/home/someone/benchmarks/run-a.bin",
                "/home/someone/benchmarks/run-b.bin"
            ])),
            p(&["…/run-a.bin", "…/run-b.bin"])
        );
        // Short paths and a single one are kept whole.
        assert_eq!(
            shorten_paths(&p(&["/dev/sdx", "/dev/sdy"])),
            p(&["/dev/sdx", "/dev/sdy"])
        );
        let one = p(&["/home/someone/benchmarks/nvme0/iolab/test.bin"]);
        assert_eq!(shorten_paths(&one), one);
        // Paths that share nothing at the front keep it.
        assert_eq!(
            shorten_paths(&p(&["/mnt/fast/volume/test.bin", "sim:ssd750@z97"])),
            p(&["/mnt/fast/volume/test.bin", "sim:ssd750@z97"])
        );
    }
}
