//! `iolab run` under mpirun. Built with the `mpi` feature (`cargo test -p iolab --features mpi
//! --test mpi`), the tests start 4 ranks on this machine (`--oversubscribe`): the aggregate
//! against the ranks and the kernel's counters, the start skew, stonewalling, a refusal on one
//! rank, a rank that fails and one that is killed. Without mpirun they print
//! `skipped: <reason>`. Built without the feature, one test checks that a process started by
//! mpirun says it cannot coordinate.

mod common;

use common::{iolab_cmd, json, text};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Being one of 4 processes started by mpirun, without MPI support built in, is said and
/// refused, for every command that measures, before anything is touched.
#[cfg(not(feature = "mpi"))]
#[test]
fn a_build_without_mpi_refuses_to_run_as_one_of_many_copies() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("t.bin");
    let t = target.to_str().unwrap();
    for args in [
        vec!["run", "--size", "1m", "--ios-limit", "10", t],
        vec!["quick", "--size", "1m", t],
        vec!["suite", "cdm", "--size", "1m", t],
        vec!["trace", "replay", "t.csv", t],
    ] {
        let out = iolab_cmd(&args, dir.path())
            .env("OMPI_COMM_WORLD_SIZE", "4")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("started by mpirun") && err.contains("4 processes"),
            "{err}"
        );
        assert!(!target.exists(), "{args:?} created the target");
    }
    // Without mpirun, --stonewall has nothing to stop.
    let out = iolab_cmd(&["run", "--stonewall", "--size", "1m", t], dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--stonewall"), "{}", text(&out));
}

/// Why mpirun tests cannot run here, if they cannot.
fn mpirun_skip_reason() -> Option<String> {
    if !cfg!(feature = "mpi") {
        return Some("iolab is built without the mpi feature".into());
    }
    match Command::new("mpirun").arg("--version").output() {
        Ok(o) if o.status.success() => None,
        Ok(o) => Some(format!("mpirun --version failed: {}", text(&o))),
        Err(e) => Some(format!("no mpirun ({e}): install openmpi-bin")),
    }
}

/// One mpirun test at a time: they start 4 ranks each on a 2-core machine, and a start skew
/// or a stonewall is judged against the others' load otherwise; and a test that looks for a
/// rank's process must find its own run's.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `mpirun -np N iolab ARGS` in `dir`, with the settings of `common::iolab_cmd`.
fn mpirun(n: u32, args: &[&str], dir: &Path) -> Command {
    mpirun_with(n, &[], args, dir)
}

