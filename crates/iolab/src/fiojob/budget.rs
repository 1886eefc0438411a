//! Where and how much a fio job does: `size` (also in zones, `z`), `filesize`, `offset`,
//! `offset_increment`,
//! `io_size`, `number_ios`, `runtime`, `time_based`, `ramp_time`, `loops`, `startdelay`, and
//! `direct`/`buffered`.

use super::translate::{Context, Tr};
use iolab_core::size::ByteSize;

/// A size or offset as fio writes it: bytes, or a percentage of the target.
fn size_or_pct(tr: &mut Tr, key: &str, ctx: &Context) -> Option<u64> {
    let v = tr.o.value(key)?.trim().to_string();
    if let Some(n) = v.strip_suffix(['z', 'Z']) {
        return super::zbd::zones(tr, key, n);
    }
    let Some(pct) = v.strip_suffix('%') else {
        return tr.size(key);
    };
    let Ok(pct) = pct.trim().parse::<f64>() else {
        tr.problem(key, "not a percentage");
        return None;
    };
    let filename = tr.o.value("filename").map(str::to_string);
    match (ctx.target_size)(filename.as_deref()) {
        Some(total) => {
            let bytes = (total as f64 * pct / 100.0) as u64;
            let grain = tr.job.spec.block_size.map_or(4096, |b| b.0.max(1));
            Some(bytes / grain * grain)
        }
        None => {
            tr.problem(
                key,
                "a percentage of the target, whose size is not known before the run (no target \
                 that exists, or a model); give a size in bytes",
            );
            None
        }
    }
}

/// A size in bytes or in zones (`8z`).
fn size_or_zones(tr: &mut Tr, key: &str) -> Option<u64> {
    let v = tr.o.value(key)?.trim().to_string();
    match v.strip_suffix(['z', 'Z']) {
        Some(n) => super::zbd::zones(tr, key, n),
        None => tr.size(key),
    }
}

/// `size`, `filesize`, `offset`, `offset_increment`, `io_size`, `number_ios`, `runtime`,
/// `time_based`, `ramp_time`, `loops` and `startdelay`.
pub(super) fn span_and_budget(tr: &mut Tr, ctx: &Context) {
    let threads = u64::from(tr.job.spec.threads.unwrap_or(1));
    let per_clone = span(tr, ctx, threads);
    time_and_budget(tr, ctx, threads, per_clone);
    start_delay(tr);
    direct(tr);
}

/// `size`, `filesize`, `nrfiles`, `offset` and `offset_increment`: where the job's I/O goes.
/// Returns the bytes each clone does, where the job says (`io_size`, else its size).
fn span(tr: &mut Tr, ctx: &Context, threads: u64) -> Option<u64> {
    let size = size_or_pct(tr, "size", ctx);
    let filesize = size_or_zones(tr, "filesize");
    let span = match (size, filesize) {
        (s, Some(f)) => {
            tr.from("size", "filesize");
            if s.is_some_and(|s| s != f) {
                tr.note("size", "the I/O each clone does, over a file of filesize");
            }
            Some(f)
        }
        (Some(s), None) => {
            tr.from("size", "size");
            Some(s)
        }
        (None, None) => None,
    };
    let per_clone = size_or_zones(tr, "io_size").or(size).or(filesize);
    if let Some(n) = tr.number::<u64>("nrfiles").filter(|&n| n > 1) {
        tr.problem(
            "nrfiles",
            format!("{n} files per job: iolab measures one target file or device"),
        );
    }
    if let Some(offset) = size_or_pct(tr, "offset", ctx) {
        tr.job.spec.offset = Some(ByteSize(offset));
        tr.from("offset", "offset");
    }
    let mut span = span;
    if let Some(inc) = size_or_pct(tr, "offset_increment", ctx) {
        if threads > 1 {
            if Some(inc) == span {
                // Each clone at its own offset, spans side by side: iolab's zones.
                tr.job.spec.zones = Some(true);
                tr.from("zones", "offset_increment");
                span = span.map(|s| s * threads);
                tr.note(
                    "offset_increment",
                    "each thread in its own zone of size bytes",
                );
            } else if inc > 0 {
                // Each clone at its own offset, spans apart by the increment.
                tr.job.spec.thread_offset = Some(ByteSize(inc));
                tr.from("thread_offset", "offset_increment");
            }
        }
    }
    tr.job.spec.size = span.map(ByteSize);
    per_clone
}

