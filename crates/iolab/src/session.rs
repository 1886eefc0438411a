//! What every measuring command shares: the result's frame (tool, host, target, probe), live
//! progress on a terminal, saving the JSON result, and the exit code.

use crate::output::{self, Destination, Rules};
use anyhow::{Context, Result};
use iolab_core::result::{RunResult, TargetInfo, ToolInfo, SCHEMA_VERSION};
use iolab_engine::driver::Progress;
use iolab_engine::open::{EngineChoice, PreparedTarget};
use iolab_engine::sys::INTERRUPTED;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Exit code when I/O errors stopped a job.
pub const EXIT_IO_ERROR: i32 = 1;
/// Exit code after Ctrl-C or SIGTERM (the shell's convention for SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;
/// Exit code when data read back was not what was written (verify failures).
pub const EXIT_VERIFY_FAILED: i32 = 3;

/// The engine names accepted by `--engine`.
pub fn parse_engine(s: &str) -> Result<EngineChoice, String> {
    let name = if s == "uring" { "io_uring" } else { s };
    EngineChoice::NAMES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, e)| *e)
        .ok_or_else(|| {
            let names: Vec<&str> = EngineChoice::NAMES.iter().map(|(n, _)| *n).collect();
            format!("unknown engine '{s}': use {}", names.join(", "))
        })
}

/// A new result frame for a run of `kind` on `target`, with host facts and the host-path probe.
pub fn new_result(kind: &str, target: &PreparedTarget, probe: bool) -> RunResult {
    let info = TargetInfo {
        path: canonical_path(&target.path),
        kind: target.kind.name().to_string(),
        size_bytes: target.size_bytes,
        logical_block_bytes: target.logical_block_bytes,
        engine: if target.paced_engine == target.engine {
            target.engine.name().to_string()
        } else {
            format!(
                "{} ({} for paced jobs)",
                target.engine.name(),
                target.paced_engine.name()
            )
        },
        ..TargetInfo::default()
    };
    new_result_for(kind, info, target.notes.clone(), probe)
}

/// How results and the results store name a file, device or directory: its canonical
/// absolute path, so that `./t.bin`, `/home/u/t.bin` and a `/dev/disk/by-id/` link are each
/// one target (`results list --target`, comparisons). The path as given where it cannot be
/// resolved. A model's `sim:` spec is not a path and never comes here.
pub fn canonical_path(path: &Path) -> String {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// A new result frame for any target described by `info` (a directory, a model).
pub fn new_result_for(
    kind: &str,
    mut info: TargetInfo,
    notes: Vec<String>,
    probe: bool,
) -> RunResult {
    let started_unix_s = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    if probe {
        // The probe only reads sysfs; a failure costs the path facts, never the run.
        if let Ok(p) = iolab_probe::probe(Path::new(&info.path)) {
            info.path_summary = Some(p.summary());
            info.path_ceiling_bytes_per_s = p.ceiling_bytes_per_s();
            info.probe = serde_json::to_value(&p).ok();
        }
    }
    RunResult {
        schema_version: SCHEMA_VERSION,
        tool: ToolInfo {
            name: "iolab".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        },
        kind: kind.to_string(),
        started_unix_s,
        complete: true,
        incomplete_reason: None,
        host: iolab_engine::host::host_info(),
        target: info,
        notes,
        jobs: Vec::new(),
        suite: None,
        replay: None,
        scale: None,
    }
}

/// Marks the result incomplete when a job was cut short, and says why.
pub fn settle(result: &mut RunResult) {
    if let Some(j) = result.jobs.iter().find(|j| !j.complete) {
        result.complete = false;
        // A reason given already (a job that failed and stopped those beside it) stays.
        result.incomplete_reason.get_or_insert(format!(
            "job '{}': {}",
            j.name,
            j.stop_reason.as_deref().unwrap_or("stopped early")
        ));
    }
    if INTERRUPTED.load(Ordering::Relaxed) {
        result.complete = false;
        result
            .incomplete_reason
            .get_or_insert_with(|| "interrupted".into());
    }
}

/// The exit code a settled result deserves.
pub fn exit_code(result: &RunResult) -> i32 {
    let verify_failed = result
        .jobs
        .iter()
        .any(|j| j.verify.as_ref().is_some_and(|v| v.failures > 0));
    if INTERRUPTED.load(Ordering::Relaxed) {
        EXIT_INTERRUPTED
    } else if verify_failed {
        EXIT_VERIFY_FAILED
    } else if result.complete {
        0
    } else {
        EXIT_IO_ERROR
    }
}

/// Where results go when `--json` is not given: `$IOLAB_RESULTS_DIR`, else the user's data
/// directory (`$XDG_DATA_HOME/iolab/results`, `~/.local/share/iolab/results`).
pub fn default_results_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("IOLAB_RESULTS_DIR") {
        return PathBuf::from(d);
    }
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("iolab/results")
}

