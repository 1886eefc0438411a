//! fio 3.x's JSON output (`--output-format=json` or `json+`) read into iolab's result schema,
//! with its provenance: `tool` is fio and its version, a note names the file.
//!
//! How fio's figures map: each `jobs[]` entry becomes a job (a name fio repeats, as `numjobs`
//! without `group_reporting` does, gets ` #2`, ` #3`, …); `lat_ns` (submission to completion,
//! as iolab times an I/O) gives min, mean, stddev and max; the percentiles come from `lat_ns`
//! where fio wrote them (`lat_percentiles=1`), else from `clat_ns` (fio's default: completion
//! only, without the submission call), which a note says; json+'s `bins` become the
//! histogram. The job is rebuilt from `job options` over `global options` (`rw`, `bs`,
//! `bssplit`, `iodepth`, `numjobs`, `rwmixread`, `size`, `runtime`, …); an option iolab's
//! job cannot hold is kept in a note, never lost silently. fio's leading non-JSON lines
//! (warnings it prints before the document) are skipped.

use super::percentile_key;
use iolab_core::hist::SparseHistogram;
use iolab_core::job::{Access, Job, JobSpec};
use iolab_core::result::{
    CpuResult, DirectionResult, HostInfo, JobResult, LatencySummary, RunResult, TargetInfo,
    ToolInfo, SCHEMA_VERSION,
};
use iolab_core::size::{parse_size, ByteSize};
use serde_json::{Map, Value};

/// What is wrong with a file given as fio's JSON output (the caller names the file).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FioJsonError(pub String);

fn bad(msg: impl Into<String>) -> FioJsonError {
    FioJsonError(msg.into())
}

/// True when `text` looks like fio's JSON output (its document names `fio version`), so that
/// a reader can tell it from iolab's own result before parsing it as either.
pub fn looks_like_fio(text: &str) -> bool {
    let head: String = text.chars().take(64 * 1024).collect();
    head.contains("\"fio version\"")
}

/// Where fio's JSON document starts: the first line that opens with `{` (fio prints warnings
/// and notes before it), and that line's number (1-based).
fn document_start(text: &str) -> Option<(usize, usize)> {
    let mut at = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_start().starts_with('{') {
            return Some((at + (line.len() - line.trim_start().len()), n + 1));
        }
        at += line.len();
    }
    None
}

/// Parses fio's JSON output into an iolab result.
pub fn parse_fio_json(text: &str) -> Result<RunResult, FioJsonError> {
    let (start, line) = document_start(text)
        .ok_or_else(|| bad("no JSON document in it: no line starts with '{' (is it fio's output with --output-format=json?)"))?;
    // The document alone: fio may print more after it (`--output-format=json,normal`).
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    let value = match stream.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => {
            return Err(bad(format!(
                "line {}, column {}: {} (fio's JSON is cut short or damaged)",
                e.line() + line - 1,
                e.column(),
                strip_position(&e.to_string())
            )))
        }
        None => return Err(bad("empty JSON document")),
    };
    from_fio_value(&value)
}

/// serde_json's message without its own "at line L column C", which counts from the document.
fn strip_position(msg: &str) -> &str {
    msg.rsplit_once(" at line ").map_or(msg, |(m, _)| m)
}

