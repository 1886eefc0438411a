//! fio's JSON both ways: iolab's result in fio's layout and back, and fio 3.33's own output
//! (captured into testdata/fio/, see its README) read into iolab's schema.

use iolab_core::job::{Access, Direction, JobSpec};
use iolab_core::result::{CpuResult, JobResult, RunResult};
use iolab_core::size::ByteSize;
use iolab_core::stats::RunStats;
use iolab_report::fio::export::to_fio_json;
use iolab_report::fio::import::parse_fio_json;
use serde_json::Value;
use std::path::PathBuf;

mod common;

fn testdata(name: &str) -> (String, Value) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/fio")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let start = text.find("\n{").map_or(0, |i| i + 1);
    let start = if text.starts_with('{') { 0 } else { start };
    let value = serde_json::from_str(&text[start..]).expect("fio's JSON");
    (text, value)
}

/// A measured-looking job: 20,000 reads and 5,000 writes with spread latencies, one-second bins.
fn measured_job() -> JobResult {
    let seconds = 4_000_000_000;
    let mut s = RunStats::new(1_000_000_000);
    let mut x: u64 = 12345;
    for i in 0..25_000u64 {
        // A small LCG: latencies from 20 µs to ~2 ms, a few slow ones.
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut ns = 20_000 + (x >> 33) % 200_000;
        if i % 997 == 0 {
            ns *= 10;
        }
        let dir = if i % 5 == 4 {
            Direction::Write
        } else {
            Direction::Read
        };
        s.record(dir, 4096, ns, i * (seconds / 25_000));
    }
    let spec = JobSpec {
        name: Some("mix 80/20".into()),
        access: Some(Access::RandRw),
        read_pct: Some(80.0),
        block_size: Some(ByteSize(4096)),
        queue_depth: Some(8),
        threads: Some(2),
        duration_s: Some(4.0),
        ..JobSpec::default()
    };
    let mut job = spec.validate().unwrap();
    // As a run resolves it against its target.
    job.span_bytes = Some(64 << 20);
    JobResult {
        name: "mix 80/20".into(),
        measured_ns: seconds,
        read: s.direction_summary(Direction::Read, seconds),
        write: s.direction_summary(Direction::Write, seconds),
        series: s.series(seconds),
        cpu: CpuResult {
            user_s: 0.4,
            system_s: 1.2,
            ..CpuResult::default()
        },
        ..JobResult::unmeasured(job)
    }
}

fn result_with(job: JobResult) -> RunResult {
    let mut r = common::frame("run", "/tmp/t.bin", "bench-host");
    r.jobs = vec![job];
    r
}

