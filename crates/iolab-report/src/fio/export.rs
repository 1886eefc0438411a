//! iolab's result in fio 3.x's JSON layout (`--output-format=json`), for fio's tooling.
//!
//! What is written, and from what:
//! - `fio version` is `iolab-VERSION` (so nothing mistakes it for fio's own figures),
//!   `timestamp`/`timestamp_ms`/`time` the run's start, `global options` the target.
//! - one `jobs[]` entry per iolab job, `groupid` its position (iolab runs its jobs one after
//!   the other, as fio's `stonewall` groups), its threads reported together (fio's
//!   `group_reporting`); `job options` in fio's names and units (`rw`, `bs` or `bssplit`,
//!   `iodepth`, `numjobs`, `size`, `runtime`, …).
//! - `read`/`write`/`trim` with `io_bytes`, `io_kbytes`, `bw_bytes`, `bw` (KiB/s), `iops`,
//!   `runtime` (ms), `total_ios`, and `lat_ns` and `clat_ns` (min, max, mean, stddev, N, and
//!   fio's default percentiles, keyed as fio writes them: `99.990000`), with json+'s `bins`
//!   from iolab's histogram. iolab times an I/O from its submission, as fio's `lat`; for
//!   unpaced jobs `clat_ns` carries the same figures (iolab does not time the submission call
//!   apart, so there is no `slat_ns`). For paced jobs (rate limits) `lat_ns` is from each I/O's
//!   intended start and `clat_ns` the service time from submission (its five known
//!   percentiles only).
//! - `bw_min`/`bw_max`/`bw_mean`/`bw_dev`/`bw_samples` and the `iops_*` figures from iolab's
//!   per-interval series (fio samples every 500 ms; iolab every `series.interval_ms`).
//! - `job_runtime` (ms, measured time), `usr_cpu`/`sys_cpu` (percent of it; absent for a
//!   model, whose CPU is not modelled), `latency_ns`/`latency_us`/`latency_ms` (percent of all
//!   I/Os, from the histogram: within its 0.39 % bucket width of fio's edges).
//!
//! Left out, because iolab does not measure them: `slat_ns`, `ctx`, `majf`, `minf`,
//! `iodepth_level`/`_submit`/`_complete`, `disk_util`, `sync`, `short_ios`/`drop_ios` (always
//! 0 in iolab, written as 0).

use super::{percentile_key, FIO_PERCENTILES};
use iolab_core::hist::{bucket_bounds, bucket_of, SparseHistogram};
use iolab_core::job::{Access, Job};
use iolab_core::result::{DirectionResult, JobResult, LatencySummary, RunResult};
use serde_json::{json, Map, Value};

/// `result` as fio's JSON output.
pub fn to_fio_json(result: &RunResult) -> Value {
    let start_ms = (result.started_unix_s * 1000.0).round() as i64;
    let mut global = Map::new();
    global.insert("filename".into(), result.target.path.clone().into());
    global.insert("ioengine".into(), fio_engine(&result.target.engine).into());
    let jobs: Vec<Value> = result
        .jobs
        .iter()
        .enumerate()
        .map(|(i, j)| job_json(result, i, j))
        .collect();
    let mut root = Map::new();
    root.insert(
        "fio version".into(),
        format!("iolab-{}", result.tool.version).into(),
    );
    root.insert("timestamp".into(), (start_ms / 1000).into());
    root.insert("timestamp_ms".into(), start_ms.into());
    root.insert("time".into(), ctime(result.started_unix_s).into());
    root.insert("global options".into(), Value::Object(global));
    root.insert("jobs".into(), Value::Array(jobs));
    Value::Object(root)
}

/// `result` as fio's JSON text, its keys in fio's order (fio's own indentation is 2 spaces,
/// as serde's pretty form).
pub fn to_fio_json_text(result: &RunResult) -> String {
    // A `Value` always serialises.
    serde_json::to_string_pretty(&InFiosOrder(&to_fio_json(result))).unwrap_or_default() + "\n"
}