/// [`mpirun`] with mpirun's own `options`.
fn mpirun_with(n: u32, options: &[&str], args: &[&str], dir: &Path) -> Command {
    let mut c = Command::new("mpirun");
    c.args([
        "--oversubscribe",
        "--allow-run-as-root",
        "-np",
        &n.to_string(),
    ])
    .args(options)
    .arg(env!("CARGO_BIN_EXE_iolab"))
    .args(args)
    .current_dir(dir)
    .env_remove("IOLAB_DB")
    .env("IOLAB_RESULTS_DIR", dir.join("results"))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    c
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

/// Sparse files `dir/f.R` of `sizes[R]` bytes: reads of them cost no device I/O.
fn sparse_files(dir: &Path, sizes: &[u64]) {
    for (r, size) in sizes.iter().enumerate() {
        let f = std::fs::File::create(dir.join(format!("f.{r}"))).unwrap();
        f.set_len(*size).unwrap();
    }
}

#[test]
fn four_ranks_add_up_to_what_the_kernel_counted_and_start_together() {
    if let Some(why) = mpirun_skip_reason().or_else(iolab_testkit::loop_skip_reason) {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let _lock = iolab_testkit::MachineLock::take();
    let dev = iolab_testkit::LoopDevice::new(64 << 20).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out_json = dir.path().join("r.json");
    let name = dev.name();
    // Let udev's first look at the new device pass before counting.
    let _ = Command::new("udevadm").arg("settle").status();
    let before = iolab_testkit::BlockStat::read(&name).unwrap();
    let out = mpirun(
        4,
        &[
            "run",
            "--access",
            "randread",
            "--bs",
            "4k",
            "--qd",
            "4",
            "--ios-limit",
            "3000",
            "--no-probe",
            "--json",
            out_json.to_str().unwrap(),
            dev.path.to_str().unwrap(),
        ],
        dir.path(),
    )
    .output()
    .unwrap();
    let counted = iolab_testkit::BlockStat::read(&name)
        .unwrap()
        .since(&before);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&out_json);
    let scale = &r["scale"];
    assert_eq!(u(&scale["ranks"]), 4);
    assert_eq!(scale["share"], "zones of one target");
    let ranks = scale["rank_info"].as_array().unwrap();
    let per_rank: Vec<u64> = ranks
        .iter()
        .map(|k| u(&k["jobs"][0]["read"]["ios"]))
        .collect();
    assert_eq!(per_rank, vec![3000; 4], "each rank's ios_limit");
    let agg = &r["jobs"][0]["read"];
    assert_eq!(u(&agg["ios"]), per_rank.iter().sum::<u64>());
    assert_eq!(u(&agg["bytes"]), 4 * 3000 * 4096);
    // The merged histogram holds every rank's I/O.
    let hist_count: u64 = agg["lat_histogram"]["bucket_low_ns_and_count"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| u(&p[1]))
        .sum();
    assert_eq!(hist_count, 12_000);
    // The kernel saw the same I/O (within 1 %: udev or blkid may read the device meanwhile).
    let kernel_bytes = counted.read_sectors * 512;
    let ours = u(&agg["bytes"]);
    assert!(
        kernel_bytes.abs_diff(ours) * 100 <= ours,
        "kernel read {kernel_bytes} bytes, iolab {ours}"
    );
    assert!(
        counted.read_ios.abs_diff(12_000) * 100 <= 12_000,
        "kernel {} reads",
        counted.read_ios
    );
    // Zones: each rank read its own quarter.
    let zones: Vec<String> = ranks
        .iter()
        .map(|k| k["target"].as_str().unwrap().to_string())
        .collect();
    for (i, z) in zones.iter().enumerate() {
        let q = 16 << 20;
        assert!(
            z.ends_with(&format!("bytes {}..{}", i * q, (i + 1) * q)),
            "{zones:?}"
        );
    }
    // Starts recorded for every rank, together within 5 ms; clock offsets measured.
    let skew = u(&scale["start_skew_ns"]);
    assert!(skew < 5_000_000, "start skew {skew} ns");
    for k in ranks {
        assert_eq!(k["start_offsets_ns"].as_array().unwrap().len(), 1, "{k}");
        assert!(k["clock_rtt_ns"].is_u64());
    }
    // One host, its line in the report.
    assert_eq!(scale["hosts"].as_array().unwrap().len(), 1);
    assert_eq!(u(&scale["hosts"][0]["jobs"][0]["read"]["ios"]), 12_000);
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("per host, job 'job1'"), "{shown}");
    // One record in the store, with the ranks in it.
    let exported = dir.path().join("exported.json");
    let out = iolab_cmd(
        &["results", "export", "1", "-o", exported.to_str().unwrap()],
        dir.path(),
    )
    .output()
    .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(u(&json(&exported)["scale"]["ranks"]), 4);
    let out = iolab_cmd(&["results", "export", "2", "-o", "-"], dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success(), "a second record: {}", text(&out));
}

#[test]
fn a_refusal_agreed_by_every_rank_is_said_once_and_makes_nothing() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("q.bin");
    let trace = dir.path().join("t.csv");
    std::fs::write(&trace, "").unwrap();
    let t = target.to_str().unwrap();
    for (args, said) in [
        (
            vec!["trace", "replay", trace.to_str().unwrap(), t],
            "cannot tell the trace format",
        ),
        (
            vec!["suite", "filecopy", "--far", "nowhere", "."],
            "--far nowhere",
        ),
    ] {
        let out = mpirun(2, &args, dir.path()).output().unwrap();
        assert_ne!(out.status.code(), Some(0), "{}", text(&out));
        assert!(text(&out).contains(said), "{args:?}: {}", text(&out));
        // Agreed by every rank, said by rank 0.
        assert_eq!(text(&out).matches("Error:").count(), 1, "{}", text(&out));
        assert!(!target.exists());
    }
    let made: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("iolab-tmp"))
        .collect();
    assert!(made.is_empty(), "{made:?}");
}