#[test]
fn iolab_in_fios_layout_has_fios_fields_and_units() {
    let r = result_with(measured_job());
    let j = &r.jobs[0];
    let v = to_fio_json(&r);
    assert!(v["fio version"].as_str().unwrap().starts_with("iolab-"));
    assert_eq!(v["timestamp"].as_i64().unwrap(), r.started_unix_s as i64);
    let job = &v["jobs"][0];
    assert_eq!(job["jobname"], "mix 80/20");
    assert_eq!(job["groupid"], 0);
    let o = &job["job options"];
    for (k, want) in [
        ("rw", "randrw"),
        ("bs", "4k"),
        ("iodepth", "8"),
        ("numjobs", "2"),
        ("rwmixread", "80"),
        ("size", "64m"),
        ("runtime", "4s"),
        ("group_reporting", "1"),
    ] {
        assert_eq!(o[k], want, "job option {k}: {o}");
    }
    let read = &job["read"];
    assert_eq!(read["total_ios"].as_u64(), Some(j.read.ios));
    assert_eq!(read["io_bytes"].as_u64(), Some(j.read.bytes));
    assert_eq!(read["io_kbytes"].as_u64(), Some(j.read.bytes >> 10));
    let bw_bytes = read["bw_bytes"].as_u64().unwrap();
    assert_eq!(bw_bytes, j.read.bw_bytes_per_s.round() as u64);
    assert_eq!(read["bw"].as_u64(), Some(bw_bytes / 1024));
    assert_eq!(read["runtime"].as_u64(), Some(4000));
    assert_eq!(job["job_runtime"].as_u64(), Some(4000));
    assert_eq!(job["trim"]["total_ios"].as_u64(), Some(0));
    // fio's percentile keys, in order, rising; p99.99 is the histogram's.
    let pct = read["clat_ns"]["percentile"].as_object().unwrap();
    let keys: Vec<&str> = pct.keys().map(String::as_str).collect();
    assert_eq!(keys.len(), 17);
    assert!(keys.contains(&"99.990000") && keys.contains(&"1.000000"));
    let mut last = 0;
    for k in [
        "1.000000",
        "50.000000",
        "99.000000",
        "99.900000",
        "99.990000",
    ] {
        let v = pct[k].as_u64().unwrap();
        assert!(v >= last, "{k}: {v} < {last}");
        last = v;
    }
    assert_eq!(pct["99.000000"].as_u64(), Some(j.read.lat_ns.p99));
    assert_eq!(read["lat_ns"]["mean"].as_f64(), Some(j.read.lat_ns.mean));
    assert_eq!(read["lat_ns"]["N"].as_u64(), Some(j.read.ios));
    // The per-second bins give fio's bandwidth and IOPS samples.
    assert_eq!(read["iops_samples"].as_u64(), Some(4));
    assert!(read["iops_stddev"].as_f64().unwrap() >= 0.0);
    assert!(read["bw_min"].as_u64().unwrap() <= read["bw_max"].as_u64().unwrap());
    // CPU as percent of the measured time.
    assert!((job["usr_cpu"].as_f64().unwrap() - 10.0).abs() < 1e-9);
    assert!((job["sys_cpu"].as_f64().unwrap() - 30.0).abs() < 1e-9);
    // Latency ranges: percents of every I/O, adding up to 100.
    let sum: f64 = ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .flat_map(|k| job[*k].as_object().unwrap().values())
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert!((sum - 100.0).abs() < 1e-6, "{sum}");
    assert!(
        job["latency_us"]["250"].as_f64().unwrap() > 50.0,
        "{}",
        job["latency_us"]
    );
    // A model's CPU is not modelled: no CPU figures rather than made-up ones.
    let mut model = r.clone();
    model.target.modelled = true;
    assert!(to_fio_json(&model)["jobs"][0].get("usr_cpu").is_none());
}

#[test]
fn iolab_fio_json_reads_back_with_its_figures() {
    let r = result_with(measured_job());
    let text = iolab_report::fio::export::to_fio_json_text(&r);
    let back = parse_fio_json(&text).unwrap();
    assert_eq!(back.tool.name, "iolab");
    assert_eq!(back.tool.version, r.tool.version);
    let (a, b) = (&r.jobs[0], &back.jobs[0]);
    assert_eq!(b.name, a.name);
    assert_eq!(b.job.access, a.job.access);
    assert_eq!(b.job.read_pct, 80.0);
    assert_eq!((b.job.queue_depth, b.job.threads), (8, 2));
    assert_eq!(b.job.block_sizes, a.job.block_sizes);
    for (x, y) in [(&a.read, &b.read), (&a.write, &b.write)] {
        assert_eq!((y.ios, y.bytes), (x.ios, x.bytes));
        assert_eq!(y.lat_ns.mean, x.lat_ns.mean);
        assert_eq!((y.lat_ns.min, y.lat_ns.max), (x.lat_ns.min, x.lat_ns.max));
        assert_eq!(
            (y.lat_ns.p50, y.lat_ns.p99, y.lat_ns.p99_9, y.lat_ns.p99_99),
            (x.lat_ns.p50, x.lat_ns.p99, x.lat_ns.p99_9, x.lat_ns.p99_99)
        );
        // json+'s bins carry the histogram whole.
        assert_eq!(y.lat_histogram, x.lat_histogram);
    }
    assert_eq!(b.measured_ns, a.measured_ns);
}