/// The keys of fio's JSON in the order fio writes them (objects of every level: the document,
/// a job, a direction, a latency, the job options); keys not listed follow, numbers (fio's
/// percentiles, bins and latency ranges) in rising order.
const FIO_KEY_ORDER: &[&str] = &[
    "fio version",
    "timestamp",
    "timestamp_ms",
    "time",
    "global options",
    "jobs",
    "jobname",
    "groupid",
    "error",
    "eta",
    "elapsed",
    "job options",
    "read",
    "write",
    "trim",
    "io_bytes",
    "io_kbytes",
    "bw_bytes",
    "bw",
    "iops",
    "runtime",
    "total_ios",
    "short_ios",
    "drop_ios",
    "slat_ns",
    "clat_ns",
    "lat_ns",
    "min",
    "max",
    "mean",
    "stddev",
    "N",
    "percentile",
    "bins",
    "bw_min",
    "bw_max",
    "bw_agg",
    "bw_mean",
    "bw_dev",
    "bw_samples",
    "iops_min",
    "iops_max",
    "iops_mean",
    "iops_stddev",
    "iops_samples",
    "job_runtime",
    "usr_cpu",
    "sys_cpu",
    "latency_ns",
    "latency_us",
    "latency_ms",
    "total_err",
    "first_error",
    "name",
    "filename",
    "ioengine",
    "rw",
    "bs",
    "bssplit",
    "iodepth",
    "numjobs",
    "group_reporting",
    "direct",
    "rwmixread",
    "percentage_random",
    "offset",
    "size",
    "io_size",
    "number_ios",
    "time_based",
    "ramp_time",
    "rate_iops",
    "rate",
    "buffer_compress_percentage",
    "dedupe_percentage",
    "offset_increment",
    "randseed",
    "norandommap",
];

/// Where a key goes among its object's keys.
fn key_rank(key: &str) -> (u8, usize, String) {
    if let Some(i) = FIO_KEY_ORDER.iter().position(|k| *k == key) {
        return (0, i, String::new());
    }
    // `99.990000`, `1024`, `>=2000` (after `2000`).
    let (number, above) = match key.strip_prefix(">=") {
        Some(n) => (n, 1),
        None => (key, 0),
    };
    match number.parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 => (1, (n * 1e6) as usize * 2 + above, String::new()),
        _ => (2, 0, key.to_string()),
    }
}

/// A JSON value serialised with each object's keys in fio's order (serde_json's map keeps
/// them sorted by name).
struct InFiosOrder<'a>(&'a Value);

impl serde::Serialize for InFiosOrder<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort_by_cached_key(|k| key_rank(k));
                let mut map = s.serialize_map(Some(keys.len()))?;
                for k in keys {
                    map.serialize_entry(k, &InFiosOrder(&m[k]))?;
                }
                map.end()
            }
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for v in a {
                    seq.serialize_element(&InFiosOrder(v))?;
                }
                seq.end()
            }
            other => other.serialize(s),
        }
    }
}

/// fio's `ioengine` for iolab's engine name (`io_uring (psync for paced jobs)` → `io_uring`).
fn fio_engine(engine: &str) -> String {
    let first = engine.split_whitespace().next().unwrap_or(engine);
    match first {
        "psync-per-slot" => "psync".into(),
        other => other.into(),
    }
}

/// C's `ctime` form, in UTC: `Fri Nov 27 08:00:00 2026`.
fn ctime(unix_s: f64) -> String {
    let t = iolab_core::time::UtcTime::from_unix(unix_s);
    let days = (unix_s / 86_400.0).floor() as i64;
    // 1970-01-01 was a Thursday.
    let weekday = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"][days.rem_euclid(7) as usize];
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ][(t.month.clamp(1, 12) - 1) as usize];
    format!(
        "{weekday} {month} {:2} {:02}:{:02}:{:02} {}",
        t.day, t.hour, t.minute, t.second, t.year
    )
}