#[test]
fn stonewalling_stops_every_rank_when_the_first_finishes() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    // Rank 0 has 1 MiB to read, the others 256 MiB each.
    let full = 256u64 << 20;
    sparse_files(dir.path(), &[1 << 20, full, full, full]);
    let pattern = dir.path().join("f.{rank}");
    let run = |stonewall: bool, json_name: &str| {
        let out_json = dir.path().join(json_name);
        let mut args = vec![
            "run",
            "--access",
            "read",
            "--bs",
            "4k",
            "--buffered",
            "--no-probe",
            "--json",
            out_json.to_str().unwrap(),
            pattern.to_str().unwrap(),
        ];
        if stonewall {
            args.push("--stonewall");
        }
        let out = mpirun(4, &args, dir.path()).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        json(&out_json)
    };
    let r = run(true, "wall.json");
    let scale = &r["scale"];
    assert_eq!(scale["share"], "own target");
    let ios: Vec<u64> = scale["rank_info"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| u(&k["jobs"][0]["read"]["ios"]))
        .collect();
    assert_eq!(ios[0], 256, "rank 0 read its whole file");
    let pass = full / 4096;
    for (rank, n) in ios.iter().enumerate().skip(1) {
        assert!(*n < pass, "rank {rank} read {n} of {pass}: not stopped");
    }
    assert_eq!(u(&r["jobs"][0]["read"]["ios"]), ios.iter().sum::<u64>());
    assert_eq!(r["jobs"][0]["complete"], true, "{}", r["jobs"][0]);
    let w = &scale["stonewall_windows"][0];
    assert_eq!(u(&w["first_rank"]), 0, "{w}");
    assert!(u(&w["longest_ns"]) >= u(&w["window_ns"]));
    // Without stonewalling every rank reads its whole file.
    let r = run(false, "all.json");
    let ios: Vec<u64> = r["scale"]["rank_info"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| u(&k["jobs"][0]["read"]["ios"]))
        .collect();
    assert_eq!(ios, vec![256, pass, pass, pass]);
    assert!(r["scale"]["stonewall_windows"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[test]
fn one_rank_refused_by_its_guard_stops_all_before_any_writes() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    // Rank 2's file is the user's: iolab may not write it. The others' do not exist yet.
    std::fs::write(dir.path().join("f.2"), b"the user's data").unwrap();
    let pattern = dir.path().join("f.{rank}");
    let out = mpirun(
        4,
        &[
            "run",
            "--access",
            "randwrite",
            "--size",
            "1m",
            "--ios-limit",
            "10",
            "--no-probe",
            pattern.to_str().unwrap(),
        ],
        dir.path(),
    )
    .output()
    .unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("rank 2 on") && err.contains("none ran"),
        "{err}"
    );
    assert_eq!(err.matches("Error:").count(), 1, "said once: {err}");
    for r in [0, 1, 3] {
        assert!(
            !dir.path().join(format!("f.{r}")).exists(),
            "rank {r} wrote"
        );
    }
    assert_eq!(
        std::fs::read(dir.path().join("f.2")).unwrap(),
        b"the user's data"
    );
}

/// Whether process `pid` descends from process `ancestor`.
fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        if p == ancestor {
            return true;
        }
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            return false;
        };
        // The parent's pid is the second field after the command's closing parenthesis.
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok());
        match ppid {
            Some(pp) if pp > 1 => p = pp,
            _ => return false,
        }
    }
    false
}

/// The pid of the iolab process that is rank `rank` of the mpirun `mpirun_pid`.
fn rank_pid(mpirun_pid: u32, rank: u32) -> Option<u32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_iolab")).ok()?;
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let e = e.ok()?;
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let path = std::fs::read_link(e.path().join("exe")).ok()?;
        if path != exe {
            return None;
        }
        let env = std::fs::read(e.path().join("environ")).ok()?;
        (env.split(|b| *b == 0).any(|kv| kv == want.as_bytes()) && descends_from(pid, mpirun_pid))
            .then_some(pid)
    })
}