/// Every capture in testdata/fio: its figures as fio wrote them.
#[test]
fn fio_3_33_output_is_read_with_its_figures_and_provenance() {
    for (name, plus) in [
        ("randread-4k-qd4.json", false),
        ("randrw-70-jsonplus.json", true),
        ("seqwrite-numjobs2.json", false),
    ] {
        let (text, raw) = testdata(name);
        let r = parse_fio_json(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.tool.name, "fio", "{name}");
        assert_eq!(r.tool.version, "3.33", "{name}");
        assert!(r.notes[0].contains("fio 3.33"), "{name}: {:?}", r.notes);
        let jobs = raw["jobs"].as_array().unwrap();
        assert_eq!(r.jobs.len(), jobs.len(), "{name}");
        for (j, fj) in r.jobs.iter().zip(jobs) {
            for (d, key) in [(&j.read, "read"), (&j.write, "write")] {
                let f = &fj[key];
                assert_eq!(d.ios, f["total_ios"].as_u64().unwrap(), "{name} {key}");
                assert_eq!(d.bytes, f["io_bytes"].as_u64().unwrap(), "{name} {key}");
                assert_eq!(d.iops, f["iops"].as_f64().unwrap(), "{name} {key}");
                if d.ios == 0 {
                    continue;
                }
                assert_eq!(d.lat_ns.mean, f["lat_ns"]["mean"].as_f64().unwrap());
                assert_eq!(d.lat_ns.max, f["lat_ns"]["max"].as_u64().unwrap());
                assert_eq!(
                    d.lat_ns.p99,
                    f["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap()
                );
                // json+ only: the bins become the histogram, every I/O in it.
                assert_eq!(d.lat_histogram.count() > 0, plus, "{name} {key}");
                if plus {
                    assert_eq!(d.lat_histogram.count(), d.ios, "{name} {key}");
                }
            }
            assert_eq!(
                j.measured_ns,
                fj["job_runtime"].as_u64().unwrap() * 1_000_000,
                "{name}"
            );
        }
    }
    // The job is rebuilt from its options.
    let (text, _) = testdata("randrw-70-jsonplus.json");
    let r = parse_fio_json(&text).unwrap();
    let j = &r.jobs[0].job;
    assert_eq!(j.access, iolab_core::job::Access::RandRw);
    assert_eq!(j.read_pct, 70.0);
    assert_eq!(j.queue_depth, 8);
    assert_eq!(j.block_sizes[0].bytes, 4096);
    // numjobs without group_reporting: one entry per clone, told apart.
    let (text, _) = testdata("seqwrite-numjobs2.json");
    let r = parse_fio_json(&text).unwrap();
    let names: Vec<&str> = r.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["seqwrite", "seqwrite #2"]);
}

#[test]
fn fios_leading_lines_are_skipped_and_damage_is_named() {
    let (text, _) = testdata("randread-4k-qd4.json");
    let body = &text[text.find('{').unwrap()..];
    let noisy = format!("fio: note: both iodepth >= 1 and synchronous I/O engine selected\n{body}\nRun status group 0 (all jobs):\n");
    assert!(parse_fio_json(&noisy).is_ok());
    // Cut short: the line fio's document broke on, counted in the file.
    let cut = &noisy[..noisy.len() / 2];
    let e = parse_fio_json(cut).unwrap_err().to_string();
    assert!(e.contains("line ") && e.contains("cut short"), "{e}");
    // Not fio's at all.
    let e = parse_fio_json("just text\n").unwrap_err().to_string();
    assert!(e.contains("no JSON document"), "{e}");
    let e = parse_fio_json("{\"jobs\": []}").unwrap_err().to_string();
    assert!(e.contains("fio version"), "{e}");
    // A job without its counts names the job and the field.
    let mut v: Value = serde_json::from_str(body).unwrap();
    v["jobs"][0]["read"]
        .as_object_mut()
        .unwrap()
        .remove("total_ios");
    let e = parse_fio_json(&v.to_string()).unwrap_err().to_string();
    assert!(e.contains("jobs[0]") && e.contains("total_ios"), "{e}");
    // fio 2.x's microseconds are refused, not read 1000× off.
    let mut v: Value = serde_json::from_str(body).unwrap();
    let read = v["jobs"][0]["read"].as_object_mut().unwrap();
    let lat = read.remove("lat_ns").unwrap();
    read.remove("clat_ns");
    read.insert("lat".into(), lat);
    let e = parse_fio_json(&v.to_string()).unwrap_err().to_string();
    assert!(e.contains("fio 2.x"), "{e}");
}