fn job_json(result: &RunResult, index: usize, j: &JobResult) -> Value {
    let measured_ms = j.measured_ns / 1_000_000;
    let mut root = Map::new();
    root.insert("jobname".into(), j.name.clone().into());
    root.insert("groupid".into(), index.into());
    let error = j.errors.first().map_or(0, |e| e.errno);
    root.insert("error".into(), error.into());
    root.insert("eta".into(), 0.into());
    root.insert(
        "elapsed".into(),
        (((j.measured_ns + j.ramp_ns) as f64 / 1e9).round() as u64).into(),
    );
    root.insert(
        "job options".into(),
        Value::Object(job_options(result, &j.job)),
    );
    let paced = j.latency_from_intended_start;
    let s = &j.series;
    let read = (&s.read_bytes_per_s[..], &s.read_iops[..]);
    let write = (&s.write_bytes_per_s[..], &s.write_iops[..]);
    root.insert("read".into(), direction_json(&j.read, j, paced, read));
    root.insert("write".into(), direction_json(&j.write, j, paced, write));
    let none = DirectionResult::default();
    root.insert(
        "trim".into(),
        direction_json(
            j.trim.as_ref().unwrap_or(&none),
            j,
            paced && j.trim.is_some(),
            (&[][..], &s.trim_iops[..]),
        ),
    );
    root.insert("job_runtime".into(), measured_ms.into());
    if !result.target.modelled && j.measured_ns > 0 {
        let secs = j.measured_ns as f64 / 1e9;
        root.insert("usr_cpu".into(), json!(100.0 * j.cpu.user_s / secs));
        root.insert("sys_cpu".into(), json!(100.0 * j.cpu.system_s / secs));
    }
    let (ns, us, ms) = latency_buckets(&[&j.read.lat_histogram, &j.write.lat_histogram]);
    root.insert("latency_ns".into(), ns);
    root.insert("latency_us".into(), us);
    root.insert("latency_ms".into(), ms);
    if !j.errors.is_empty() {
        let total: u64 = j.errors.iter().map(|e| e.count).sum();
        root.insert("total_err".into(), total.into());
        root.insert("first_error".into(), error.into());
    }
    Value::Object(root)
}

/// fio's `rw` value for an iolab access pattern.
pub fn fio_rw(access: Access) -> &'static str {
    match access {
        Access::Read => "read",
        Access::Write => "write",
        Access::RandRead => "randread",
        Access::RandWrite => "randwrite",
        Access::Rw => "rw",
        Access::RandRw => "randrw",
        Access::Trim => "trim",
        Access::RandTrim => "randtrim",
        Access::TrimWrite => "trimwrite",
        Access::RandTrimWrite => "randtrimwrite",
    }
}

/// The job in fio's option names, values as fio's job files write them.
fn job_options(result: &RunResult, job: &Job) -> Map<String, Value> {
    let mut o = Map::new();
    let mut put = |k: &str, v: String| {
        o.insert(k.to_string(), Value::String(v));
    };
    put("name", job.name.clone());
    put("filename", result.target.path.clone());
    put("ioengine", fio_engine(&result.target.engine));
    put("rw", fio_rw(job.access).into());
    match job.block_sizes.as_slice() {
        [one] => put("bs", fio_size(one.bytes)),
        many => {
            let split: Vec<String> = many
                .iter()
                .map(|s| format!("{}/{}", fio_size(s.bytes), trim_float(s.weight * 100.0)))
                .collect();
            put("bssplit", split.join(":"));
            // fio-plot and others key charts by `bs`: the most frequent size stands for it.
            if let Some(top) = many.iter().max_by(|a, b| a.weight.total_cmp(&b.weight)) {
                put("bs", fio_size(top.bytes));
            }
        }
    }
    put("iodepth", job.queue_depth.to_string());
    put("numjobs", job.threads.to_string());
    if job.threads > 1 {
        put("group_reporting", "1".into());
    }
    put("direct", u8::from(job.direct).to_string());
    if matches!(job.access, Access::Rw | Access::RandRw) {
        put("rwmixread", trim_float(job.read_pct));
    }
    let default_random = if job.access.is_random() { 100.0 } else { 0.0 };
    if job.random_pct != default_random {
        put("percentage_random", trim_float(job.random_pct));
    }
    if job.offset_bytes > 0 {
        put("offset", fio_size(job.offset_bytes));
    }
    if let Some(span) = job.span_bytes {
        put("size", fio_size(span));
    }
    if let Some(d) = job.duration_s {
        put("runtime", format!("{}s", trim_float(d)));
        put("time_based", "1".into());
    }
    if job.ramp_s > 0.0 {
        put("ramp_time", format!("{}s", trim_float(job.ramp_s)));
    }
    if let Some(b) = job.io_limit_bytes {
        put("io_size", fio_size(b));
    }
    if let Some(n) = job.ios_limit {
        put("number_ios", n.to_string());
    }
    if let Some(r) = job.rate_iops {
        put("rate_iops", trim_float(r));
    }
    if let Some(r) = job.rate_bytes_per_s {
        put("rate", r.to_string());
    }
    if job.compress_pct > 0.0 {
        put("buffer_compress_percentage", trim_float(job.compress_pct));
    }
    if job.dedupe_pct > 0.0 {
        put("dedupe_percentage", trim_float(job.dedupe_pct));
    }
    if job.zones {
        put("offset_increment", "zone".into());
    }
    put("randseed", job.seed.to_string());
    if job.random_map {
        put("norandommap", "0".into());
    }
    o
}

