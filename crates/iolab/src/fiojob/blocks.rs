//! Block sizes of a fio job: `bs`, `bsrange`, `bssplit` (each with fio's separate
//! `READ,WRITE` values), `blockalign`, and the queue: `iodepth`, `numjobs`.

use super::translate::Tr;
use super::units;
use iolab_core::size::{format_size, ByteSize};
use iolab_engine::open::EngineChoice;

/// One `bssplit` list in fio's units, written in iolab's (where `4kb` is 4000 bytes).
fn split_in_iolab_units(tr: &mut Tr, key: &str, text: &str) -> Option<String> {
    let mut parts = Vec::new();
    for part in text.split(':').filter(|p| !p.trim().is_empty()) {
        let (size, weight) = part.split_once('/').unwrap_or((part, ""));
        match units::size(size, tr.o.kb_base) {
            Ok(b) => parts.push(format!("{}/{}", format_size(b), weight.trim())),
            Err(e) => {
                tr.problem(key, e);
                return None;
            }
        }
    }
    Some(parts.join(":"))
}

/// fio's `bsrange` list (`4k-16k`) as a split: every multiple of the smallest size, equally
/// likely, as fio draws them.
fn range_as_split(tr: &mut Tr, text: &str) -> Option<String> {
    let (lo, hi) = text.split_once(['-', ':']).unwrap_or((text, text));
    let (lo, hi) = match (units::size(lo, tr.o.kb_base), units::size(hi, tr.o.kb_base)) {
        (Ok(lo), Ok(hi)) if lo.min(hi) > 0 => (lo.min(hi), lo.max(hi)),
        (Err(e), _) | (_, Err(e)) => {
            tr.problem("bsrange", e);
            return None;
        }
        _ => {
            tr.problem("bsrange", "a block size of 0");
            return None;
        }
    };
    let count = hi / lo;
    if count > 256 {
        tr.problem(
            "bsrange",
            format!(
                "{count} sizes between {} and {}: iolab takes at most 256 sizes in a split; \
                 narrow the range",
                format_size(lo),
                format_size(hi)
            ),
        );
        return None;
    }
    Some(
        (1..=count)
            .map(|k| format!("{}/1", format_size(k * lo)))
            .collect::<Vec<_>>()
            .join(":"),
    )
}

/// `key`'s value in each of fio's comma-separated parts (reads, writes, trims: the last has
/// no use here), each through `f`; a blank part stays blank.
fn per_direction(
    tr: &mut Tr,
    key: &str,
    f: &dyn Fn(&mut Tr, &str) -> Option<String>,
) -> Option<Vec<String>> {
    let text = tr.o.value(key)?.to_string();
    let mut out = Vec::new();
    for p in text.split(',').map(str::trim).take(2) {
        out.push(if p.is_empty() {
            String::new()
        } else {
            f(tr, p)?
        });
    }
    Some(out)
}

/// `bs`, `bsrange`, `bssplit` (each with fio's separate `READ,WRITE` values), `blockalign`,
/// `iodepth` and `numjobs`.
pub(super) fn blocks(tr: &mut Tr, reads: bool, writes: bool) {
    let split = if tr.o.get("bssplit").is_some() {
        let parts = per_direction(tr, "bssplit", &|tr, p| {
            split_in_iolab_units(tr, "bssplit", p)
        });
        parts.map(|p| ("bssplit", p))
    } else if tr.o.get("bsrange").is_some() {
        let parts = per_direction(tr, "bsrange", &range_as_split);
        parts.map(|p| ("bsrange", p))
    } else if tr.o.get("bs").is_some() {
        let parts = per_direction(tr, "bs", &|tr, p| match units::size(p, tr.o.kb_base) {
            Ok(b) => Some(format_size(b)),
            Err(e) => {
                tr.problem("bs", e);
                None
            }
        });
        parts.map(|p| ("bs", p))
    } else {
        None
    };
    if let Some((from, parts)) = split {
        // Only the directions the job issues matter; one value for both is the plain form.
        let (read, write) = match parts.as_slice() {
            [one] => (one.clone(), one.clone()),
            [r, w] => (r.clone(), if w.is_empty() { r.clone() } else { w.clone() }),
            _ => (String::new(), String::new()),
        };
        let (read, write) = match (reads, writes) {
            (true, false) => (read.clone(), read),
            (false, true) => (write.clone(), write),
            _ => (read, write),
        };
        if from == "bs" && read == write && !read.is_empty() {
            tr.job.spec.block_size = read.parse().ok();
            tr.from("block_size", "bs");
        } else if !(read.is_empty() && write.is_empty()) {
            let whole = |s: &str| {
                if from == "bs" && !s.is_empty() {
                    format!("{s}/100")
                } else {
                    s.to_string()
                }
            };
            let text = if read == write {
                whole(&read)
            } else {
                format!("{},{}", whole(&read), whole(&write))
            };
            tr.job.spec.bssplit = Some(text);
            tr.from("bssplit", from);
            if from == "bsrange" {
                tr.note(
                    "bsrange",
                    "every multiple of the smallest size, equally likely, as fio draws them",
                );
            }
        }
    }
    if let Some(align) = tr.one_value("blockalign", reads, writes) {
        let smallest = match (&tr.job.spec.bssplit, tr.job.spec.block_size) {
            (Some(s), _) => iolab_core::job::parse_bssplit_rw(s)
                .ok()
                .and_then(|(r, w)| r.iter().chain(w.iter()).flatten().map(|s| s.bytes).min()),
            (None, Some(b)) => Some(b.0),
            (None, None) => Some(4096),
        };
        match units::size(&align, tr.o.kb_base) {
            Ok(a) if Some(a) == smallest => {}
            Ok(a) => {
                tr.job.spec.block_align = Some(ByteSize(a));
                tr.from("block_align", "blockalign");
            }
            Err(e) => tr.problem("blockalign", e),
        }
    }
    if let Some(depth) = tr.number::<u32>("iodepth") {
        if depth == 0 {
            // fio refuses it whatever the engine (its minimum is 1); a synchronous engine here
            // would otherwise run one I/O in flight without a word.
            tr.problem("iodepth", "0 is below fio's minimum of 1; give 1 or more");
        } else if tr.job.engine.0 == EngineChoice::Psync {
            if depth > 1 {
                tr.note(
                    "iodepth",
                    "no effect with a synchronous ioengine (one I/O in flight per job), as in fio",
                );
            }
        } else {
            tr.job.spec.queue_depth = Some(depth);
            tr.from("queue_depth", "iodepth");
        }
    }
    if let Some(n) = tr.number::<u32>("numjobs") {
        if n > 1 {
            tr.job.spec.threads = Some(n);
            tr.from("threads", "numjobs");
        }
    }
}