/// Starts a 30-second run of 4 ranks on sparse files and waits until rank `rank` is running.
fn long_run(dir: &Path, json_name: &str, rank: u32) -> (std::process::Child, u32) {
    sparse_files(dir, &[64 << 20; 4]);
    let pattern = dir.join("f.{rank}");
    let out_json = dir.join(json_name);
    // A killed rank: the others get SIGTERM, and this long before SIGKILL to save. (Not for
    // every run: mpirun waits it out whenever a rank exits with an error.)
    let child = mpirun_with(
        4,
        &["--mca", "odls_base_sigkill_timeout", "10"],
        &[
            "run",
            "--access",
            "randread",
            "--bs",
            "4k",
            "--buffered",
            "--duration",
            "30",
            "--no-probe",
            "--json",
            out_json.to_str().unwrap(),
            pattern.to_str().unwrap(),
        ],
        dir,
    )
    .spawn()
    .unwrap();
    let mut pid = None;
    for _ in 0..200 {
        pid = rank_pid(child.id(), rank);
        if pid.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Into the job: past set-up and the first progress reports.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    (child, pid.expect("rank's process"))
}

#[test]
fn a_killed_rank_is_named_and_what_was_measured_is_kept() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let (child, pid) = long_run(dir.path(), "killed.json", 2);
    Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    let out: Output = child.wait_with_output().unwrap();
    assert_ne!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&dir.path().join("killed.json"));
    assert_eq!(r["complete"], false);
    let reason = r["incomplete_reason"].as_str().unwrap();
    assert!(reason.contains("rank 2 on"), "{reason}");
    let faults = r["scale"]["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(u(&faults[0]["rank"]), 2);
    assert!(faults[0]["reason"]
        .as_str()
        .unwrap()
        .contains(&pid.to_string()));
    // Rank 0's own job is kept in full, the others' counts as far as they were sent.
    let ranks = r["scale"]["rank_info"].as_array().unwrap();
    assert!(u(&ranks[0]["jobs"][0]["read"]["ios"]) > 0);
    for k in [1, 3] {
        assert!(u(&ranks[k]["last_progress"]["ios"]) > 0, "{}", ranks[k]);
    }
    assert!(u(&r["jobs"][0]["read"]["ios"]) > 0);
}

#[test]
fn a_failing_rank_stops_the_others_and_is_named() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let (child, _) = long_run(dir.path(), "failed.json", 1);
    // Rank 1's file loses its blocks under it: its reads come back short.
    std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join("f.1"))
        .unwrap()
        .set_len(0)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let r = json(&dir.path().join("failed.json"));
    assert_eq!(r["complete"], false);
    let reason = r["incomplete_reason"].as_str().unwrap();
    assert!(reason.contains("rank 1 on"), "{reason}");
    let ranks = r["scale"]["rank_info"].as_array().unwrap();
    // Every rank reported; the others were stopped well before their 30 s, naming rank 1.
    for (k, info) in ranks.iter().enumerate() {
        let job = &info["jobs"][0];
        assert!(u(&job["read"]["ios"]) > 0, "rank {k}");
        assert!(u(&job["measured_ns"]) < 25_000_000_000, "rank {k} ran on");
        if k != 1 {
            let why = job["stop_reason"].as_str().unwrap_or_default();
            assert!(why.contains("rank 1 on"), "rank {k}: {why}");
        }
    }
    assert_eq!(
        u(&r["jobs"][0]["read"]["ios"]),
        ranks
            .iter()
            .map(|k| u(&k["jobs"][0]["read"]["ios"]))
            .sum::<u64>()
    );
}

/// Two network namespaces joined by a veth pair, each with a host name of its own (a UTS
/// namespace per process started in it): two "hosts" on one machine. Removed on drop.
struct TwoHosts {
    namespaces: [String; 2],
    addresses: [String; 2],
    subnet: String,
}

