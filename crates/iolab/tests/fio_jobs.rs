//! fio job files end to end: run, printed, refused, lenient; and one job run by fio and by
//! iolab on the same loop device, compared by the kernel's counters.

mod common;

use common::{iolab, json, text};
use iolab_testkit::{loop_skip_reason, which, BlockStat, LoopDevice, MachineLock};
use std::path::Path;

fn write(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_fio_job_file_runs_on_the_target_given() {
    let dir = tempfile::tempdir().unwrap();
    // No .fio suffix: told by its form. A comment at the end of a line, as fio allows.
    let job = write(
        dir.path(),
        "randread.ini",
        "; 4k random reads\n[global]\nioengine=psync ; fio's default anyway\nbs=4k\n\
         [reader]\nrw=randread\nsize=${FIO_TEST_SIZE}\nwrite_lat_log=lat\n",
    );
    let out = common::iolab_cmd(&["run", &job, "t.bin", "--json", "r.json"], dir.path())
        .env("FIO_TEST_SIZE", "4m")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&dir.path().join("r.json"));
    let j = &r["jobs"][0];
    assert_eq!(j["name"], "reader", "{j}");
    // One pass over 4 MiB in 4 KiB blocks, buffered (fio's default), on psync.
    assert_eq!(j["read"]["ios"], 1024, "{j}");
    assert_eq!(j["job"]["direct"], false);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("ioengine=psync") && notes.contains("write_lat_log=lat"),
        "{notes}"
    );
}