/// Shows a measuring command's tables: on standard output, or on standard error when the JSON
/// result takes standard output (`--json -`), so that a pipe gets one document it can parse.
/// A closed standard output (`| head`) does not stop the command before it saves its result.
pub fn show(text: &str, json: Option<&Path>) {
    let _ = if json == Some(Path::new("-")) {
        std::io::stderr().write_all(text.as_bytes())
    } else {
        std::io::stdout().write_all(text.as_bytes())
    };
}

/// Checks, before anything is measured, that the result can be saved where it will go (see
/// [`crate::output`]): `--json PATH` may be written under `rules`, or the default results
/// directory exists and takes a new file; and the results store the run is recorded in is one.
/// Finding out after a suite of many minutes would cost the whole run.
pub fn check_output(json: Option<&Path>, rules: &Rules) -> Result<()> {
    let (store, from) = crate::cmd::results::db_path(None);
    output::check_store(&store, from)?;
    match json {
        None => {
            let dir = default_results_dir();
            std::fs::create_dir_all(&dir)
                .and_then(|()| output::check_writable_dir(&dir))
                .with_context(|| {
                    format!(
                        "cannot write in the results directory {}: set IOLAB_RESULTS_DIR to a \
                         writable directory, or give --json PATH",
                        dir.display()
                    )
                })
        }
        Some(p) => output::check("--json", p, rules).map(|_| ()),
    }
}

/// The file a result goes to in the results directory: `KIND-STAMP-PID{tag}.json`.
pub fn default_result_file(result: &RunResult, tag: &str) -> PathBuf {
    default_results_dir().join(format!(
        "{}-{}-{}{tag}.json",
        result.kind.replace([':', '/'], "-"),
        utc_stamp(result.started_unix_s),
        std::process::id()
    ))
}

/// Saves the result as JSON: to `json` (`-` for standard output) or a new file in the default
/// results directory, and records it in the results store; a suite's HTML report goes beside a
/// JSON file that is a regular file. Every file is written under `rules` (see
/// [`crate::output`]). Returns where they went.
pub fn save(result: &RunResult, json: Option<&Path>, rules: &Rules) -> Result<String> {
    let text = serde_json::to_string_pretty(result).context("serialising the result")? + "\n";
    // Into the results store first: a JSON file that cannot be written (a directory removed
    // during the run, a full disk) then still leaves the run recorded. A store that fails
    // costs a warning; the JSON below is kept.
    let recorded = crate::cmd::results::record(result);
    let path = match json {
        Some(p) => p.to_path_buf(),
        None => default_result_file(result, ""),
    };
    let written = path
        .parent()
        .filter(|d| json.is_none() && !d.as_os_str().is_empty())
        .map_or(Ok(()), |d| {
            std::fs::create_dir_all(d).map_err(anyhow::Error::from)
        })
        .and_then(|()| output::write("--json", &path, rules, text.as_bytes()));
    let dest = match written {
        Ok(dest) => dest,
        Err(e) => {
            let kept = match recorded {
                Some(id) => format!(
                    "; the run is recorded in the results store as run {id}: \
                     `iolab results export {id} -o FILE` writes its JSON"
                ),
                None => "; it is not in the results store either".into(),
            };
            anyhow::bail!("writing the result to {}: {e:#}{kept}", path.display());
        }
    };
    let saved = match &dest {
        Destination::Stdout => return Ok("standard output".into()),
        _ => path.display().to_string(),
    };
    // A suite run's report goes beside its JSON (also for an incomplete run), but only beside a
    // regular file: beside /dev/null or a pipe it would be a stray `/dev/null.html`.
    if result.suite.is_some() {
        if !matches!(dest, Destination::File(_)) {
            say!(
                "note: no HTML report: {saved} is not a regular file (render one with \
                 `iolab report RESULT.json -o OUT.html` from a saved result)"
            );
            return Ok(saved);
        }
        let html = crate::cmd::report::write_beside(result, &path, rules)?;
        return Ok(format!("{saved} (report: {})", html.display()));
    }
    Ok(saved)
}