/// A size as fio's options write it (`4k`, `1m`, `512`), exact.
fn fio_size(bytes: u64) -> String {
    iolab_core::size::format_size(bytes)
}

/// A number without a needless `.0`.
fn trim_float(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v}")
    }
}

/// One direction; `series` is its (bytes/s, IOPS) per interval.
fn direction_json(
    d: &DirectionResult,
    j: &JobResult,
    paced: bool,
    series: (&[f64], &[f64]),
) -> Value {
    let runtime_ms = if d.ios > 0 {
        j.measured_ns / 1_000_000
    } else {
        0
    };
    let bw_bytes = d.bw_bytes_per_s.round() as u64;
    let mut o = Map::new();
    o.insert("io_bytes".into(), d.bytes.into());
    o.insert("io_kbytes".into(), (d.bytes >> 10).into());
    o.insert("bw_bytes".into(), bw_bytes.into());
    o.insert("bw".into(), (bw_bytes / 1024).into());
    o.insert("iops".into(), json!(d.iops));
    o.insert("runtime".into(), runtime_ms.into());
    o.insert("total_ios".into(), d.ios.into());
    o.insert("short_ios".into(), 0.into());
    o.insert("drop_ios".into(), 0.into());
    let lat = latency_json(&d.lat_ns, d.ios, Some(&d.lat_histogram));
    let clat = match (&d.service_lat_ns, paced) {
        (Some(service), true) => latency_json(service, d.ios, None),
        _ => lat.clone(),
    };
    o.insert("clat_ns".into(), clat);
    o.insert("lat_ns".into(), lat);
    // A direction that did no I/O has no samples (its zeros would read as a stall).
    let (bw, iops) = if d.ios > 0 {
        series
    } else {
        (&[][..], &[][..])
    };
    let bw_kib: Vec<f64> = bw.iter().map(|b| b / 1024.0).collect();
    let (min, max, mean, dev) = sample_stats(&bw_kib);
    o.insert("bw_min".into(), (min.round() as u64).into());
    o.insert("bw_max".into(), (max.round() as u64).into());
    o.insert(
        "bw_agg".into(),
        json!(if bw_kib.is_empty() { 0.0 } else { 100.0 }),
    );
    o.insert("bw_mean".into(), json!(mean));
    o.insert("bw_dev".into(), json!(dev));
    o.insert("bw_samples".into(), bw_kib.len().into());
    let (min, max, mean, dev) = sample_stats(iops);
    o.insert("iops_min".into(), (min.round() as u64).into());
    o.insert("iops_max".into(), (max.round() as u64).into());
    o.insert("iops_mean".into(), json!(mean));
    o.insert("iops_stddev".into(), json!(dev));
    o.insert("iops_samples".into(), iops.len().into());
    Value::Object(o)
}

/// min, max, mean and sample standard deviation (fio's `bw_dev`), zeros when empty.
fn sample_stats(v: &[f64]) -> (f64, f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let dev = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (min, max, mean, dev)
}

/// fio's latency object. With a histogram, fio's default percentiles and json+'s `bins`
/// (each bucket at its midpoint, as fio keys its own bins by a representative value);
/// without, the percentiles the summary has.
fn latency_json(l: &LatencySummary, ios: u64, hist: Option<&SparseHistogram>) -> Value {
    let mut o = Map::new();
    o.insert("min".into(), (if ios > 0 { l.min } else { 0 }).into());
    o.insert("max".into(), l.max.into());
    o.insert("mean".into(), json!(l.mean));
    o.insert("stddev".into(), json!(l.stddev));
    o.insert("N".into(), ios.into());
    if ios == 0 {
        return Value::Object(o);
    }
    let mut pct = Map::new();
    match hist.filter(|h| h.count() > 0) {
        Some(h) => {
            for p in FIO_PERCENTILES {
                pct.insert(percentile_key(p), h.percentile(p, l.min, l.max).into());
            }
            o.insert("percentile".into(), Value::Object(pct));
            let mut bins = Map::new();
            for &(low, count) in &h.bucket_low_ns_and_count {
                let (lo, width) = bucket_bounds(bucket_of(low));
                bins.insert((lo + (width - 1) / 2).to_string(), count.into());
            }
            o.insert("bins".into(), Value::Object(bins));
        }
        None => {
            for (p, v) in [
                (50.0, l.p50),
                (90.0, l.p90),
                (99.0, l.p99),
                (99.9, l.p99_9),
                (99.99, l.p99_99),
            ] {
                pct.insert(percentile_key(p), v.into());
            }
            o.insert("percentile".into(), Value::Object(pct));
        }
    }
    Value::Object(o)
}