#[test]
fn print_job_shows_the_translation_as_an_iolab_job_file() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "j.fio",
        "[global]\nioengine=libaio\ndirect=1\n[a]\nrw=randrw\nrwmixread=70\n\
         bssplit=4k/60:64k/40,128k/100\niodepth=32\nsize=64m\nruntime=30\ntime_based\n\
         random_distribution=zipf:1.2\n",
    );
    let out = iolab(&["run", &job, "--print-job", "--qd", "8"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let printed = String::from_utf8(out.stdout).unwrap();
    let toml: toml::Value = toml::from_str(&printed).unwrap();
    let a = &toml["job"][0];
    assert_eq!(a["access"].as_str(), Some("randrw"));
    assert_eq!(a["read_pct"].as_float(), Some(70.0));
    assert_eq!(a["bssplit"].as_str(), Some("4k/60:64k/40,128k/100"));
    assert_eq!(a["distribution"].as_str(), Some("zipf:1.2"));
    assert_eq!(a["duration_s"].as_float(), Some(30.0));
    // The command line's flags override the file's, as for TOML job files.
    assert_eq!(a["queue_depth"].as_integer(), Some(8));
    assert!(printed.starts_with("# fio: ioengine=libaio"), "{printed}");
    // Nothing was created.
    assert!(!dir.path().join("a.0.0").exists());
    // The printed file runs as it is.
    std::fs::write(dir.path().join("p.toml"), &printed).unwrap();
    let out = iolab(&["run", "p.toml", "--print-job"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}

#[test]
fn what_iolab_cannot_honour_is_refused_or_with_lenient_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "v.fio",
        "[w]\nrw=write\nbs=64k\nsize=1m\nverify=pattern\nexec_prerun=ls\n",
    );
    let out = iolab(&["run", &job, "t.bin", "--json", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains(&format!(
            "{job}:5: verify=pattern: verify=pattern writes the pattern alone"
        )) && said.contains(&format!("{job}:6: exec_prerun=ls: iolab runs no"))
            && said.contains("--fio-lenient"),
        "{said}"
    );
    assert!(
        !dir.path().join("t.bin").exists(),
        "a refused file made a target"
    );
    let out = iolab(
        &["run", &job, "t.bin", "--json", "r.json", "--fio-lenient"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("warning: fio option ignored (--fio-lenient)"));
    let r = json(&dir.path().join("r.json"));
    assert_eq!(r["jobs"][0]["write"]["ios"], 16);
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("verify=pattern") && notes.contains("exec_prerun=ls"),
        "{notes}"
    );
}

#[test]
fn a_fio_verify_job_is_verified_by_iolab_and_says_how() {
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "v.fio",
        "[w]\nrw=randwrite\nbs=4k\nsize=1m\ndirect=1\nverify=md5\n",
    );
    let out = iolab(&["run", &job, "t.bin", "--json", "r.json"], dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&dir.path().join("r.json"));
    let v = &r["jobs"][0]["verify"];
    assert_eq!(v["mode"], "end", "{v}");
    assert_eq!(v["failures"], 0, "{v}");
    assert_eq!(v["blocks_checked"], 256, "{v}");
    assert!(
        r["notes"].to_string().contains("not by fio's md5"),
        "{}",
        r["notes"]
    );
}

/// The same fio job file run by fio and by iolab on one loop device: the kernel counts the same
/// I/Os, the same read/write split and the same bytes per I/O, within 1 %.
#[test]
fn fio_and_iolab_issue_the_same_io_for_one_job() {
    if let Some(why) = loop_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    if !which("fio") {
        println!("skipped: fio is not installed (apt-get install fio)");
        return;
    }
    let _lock = MachineLock::take();
    // Backed by memory where it can be, to keep the machine's disk out of it.
    let shm = Path::new("/dev/shm");
    let dev = if shm.is_dir() {
        LoopDevice::new_in(shm, 512 << 20)
    } else {
        LoopDevice::new(512 << 20)
    }
    .unwrap();
    let name = dev.name();
    // Larger than the job's bytes, so that both end at number_ios. Without merging, every
    // request the tools issue reaches the counters as one.
    let nomerges = format!("/sys/block/{name}/queue/nomerges");
    let _ = std::fs::write(&nomerges, "2");
    let dir = tempfile::tempdir().unwrap();
    let job = write(
        dir.path(),
        "mix.fio",
        &format!(
            "[mix]\nfilename={}\nioengine=libaio\ndirect=1\nrw=randrw\nrwmixread=70\n\
             bssplit=4k/50:8k/30:16k/20\niodepth=16\nnumber_ios=20000\nnorandommap\n",
            dev.path.display()
        ),
    );
    let measure = |program: &str, args: &[&str]| -> BlockStat {
        let before = BlockStat::read(&name).unwrap();
        let out = std::process::Command::new(program)
            .args(args)
            .current_dir(dir.path())
            .env("IOLAB_RESULTS_DIR", dir.path().join("results"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{program}: {}", text(&out));
        BlockStat::read(&name).unwrap().since(&before)
    };
    let fio = measure("fio", &["--output=fio.out", &job]);
    let iolab_bin = env!("CARGO_BIN_EXE_iolab");
    let ours = measure(iolab_bin, &["run", &job, "--json", "r.json", "--no-probe"]);
    // Before it writes to a device, iolab's guard reads its signature areas (a dozen reads,
    // some MiB): measured by a job of one 4 KiB write, and taken out.
    let dev_s = dev.path.to_str().unwrap();
    let guard = measure(
        iolab_bin,
        &[
            "run",
            dev_s,
            "--access",
            "randwrite",
            "--bs",
            "4k",
            "--ios-limit",
            "1",
            "--json",
            "g.json",
            "--no-probe",
        ],
    );
    assert_eq!((guard.write_ios, guard.write_sectors), (1, 8), "{guard:?}");
    let ours = BlockStat {
        read_ios: ours.read_ios - guard.read_ios,
        read_sectors: ours.read_sectors - guard.read_sectors,
        ..ours
    };
    let total = |s: &BlockStat| (s.read_ios + s.write_ios) as f64;
    let read_share = |s: &BlockStat| s.read_ios as f64 / total(s);
    let bytes_per_io = |s: &BlockStat| (s.read_sectors + s.write_sectors) as f64 / total(s);
    let close = |a: f64, b: f64| (a - b).abs() <= 0.01 * a.abs().max(b.abs());
    assert!(close(total(&fio), total(&ours)), "{fio:?} {ours:?}");
    assert!(
        (read_share(&fio) - read_share(&ours)).abs() <= 0.01,
        "{fio:?} {ours:?}"
    );
    // 20,000 draws of a split whose mean is 7.6 KiB (standard deviation 4.5 KiB): the two means
    // agree within 2 %, over three standard deviations of their difference.
    assert!(
        (bytes_per_io(&fio) / bytes_per_io(&ours) - 1.0).abs() <= 0.02,
        "{fio:?} {ours:?}"
    );
}