/// Converts fio's parsed JSON document.
pub fn from_fio_value(doc: &Value) -> Result<RunResult, FioJsonError> {
    let root = doc
        .as_object()
        .ok_or_else(|| bad("the JSON document is not an object: not fio's output"))?;
    let version = root
        .get("fio version")
        .and_then(Value::as_str)
        .ok_or_else(|| bad("no \"fio version\": not fio's JSON output"))?;
    // Client/server runs list each host's jobs under `client_stats`, with a summary entry.
    let jobs = root
        .get("jobs")
        .or_else(|| root.get("client_stats"))
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"jobs\" array: fio's JSON output lists its jobs there"))?;
    let global = root
        .get("global options")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut notes = Vec::new();
    let mut out_jobs = Vec::new();
    let mut names: Vec<String> = Vec::new();
    let mut first_options = None;
    for (i, job) in jobs.iter().enumerate() {
        let job = job
            .as_object()
            .ok_or_else(|| bad(format!("jobs[{i}] is not an object")))?;
        let name = job
            .get("jobname")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("jobs[{i}] has no \"jobname\"")))?;
        if name == "All clients" {
            continue;
        }
        let mut options = global.clone();
        if let Some(o) = job.get("job options").and_then(Value::as_object) {
            options.extend(o.clone());
        }
        let occurrence = names.iter().filter(|n| n.as_str() == name).count() + 1;
        names.push(name.to_string());
        let shown = if occurrence > 1 {
            format!("{name} #{occurrence}")
        } else {
            name.to_string()
        };
        let converted = convert_job(i, &shown, job, &options, &mut notes)?;
        first_options.get_or_insert(options);
        out_jobs.push(converted);
    }
    if out_jobs.is_empty() {
        return Err(bad("the \"jobs\" array is empty: fio ran no job"));
    }
    let options = first_options.unwrap_or_default();
    // iolab's own `--fio-json` names itself `iolab-VERSION`.
    let (tool_name, tool_version) = match version.strip_prefix("iolab-") {
        Some(v) => ("iolab", v.to_string()),
        None => (
            "fio",
            version.strip_prefix("fio-").unwrap_or(version).to_string(),
        ),
    };
    let timestamp_s = root
        .get("timestamp_ms")
        .and_then(Value::as_f64)
        .map(|ms| ms / 1000.0)
        .or_else(|| root.get("timestamp").and_then(Value::as_f64))
        .unwrap_or(0.0);
    let started_unix_s = start_time(jobs, timestamp_s);
    let complete = out_jobs.iter().all(|j| j.complete);
    let incomplete_reason = out_jobs.iter().find(|j| !j.complete).map(|j| {
        format!(
            "job '{}': {}",
            j.name,
            j.stop_reason.clone().unwrap_or_default()
        )
    });
    notes.insert(
        0,
        format!(
            "imported from {tool_name} {tool_version}'s output in fio's JSON layout, which does \
             not record the host"
        ),
    );
    let hostname = jobs
        .iter()
        .find_map(|j| j.get("hostname").and_then(Value::as_str))
        .unwrap_or_default()
        .to_string();
    Ok(RunResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: tool_name.into(),
            version: tool_version,
        },
        kind: "run".into(),
        started_unix_s,
        complete,
        incomplete_reason,
        host: HostInfo {
            hostname,
            ..HostInfo::default()
        },
        target: target_of(&options, root),
        notes: dedup(notes),
        jobs: out_jobs,
        suite: None,
        replay: None,
        scale: None,
    })
}

/// When the run started: fio's `job_start` (ms since the epoch, fio 3.30 and later) of the
/// first job, else the output's time less the longest job's elapsed seconds.
fn start_time(jobs: &[Value], timestamp_s: f64) -> f64 {
    let starts = jobs
        .iter()
        .filter_map(|j| j.get("job_start").and_then(Value::as_f64))
        .filter(|&ms| ms > 0.0);
    match starts.reduce(f64::min) {
        Some(ms) => ms / 1000.0,
        None => {
            let elapsed = jobs
                .iter()
                .filter_map(|j| j.get("elapsed").and_then(Value::as_f64))
                .fold(0.0, f64::max);
            timestamp_s - elapsed
        }
    }
}