impl TwoHosts {
    const NAMES: [&'static str; 2] = ["iolab-host-a", "iolab-host-b"];

    fn new() -> Result<TwoHosts, String> {
        let id = std::process::id() % 100_000;
        let octet = 16 + id % 200;
        let hosts = TwoHosts {
            namespaces: [format!("iolab-a-{id}"), format!("iolab-b-{id}")],
            addresses: [format!("10.231.{octet}.1"), format!("10.231.{octet}.2")],
            subnet: format!("10.231.{octet}.0/24"),
        };
        let ip = |args: &[&str]| -> Result<(), String> {
            let o = Command::new("ip")
                .args(args)
                .output()
                .map_err(|e| format!("ip: {e}"))?;
            if o.status.success() {
                Ok(())
            } else {
                Err(format!("ip {}: {}", args.join(" "), text(&o).trim()))
            }
        };
        let (a, b) = (&hosts.namespaces[0], &hosts.namespaces[1]);
        let veth = [format!("iva{id}"), format!("ivb{id}")];
        ip(&["netns", "add", a])?;
        ip(&["netns", "add", b])?;
        ip(&[
            "link", "add", &veth[0], "type", "veth", "peer", "name", &veth[1],
        ])?;
        for (k, ns) in [a, b].iter().enumerate() {
            ip(&["link", "set", &veth[k], "netns", ns])?;
            let cidr = format!("{}/24", hosts.addresses[k]);
            ip(&["-n", ns, "addr", "add", &cidr, "dev", &veth[k]])?;
            ip(&["-n", ns, "link", "set", &veth[k], "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        Ok(hosts)
    }

    /// A shell command that runs `cmd` as host `k`: in its namespace, under its name.
    fn enter(&self, k: usize, cmd: &str) -> Vec<String> {
        vec![
            "ip".into(),
            "netns".into(),
            "exec".into(),
            self.namespaces[k].clone(),
            "unshare".into(),
            "--uts".into(),
            "sh".into(),
            "-c".into(),
            format!(
                "echo {} > /proc/sys/kernel/hostname && exec {cmd}",
                Self::NAMES[k]
            ),
        ]
    }
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        for ns in &self.namespaces {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}

#[test]
fn two_hosts_over_tcp_give_a_breakdown_per_host() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let hosts = match TwoHosts::new() {
        Ok(h) => h,
        Err(why) => {
            println!("skipped: cannot make two network namespaces: {why}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // ssh's stand-in: mpirun starts its daemon on the other "host" through this.
    let agent = d.join("agent.sh");
    let mut script = String::from("#!/bin/sh\nhost=$1; shift\ncase $host in\n");
    for k in 0..2 {
        let inner = hosts.enter(k, "$*");
        let quoted: Vec<String> = inner
            .iter()
            .map(|a| format!("\"{}\"", a.replace('"', "\\\"")))
            .collect();
        script.push_str(&format!(
            "  {}) exec {} ;;\n",
            hosts.addresses[k],
            quoted.join(" ")
        ));
    }
    script.push_str("esac\necho \"agent: unknown host $host\" >&2; exit 1\n");
    std::fs::write(&agent, script).unwrap();
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let hostfile = d.join("hosts");
    std::fs::write(
        &hostfile,
        format!(
            "{} slots=2\n{} slots=2\n",
            hosts.addresses[0], hosts.addresses[1]
        ),
    )
    .unwrap();
    for name in TwoHosts::NAMES {
        for local in 0..2 {
            let f = std::fs::File::create(d.join(format!("f.{name}.{local}"))).unwrap();
            f.set_len(16 << 20).unwrap();
        }
    }
    let out_json = d.join("two.json");
    let mpirun_cmd = format!(
        "mpirun --allow-run-as-root --oversubscribe -np 4 --hostfile {} --map-by slot \
         --mca plm_rsh_agent {} --mca btl tcp,self --mca btl_tcp_if_include {subnet} \
         --mca oob_tcp_if_include {subnet} -x IOLAB_RESULTS_DIR {} run --access randread \
         --bs 4k --buffered --ios-limit 2000 --no-probe --json {} {}",
        hostfile.display(),
        agent.display(),
        env!("CARGO_BIN_EXE_iolab"),
        out_json.display(),
        d.join("f.{host}.{local_rank}").display(),
        subnet = hosts.subnet,
    );
    let argv = hosts.enter(0, &mpirun_cmd);
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(d)
        .env("IOLAB_RESULTS_DIR", d.join("results"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = json(&out_json);
    let scale = &r["scale"];
    let per_host: Vec<(String, u64, u64)> = scale["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["host"].as_str().unwrap().to_string(),
                h["ranks"].as_array().unwrap().len() as u64,
                u(&h["jobs"][0]["read"]["ios"]),
            )
        })
        .collect();
    assert_eq!(
        per_host,
        vec![
            ("iolab-host-a".to_string(), 2, 4000),
            ("iolab-host-b".to_string(), 2, 4000)
        ]
    );
    assert_eq!(u(&r["jobs"][0]["read"]["ios"]), 8000);
    // Each rank read its own host's file.
    for k in scale["rank_info"].as_array().unwrap() {
        let target = k["target"].as_str().unwrap();
        let want = format!("f.{}.{}", k["host"].as_str().unwrap(), u(&k["local_rank"]));
        assert!(target.ends_with(&want), "{target} is not {want}");
    }
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("iolab-host-a") && shown.contains("iolab-host-b"),
        "{shown}"
    );
}

#[test]
fn calibration_split_across_ranks_is_byte_identical() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    // Nine figures of both sets, dealt over the parts: the split is the same for any selection
    // (the whole sets take minutes).
    let args = ["sim", "calibrate", "--figure", "seq-read-qd", "--json"];
    let single = iolab_cmd(&args, dir.path()).output().unwrap();
    let split = mpirun(3, &args, dir.path()).output().unwrap();
    assert_eq!(
        split.status.code(),
        single.status.code(),
        "{}",
        text(&split)
    );
    assert!(single.stdout.len() > 1000, "{}", text(&single));
    assert!(
        single.stdout == split.stdout,
        "the ranks' rows differ from one process's"
    );
    // An id that names no figure: every rank finds it, rank 0 says it once.
    let none = mpirun(
        3,
        &["sim", "calibrate", "--figure", "no-such-id"],
        dir.path(),
    )
    .output()
    .unwrap();
    assert_eq!(none.status.code(), Some(2), "{}", text(&none));
    assert_eq!(
        text(&none)
            .matches("--figure \"no-such-id\": no figure id")
            .count(),
        1,
        "{}",
        text(&none)
    );
}

#[test]
fn each_rank_journals_its_verified_writes_in_its_own_file() {
    if let Some(why) = mpirun_skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _one = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let run = |journal: &str| {
        mpirun(
            2,
            &[
                "run",
                "f.{rank}",
                "--size",
                "4m",
                "--access",
                "randwrite",
                "--ios-limit",
                "300",
                "--verify-journal",
                journal,
                "--no-probe",
                "--json",
                "r.json",
            ],
            dir.path(),
        )
        .output()
        .unwrap()
    };
    // One journal for every rank is refused before anything is made.
    let out = run("j.log");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("put {rank} in its name"),
        "{}",
        text(&out)
    );
    assert!(!dir.path().join("f.0").exists() && !dir.path().join("j.log").exists());
    let out = run("j.{rank}");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let r = common::json(&dir.path().join("r.json"));
    for (k, info) in r["scale"]["rank_info"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let journal = info["jobs"][0]["verify"]["journal"].as_str().unwrap();
        assert!(journal.ends_with(&format!("j.{k}")), "{journal}");
        // Each rank's target checks against its own journal: every acknowledged write there.
        let f = format!("f.{k}");
        let j = format!("j.{k}");
        let v = iolab_cmd(&["verify", &f, "--journal", &j], dir.path())
            .output()
            .unwrap();
        assert_eq!(v.status.code(), Some(0), "{}", text(&v));
        assert!(text(&v).contains("300 acknowledged writes"), "{}", text(&v));
    }
}