/// `YYYYmmddTHHMMSSZ` for a Unix time.
pub fn utc_stamp(unix_s: f64) -> String {
    iolab_core::time::UtcTime::from_unix(unix_s).compact()
}

/// Runs `f` while a line on standard error shows live IOPS, MB/s and time left — only when
/// standard error is a terminal, so logs and pipes stay clean.
pub fn with_progress<T>(label: &str, expected_s: Option<f64>, f: impl FnOnce(&Progress) -> T) -> T {
    let progress = Progress::default();
    if !std::io::stderr().is_terminal() {
        return f(&progress);
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let start = Instant::now();
            let (mut last_ios, mut last_bytes, mut last_t) = (0u64, 0u64, start);
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                if last_t.elapsed() < Duration::from_secs(1) {
                    continue;
                }
                let now = Instant::now();
                let dt = now.duration_since(last_t).as_secs_f64();
                let ios = progress.ios.load(Ordering::Relaxed);
                let bytes = progress.bytes.load(Ordering::Relaxed);
                let left = expected_s
                    .map(|e| {
                        format!(
                            ", {:.0} s left",
                            (e - start.elapsed().as_secs_f64()).max(0.0)
                        )
                    })
                    .unwrap_or_default();
                let _ = write!(
                    std::io::stderr(),
                    "\r\x1b[2K{label}: {:.0} IOPS, {:.1} MB/s{left}",
                    (ios - last_ios) as f64 / dt,
                    (bytes - last_bytes) as f64 / dt / 1e6
                );
                let _ = std::io::stderr().flush();
                (last_ios, last_bytes, last_t) = (ios, bytes, now);
            }
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        });
        let out = f(&progress);
        done.store(true, Ordering::Relaxed);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_output_is_checked_before_anything_is_measured() {
        let dir = tempfile::tempdir().unwrap();
        let none = Rules::default();
        let err = |p: &Path| format!("{:#}", check_output(Some(p), &none).unwrap_err());
        let missing = dir.path().join("no/such/dir/x.json");
        let e = err(&missing);
        assert!(e.contains("--json") && e.contains("does not exist"), "{e}");
        assert!(err(dir.path()).contains("is a directory"));
        check_output(Some(&dir.path().join("x.json")), &none).unwrap();
        check_output(Some(Path::new("-")), &none).unwrap();
        let null = Rules::new(&[Path::new("/dev/null")], false);
        check_output(Some(Path::new("/dev/null")), &null).unwrap();
        // The check leaves nothing behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_result_that_cannot_be_written_is_still_recorded_and_said_where() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("results.sqlite");
        // The only test here that records: no other reads IOLAB_DB meanwhile.
        std::env::set_var("IOLAB_DB", &db);
        let result = new_result_for("run", TargetInfo::default(), Vec::new(), false);
        // The directory went away during the run.
        let e = save(
            &result,
            Some(&dir.path().join("gone/r.json")),
            &Rules::default(),
        )
        .unwrap_err();
        std::env::remove_var("IOLAB_DB");
        let e = format!("{e:#}");
        assert!(
            e.contains("recorded in the results store as run 1")
                && e.contains("iolab results export 1 -o FILE"),
            "{e}"
        );
        let store = iolab_report::store::Store::open_existing(&db).unwrap();
        assert_eq!(store.list(&Default::default()).unwrap().1, 1);
    }

    #[test]
    fn utc_stamps() {
        assert_eq!(utc_stamp(0.0), "19700101T000000Z");
        assert_eq!(utc_stamp(1_795_392_000.0 + 3661.0), "20261123T010101Z");
    }
}