fn dedup(notes: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in notes {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// An option's value as text (fio writes them all as strings; a hand-made file may not).
fn opt(options: &Map<String, Value>, key: &str) -> Option<String> {
    options.get(key).map(|v| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

fn target_of(options: &Map<String, Value>, root: &Map<String, Value>) -> TargetInfo {
    let file = opt(options, "filename").map(|f| {
        // fio's `:` list; `\:` escapes a colon in a name.
        let first = f.replace("\\:", "\u{0}");
        let first = first
            .split(':')
            .next()
            .unwrap_or_default()
            .replace('\u{0}', ":");
        match opt(options, "directory") {
            Some(dir) if !first.starts_with('/') => {
                format!("{}/{first}", dir.trim_end_matches('/'))
            }
            _ => first,
        }
    });
    let path = file.unwrap_or_else(|| match opt(options, "directory") {
        Some(dir) => dir,
        None => "(fio's JSON names no filename)".into(),
    });
    let kind = if path.starts_with("/dev/") {
        "block"
    } else {
        "file"
    };
    let disks: Vec<String> = root
        .get("disk_util")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|d| {
                    let name = d.get("name")?.as_str()?;
                    let util = d.get("util").and_then(Value::as_f64).unwrap_or(0.0);
                    Some(format!("{name} {util:.1} % busy"))
                })
                .collect()
        })
        .unwrap_or_default();
    TargetInfo {
        path,
        kind: kind.into(),
        size_bytes: opt(options, "size")
            .and_then(|s| parse_size(&s).ok())
            .unwrap_or(0),
        // fio 3.33's default engine on Linux.
        engine: opt(options, "ioengine").unwrap_or_else(|| "psync".into()),
        path_summary: (!disks.is_empty()).then(|| format!("fio's disk_util: {}", disks.join(", "))),
        ..TargetInfo::default()
    }
}

fn convert_job(
    index: usize,
    name: &str,
    job: &Map<String, Value>,
    options: &Map<String, Value>,
    notes: &mut Vec<String>,
) -> Result<JobResult, FioJsonError> {
    let where_ = |what: &str| format!("jobs[{index}] ('{name}'): {what}");
    let num = |v: Option<&Value>| v.and_then(Value::as_f64);
    let read = direction(job.get("read"), &where_("read"), name, notes)?;
    let write = direction(job.get("write"), &where_("write"), name, notes)?;
    let trims = job
        .get("trim")
        .and_then(|t| t.get("total_ios"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let trim = if trims > 0 {
        Some(direction(job.get("trim"), &where_("trim"), name, notes)?)
    } else {
        None
    };
    if job.get("mixed").is_some() {
        notes.push(format!(
            "{name}: fio reported reads and writes together (unified_rw_reporting); they are \
             kept as reads"
        ));
    }
    let runtime_ms = num(job.get("job_runtime"))
        .filter(|&ms| ms > 0.0)
        .or_else(|| {
            ["read", "write"]
                .iter()
                .filter_map(|d| num(job.get(*d).and_then(|x| x.get("runtime"))))
                .reduce(f64::max)
        })
        .unwrap_or(0.0);
    let measured_ns = (runtime_ms * 1e6).round() as u64;
    let secs = runtime_ms / 1000.0;
    let cpu = CpuResult {
        user_s: num(job.get("usr_cpu")).unwrap_or(0.0) / 100.0 * secs,
        system_s: num(job.get("sys_cpu")).unwrap_or(0.0) / 100.0 * secs,
        ..CpuResult::default()
    };
    let error = job.get("error").and_then(Value::as_i64).unwrap_or(0);
    let (read, write) = match job.get("mixed") {
        Some(m) => (direction(Some(m), &where_("mixed"), name, notes)?, write),
        None => (read, write),
    };
    let spec = job_spec(name, options, &read, &write, notes);
    let ramp_ns = opt(options, "ramp_time")
        .and_then(|t| fio_seconds(&t))
        .map_or(0, |s| (s * 1e9) as u64);
    Ok(JobResult {
        name: name.to_string(),
        complete: error == 0,
        stop_reason: (error != 0).then(|| {
            format!(
                "fio reported error {error} ({})",
                std::io::Error::from_raw_os_error(error as i32)
            )
        }),
        measured_ns,
        ramp_ns,
        read,
        write,
        trim,
        cpu,
        ..JobResult::unmeasured(spec)
    })
}

/// fio's time value: seconds, or with fio's units (`30s`, `1m`, `500ms`, `2h`).
fn fio_seconds(text: &str) -> Option<f64> {
    iolab_core::time::parse_seconds(text)
        .ok()
        .filter(|s| s.is_finite() && *s >= 0.0)
}

/// One direction (`read`, `write`) of a fio job.
fn direction(
    value: Option<&Value>,
    place: &str,
    name: &str,
    notes: &mut Vec<String>,
) -> Result<DirectionResult, FioJsonError> {
    let Some(v) = value else {
        return Ok(DirectionResult::default());
    };
    let d = v
        .as_object()
        .ok_or_else(|| bad(format!("{place} is not an object")))?;
    let int = |k: &str| d.get(k).and_then(Value::as_u64);
    let float = |k: &str| d.get(k).and_then(Value::as_f64);
    let ios = int("total_ios").ok_or_else(|| {
        bad(format!(
            "{place} has no \"total_ios\" (a number of I/Os): not fio 3.x's JSON"
        ))
    })?;
    let bytes = int("io_bytes").unwrap_or_else(|| int("io_kbytes").unwrap_or(0) << 10);
    let bw = float("bw_bytes").unwrap_or_else(|| float("bw").unwrap_or(0.0) * 1024.0);
    let lat = d.get("lat_ns").and_then(Value::as_object);
    let clat = d.get("clat_ns").and_then(Value::as_object);
    // Older fio (before 3.0) wrote microseconds under `lat`/`clat`: refused rather than read
    // 1000× off.
    if lat.is_none() && clat.is_none() && ios > 0 {
        if d.contains_key("lat") || d.contains_key("clat") {
            return Err(bad(format!(
                "{place}: latencies in microseconds (\"lat\", \"clat\") are fio 2.x's layout; \
                 iolab reads fio 3.x's (\"lat_ns\"); rerun with fio 3"
            )));
        }
        return Err(bad(format!("{place} has no \"lat_ns\" or \"clat_ns\"")));
    }
    let mut summary = LatencySummary::default();
    if let Some(l) = lat.or(clat) {
        let n = |k: &str| l.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        summary.min = n("min") as u64;
        summary.max = n("max") as u64;
        summary.mean = n("mean");
        summary.stddev = n("stddev");
    }
    let with_pct = |o: Option<&Map<String, Value>>| {
        o.and_then(|o| o.get("percentile"))
            .and_then(Value::as_object)
            .cloned()
    };
    let (pct, from_clat) = match (with_pct(lat), with_pct(clat)) {
        (Some(p), _) => (Some(p), false),
        (None, Some(p)) => (Some(p), true),
        (None, None) => (None, false),
    };
    if ios > 0 {
        match &pct {
            Some(_) if from_clat => notes.push(
                "percentiles are fio's completion latency (clat_ns: without the submission \
                 call); min, mean and max its total latency (lat_ns)"
                    .into(),
            ),
            Some(_) => {}
            None => notes.push(format!(
                "{name}: fio wrote no latency percentiles (clat_percentiles=0): they read 0"
            )),
        }
    }
    if let Some(p) = &pct {
        let get = |q: f64| p.get(&percentile_key(q)).and_then(Value::as_u64);
        let mut missing = Vec::new();
        let mut take = |q: f64, slot: &mut u64| match get(q) {
            Some(v) => *slot = v,
            None => missing.push(format!("{q}")),
        };
        take(50.0, &mut summary.p50);
        take(90.0, &mut summary.p90);
        take(99.0, &mut summary.p99);
        take(99.9, &mut summary.p99_9);
        take(99.99, &mut summary.p99_99);
        if !missing.is_empty() && ios > 0 {
            notes.push(format!(
                "{name}: fio's percentile_list lacks p{}: read as 0",
                missing.join(", p")
            ));
        }
    }
    // json+: the histogram of whichever latency the percentiles came from.
    let bins_of = |o: Option<&Map<String, Value>>| {
        o.and_then(|o| o.get("bins"))
            .and_then(Value::as_object)
            .map(|b| {
                SparseHistogram::from_values(
                    b.iter()
                        .filter_map(|(k, c)| Some((k.parse::<u64>().ok()?, c.as_u64()?))),
                )
            })
    };
    let hist = if from_clat {
        bins_of(clat)
    } else {
        bins_of(lat).or_else(|| bins_of(clat))
    };
    Ok(DirectionResult {
        ios,
        bytes,
        iops: float("iops").unwrap_or(0.0),
        bw_bytes_per_s: bw,
        bw_mb_per_s: bw / 1e6,
        bw_mib_per_s: bw / 1_048_576.0,
        lat_ns: summary,
        service_lat_ns: None,
        lat_histogram: hist.unwrap_or_default(),
        ios_over_10ms: None,
        ios_over_100ms: None,
    })
}

/// fio's options the imported job takes in, or that say nothing about the workload.
const READ_OPTIONS: &[&str] = &[
    "name",
    "filename",
    "directory",
    "ioengine",
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bsrange",
    "bssplit",
    "iodepth",
    "numjobs",
    "direct",
    "buffered",
    "size",
    "offset",
    "runtime",
    "ramp_time",
    "randseed",
    "rwmixread",
    "rwmixwrite",
    "percentage_random",
    "time_based",
    "group_reporting",
    "stonewall",
    "new_group",
    "wait_for",
    "description",
    "output-format",
    "output",
    "filename_format",
    "unlink",
    "invalidate",
    "thread",
    "clat_percentiles",
    "lat_percentiles",
    "percentile_list",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "log_avg_msec",
    "per_job_logs",
];

/// The iolab job closest to fio's options. Options iolab's job does not hold are named in a
/// note; an option value it cannot read falls back to fio's default, also noted.
fn job_spec(
    name: &str,
    options: &Map<String, Value>,
    read: &DirectionResult,
    write: &DirectionResult,
    notes: &mut Vec<String>,
) -> Job {
    let mut spec = JobSpec {
        name: Some(name.to_string()),
        ..JobSpec::default()
    };
    let other: Vec<String> = options
        .keys()
        .filter(|k| !READ_OPTIONS.contains(&k.as_str()))
        .map(|k| format!("{k}={}", opt(options, k).unwrap_or_default()))
        .collect();
    if !other.is_empty() {
        notes.push(format!(
            "{name}: fio options iolab's job does not hold (kept here only): {}",
            other.join(", ")
        ));
    }
    let rw = opt(options, "rw").or_else(|| opt(options, "readwrite"));
    let rw_base = rw
        .as_deref()
        .map(|r| r.split(':').next().unwrap_or(r).trim().to_string());
    spec.access = Some(match rw_base.as_deref() {
        Some("read") => Access::Read,
        Some("write") => Access::Write,
        Some("randread") => Access::RandRead,
        Some("randwrite") => Access::RandWrite,
        Some("rw" | "readwrite") => Access::Rw,
        Some("randrw") => Access::RandRw,
        Some("trim") => Access::Trim,
        Some("randtrim") => Access::RandTrim,
        Some("trimwrite") => Access::TrimWrite,
        Some("randtrimwrite") => Access::RandTrimWrite,
        // fio's default is `read`; anything else: the directions that did I/O say.
        other => {
            if let Some(o) = other {
                notes.push(format!("{name}: rw={o} has no iolab access pattern; kept by the directions that did I/O"));
            }
            match (read.ios > 0, write.ios > 0) {
                (_, false) => Access::Read,
                (false, true) => Access::Write,
                (true, true) => Access::Rw,
            }
        }
    });
    if matches!(spec.access, Some(Access::Rw | Access::RandRw)) {
        let mix = opt(options, "rwmixread")
            .and_then(|v| v.parse::<f64>().ok())
            .or_else(|| {
                opt(options, "rwmixwrite")
                    .and_then(|v| v.parse::<f64>().ok())
                    .map(|w| 100.0 - w)
            })
            .unwrap_or(50.0);
        spec.read_pct = Some(mix.clamp(0.0, 100.0));
    }
    if let Some(p) = opt(options, "percentage_random")
        .and_then(|v| v.split(',').next()?.trim().parse::<f64>().ok())
    {
        spec.random_pct = Some(p);
    }
    block_size_options(name, options, &mut spec, notes);
    let uint = |k: &str| opt(options, k).and_then(|v| v.trim().parse::<u32>().ok());
    spec.queue_depth = uint("iodepth");
    spec.threads = uint("numjobs");
    if let Some(d) = opt(options, "direct") {
        spec.direct = Some(d.trim() == "1" || d.trim() == "true");
    } else if let Some(b) = opt(options, "buffered") {
        spec.direct = Some(b.trim() == "0");
    } else {
        // fio's default is buffered I/O.
        spec.direct = Some(false);
    }
    span_and_time_options(options, &mut spec);
    match spec.validate() {
        Ok(mut job) => {
            job.span_bytes = spec.size.map(|s| s.0);
            job
        }
        Err(e) => {
            notes.push(format!(
                "{name}: fio's options do not make an iolab job ({e}); its access, block size, \
                 depth and threads are kept"
            ));
            fallback_job(&spec)
        }
    }
}

/// fio's block size (`bssplit`, else `bs`, `blocksize` or the start of `bsrange`) into `spec`; a
/// size it cannot read is noted and left to fio's default.
fn block_size_options(
    name: &str,
    options: &Map<String, Value>,
    spec: &mut JobSpec,
    notes: &mut Vec<String>,
) {
    if let Some(split) = opt(options, "bssplit") {
        // fio's read,write splits: the read one stands for both.
        spec.bssplit = Some(split.split(',').next().unwrap_or_default().to_string());
    } else {
        let bs = opt(options, "bs")
            .or_else(|| opt(options, "blocksize"))
            .or_else(|| {
                opt(options, "bsrange").map(|r| r.split('-').next().unwrap_or_default().into())
            });
        match bs
            .as_deref()
            .map(|b| (b, parse_size(b.split([',', '-']).next().unwrap_or(b))))
        {
            Some((_, Ok(n))) if n > 0 => spec.block_size = Some(ByteSize(n)),
            Some((b, _)) => notes.push(format!(
                "{name}: bs={b} is not read; fio's default 4k is assumed"
            )),
            None => {}
        }
    }
}

/// fio's span (`size`, `offset`), times (`runtime`, `ramp_time`) and seed into `spec`; values
/// it cannot read are left unset, as fio's defaults.
fn span_and_time_options(options: &Map<String, Value>, spec: &mut JobSpec) {
    if let Some(s) = opt(options, "size")
        .and_then(|s| parse_size(&s).ok())
        .filter(|&s| s > 0)
    {
        spec.size = Some(ByteSize(s));
    }
    if let Some(s) = opt(options, "offset").and_then(|s| parse_size(&s).ok()) {
        spec.offset = Some(ByteSize(s));
    }
    if let Some(t) = opt(options, "runtime")
        .and_then(|t| fio_seconds(&t))
        .filter(|&t| t > 0.0)
    {
        spec.duration_s = Some(t);
    }
    if let Some(t) = opt(options, "ramp_time").and_then(|t| fio_seconds(&t)) {
        spec.ramp_s = Some(t);
    }
    if let Some(seed) = opt(options, "randseed").and_then(|s| s.trim().parse::<u64>().ok()) {
        spec.seed = Some(seed);
    }
}

/// The job of fio's options that iolab's job model refuses together: the workload's shape
/// alone, else its access alone, else the default job.
fn fallback_job(spec: &JobSpec) -> Job {
    let shape = JobSpec {
        name: spec.name.clone(),
        access: spec.access,
        read_pct: spec.read_pct,
        block_size: spec.block_size,
        bssplit: spec.bssplit.clone(),
        queue_depth: spec.queue_depth,
        threads: spec.threads,
        direct: spec.direct,
        ..JobSpec::default()
    };
    let access = JobSpec {
        name: spec.name.clone(),
        access: spec.access,
        ..JobSpec::default()
    };
    shape
        .validate()
        .or_else(|_| access.validate())
        .or_else(|_| JobSpec::default().validate())
        .unwrap_or_else(|e| unreachable!("the default job is valid: {e}"))
}