/// `time_based`, `runtime`, `ramp_time`, `loops` and `number_ios`: how long or how much the job
/// runs (`per_clone`: the bytes each clone does, where the job says).
fn time_and_budget(tr: &mut Tr, ctx: &Context, threads: u64, per_clone: Option<u64>) {
    let time_based = tr.flag("time_based");
    let runtime = tr.seconds("runtime", 1.0).filter(|&r| r > 0.0);
    let ramp = tr.seconds("ramp_time", 1.0).filter(|&r| r > 0.0);
    let loops = tr.number::<u64>("loops").unwrap_or(1).max(1);
    if let Some(n) = tr.number::<u64>("number_ios") {
        tr.job.spec.ios_limit = Some(n * threads);
        tr.from("ios_limit", "number_ios");
    }
    if time_based {
        match runtime {
            Some(r) => {
                tr.job.spec.duration_s = Some(r);
                // fio counts the I/Os in flight at the end as they complete.
                tr.job.spec.drain_end = Some(true);
                tr.from("duration_s", "runtime");
            }
            None => tr.problem(
                "time_based",
                "time_based without a runtime runs until stopped; give runtime",
            ),
        }
        if tr.o.get("loops").is_some() {
            tr.note("loops", "no effect on a time_based job");
        }
    } else {
        if let Some(r) = runtime {
            tr.job.spec.duration_s = Some(r);
            tr.job.spec.drain_end = Some(true);
            tr.from("duration_s", "runtime");
        }
        byte_budget(tr, ctx, threads, per_clone, runtime, loops);
        if ramp.is_some() {
            tr.problem(
                "ramp_time",
                "a ramp in a job that is not time_based would spend its byte budget; add \
                 time_based, or drop ramp_time",
            );
        }
    }
    if let Some(r) = ramp.filter(|_| time_based) {
        tr.job.spec.ramp_s = Some(r);
        tr.from("ramp_s", "ramp_time");
    }
}

/// The byte budget of a job that is not time_based: fio's clones each do size (or io_size)
/// bytes, loops times.
fn byte_budget(
    tr: &mut Tr,
    ctx: &Context,
    threads: u64,
    per_clone: Option<u64>,
    runtime: Option<f64>,
    loops: u64,
) {
    // number_ios only ends a job sooner: the budget by size still holds.
    let needs_budget = runtime.is_some()
        || threads > 1
        || loops > 1
        || tr.o.get("io_size").is_some()
        || tr.o.get("number_ios").is_some();
    if !needs_budget {
        return;
    }
    let filename = tr.o.value("filename").map(str::to_string);
    let per_clone = per_clone.or_else(|| (ctx.target_size)(filename.as_deref()));
    match per_clone {
        Some(b) => {
            tr.job.spec.io_limit = Some(ByteSize(b * loops * threads));
            let from = if tr.o.get("io_size").is_some() {
                "io_size"
            } else {
                "size"
            };
            tr.from("io_limit", from);
        }
        None => tr.problem(
            if runtime.is_some() {
                "runtime"
            } else {
                "numjobs"
            },
            "the bytes each clone does are its size, which is not known before the run; \
             give size",
        ),
    }
}

/// `startdelay`: one delay for every clone.
fn start_delay(tr: &mut Tr) {
    if let Some(v) = tr.o.value("startdelay") {
        if v.contains(['-', ':']) {
            tr.problem(
                "startdelay",
                "a range of delays (one per clone) is not supported",
            );
        } else if let Some(d) = tr.seconds("startdelay", 1.0).filter(|&d| d > 0.0) {
            tr.job.spec.start_delay_s = Some(d);
            tr.from("start_delay_s", "startdelay");
        }
    }
}

/// `direct` and `buffered`.
fn direct(tr: &mut Tr) {
    let direct = tr.flag("direct") || (tr.o.get("buffered").is_some() && !tr.flag("buffered"));
    // fio's default is buffered I/O; iolab's is direct, so it is always said.
    tr.job.spec.direct = Some(direct);
    let from = if tr.o.get("direct").is_some() {
        "direct"
    } else {
        "buffered"
    };
    tr.from("direct", from);
}