/// fio's bucket edges: `latency_ns` and `latency_us` share them (in their unit); each key
/// counts latencies from the previous edge up to (not including) its own.
const EDGES: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];

/// `latency_ns`, `latency_us` and `latency_ms`: percent of all I/Os in each of fio's ranges.
fn latency_buckets(hists: &[&SparseHistogram]) -> (Value, Value, Value) {
    let total: u64 = hists.iter().map(|h| h.count()).sum();
    let mut ns = [0u64; 10];
    let mut us = [0u64; 10];
    let mut ms = [0u64; 12];
    for h in hists {
        for &(low, count) in &h.bucket_low_ns_and_count {
            // A bucket goes where its midpoint does: at most half a bucket (0.2 %) off.
            let (lo, width) = bucket_bounds(bucket_of(low));
            let v = lo + (width - 1) / 2;
            if v < 1_000 {
                ns[range_of(v)] += count;
            } else if v < 1_000_000 {
                us[range_of(v / 1_000)] += count;
            } else {
                let m = v / 1_000_000;
                let i = match m {
                    0..=999 => range_of(m),
                    1_000..=1_999 => 10,
                    _ => 11,
                };
                ms[i] += count;
            }
        }
    }
    let pct = |c: u64| {
        if total == 0 {
            0.0
        } else {
            100.0 * c as f64 / total as f64
        }
    };
    let obj = |counts: &[u64], keys: &[&str]| {
        Value::Object(
            keys.iter()
                .zip(counts)
                .map(|(k, c)| (k.to_string(), json!(pct(*c))))
                .collect(),
        )
    };
    let keys: Vec<String> = EDGES.iter().map(u64::to_string).collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let mut ms_keys = keys.clone();
    ms_keys.extend(["2000", ">=2000"]);
    (
        obj(&ns[..], &keys[..]),
        obj(&us[..], &keys[..]),
        obj(&ms[..], &ms_keys[..]),
    )
}

/// The index of fio's range holding `v` (below 1000 in its unit).
fn range_of(v: u64) -> usize {
    EDGES.iter().position(|&e| v < e).unwrap_or(EDGES.len() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctime_and_ranges_are_fios() {
        // 2026-11-27 08:00:00 UTC was a Friday.
        assert_eq!(ctime(1_795_766_400.0), "Fri Nov 27 08:00:00 2026");
        assert_eq!(ctime(0.0), "Thu Jan  1 00:00:00 1970");
        assert_eq!(range_of(0), 0);
        assert_eq!(range_of(1), 0);
        assert_eq!(range_of(2), 1);
        assert_eq!(range_of(9), 2);
        assert_eq!(range_of(999), 9);
        assert_eq!(
            fio_engine("io_uring (psync-per-slot for paced jobs)"),
            "io_uring"
        );
        assert_eq!(trim_float(70.0), "70");
        assert_eq!(trim_float(12.5), "12.5");
    }

    #[test]
    fn keys_come_in_fios_order() {
        let v = json!({"jobs": [{"read": {"lat_ns": {"percentile": {"99.990000": 3, "5.000000": 1, "50.000000": 2}}, "io_bytes": 1}, "jobname": "j"}], "fio version": "iolab-0", "latency_ms": {">=2000": 0, "2000": 0, "2": 0}});
        let text = serde_json::to_string(&InFiosOrder(&v)).unwrap();
        let at = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
        assert!(
            at("fio version") < at("jobs") && at("jobname") < at("read"),
            "{text}"
        );
        assert!(at("io_bytes") < at("lat_ns"), "{text}");
        assert!(
            at("5.000000") < at("50.000000") && at("50.000000") < at("99.990000"),
            "{text}"
        );
        assert!(at("2") < at("2000") && at("2000") < at(">=2000"), "{text}");
        // The same document, only in another order.
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }
}
