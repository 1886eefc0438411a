//! What every measuring command shares: the result's frame (tool, host, target, probe), live
//! progress on a terminal, saving the JSON result, and the exit code.

use anyhow::{Context, Result};
use iolab_core::result::{RunResult, TargetInfo, ToolInfo, SCHEMA_VERSION};
use iolab_engine::driver::Progress;
use iolab_engine::open::{EngineChoice, PreparedTarget};
use iolab_engine::sys::INTERRUPTED;
use std::io::{IsTerminal, Write};
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Exit code when I/O errors stopped a job.
pub const EXIT_IO_ERROR: i32 = 1;
/// Exit code after Ctrl-C or SIGTERM (the shell's convention for SIGINT).
pub const EXIT_INTERRUPTED: i32 = 130;

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
    }
}

/// Marks the result incomplete when a job was cut short, and says why.
pub fn settle(result: &mut RunResult) {
    if let Some(j) = result.jobs.iter().find(|j| !j.complete) {
        result.complete = false;
        result.incomplete_reason = Some(format!(
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
    if INTERRUPTED.load(Ordering::Relaxed) {
        EXIT_INTERRUPTED
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

/// Checks, before anything is measured, that the result can be saved where it will go: the
/// directory of `--json PATH` (or the default results directory) exists and takes a new file.
/// Finding out after a suite of many minutes would cost the whole run. Nor may it be one of
/// the run's `inputs` (job or suite file, trace, target): the result would replace it.
pub fn check_output(json: Option<&Path>, inputs: &[&Path]) -> Result<()> {
    match json {
        None => {
            let dir = default_results_dir();
            std::fs::create_dir_all(&dir).with_context(|| {
                format!(
                    "cannot create the results directory {}: set IOLAB_RESULTS_DIR to a \
                     writable directory, or give --json PATH",
                    dir.display()
                )
            })?;
            check_writable_dir(&dir).with_context(|| {
                format!(
                    "cannot write in the results directory {}: set IOLAB_RESULTS_DIR to a \
                     writable directory, or give --json PATH",
                    dir.display()
                )
            })
        }
        Some(p) if p == Path::new("-") => Ok(()),
        Some(p) => {
            check_not_input("--json", p, inputs)?;
            let shown = p.display();
            match std::fs::metadata(p) {
                Ok(m) if m.is_dir() => anyhow::bail!(
                    "--json {shown} is a directory: give a file path, e.g. {}",
                    p.join("result.json").display()
                ),
                Ok(m) if m.file_type().is_block_device() => {
                    return Err(block_device_output(p)).context("--json")
                }
                // Standard output, /dev/null, a FIFO: written through as they are.
                Ok(m) if !m.is_file() => return Ok(()),
                _ => {}
            }
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            if !dir.is_dir() {
                anyhow::bail!(
                    "--json {shown}: the directory {} does not exist; create it or give a path \
                     in an existing directory",
                    dir.display()
                );
            }
            check_writable_dir(dir).with_context(|| {
                format!(
                    "--json {shown}: cannot write in {}; give a path in a writable directory",
                    dir.display()
                )
            })
        }
    }
}

/// Creates and removes a file in `dir`, as saving will (it writes a temporary file beside the
/// result and renames it): permission bits alone miss read-only mounts and ACLs.
fn check_writable_dir(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".iolab-write-check.{}.tmp", std::process::id()));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}

/// Saves the result as JSON: to `json` (`-` for standard output) or a new file in the default
/// results directory, and records it in the results store; a suite's HTML report goes beside a
/// JSON file that is a regular file. Returns where they went.
pub fn save(result: &RunResult, json: Option<&Path>) -> Result<String> {
    let text = serde_json::to_string_pretty(result).context("serialising the result")?;
    // Into the results store first: a JSON file that cannot be written (a directory removed
    // during the run, a full disk) then still leaves the run recorded. A store that fails
    // costs a warning; the JSON below is kept.
    let recorded = crate::cmd::results::record(result);
    if json == Some(Path::new("-")) {
        // A closed pipe loses this copy only: the result is recorded in the store.
        let _ = writeln!(std::io::stdout(), "{text}");
        return Ok("standard output".into());
    }
    let path = match json {
        Some(p) => p.to_path_buf(),
        None => default_results_dir().join(format!(
            "{}-{}-{}.json",
            result.kind.replace([':', '/'], "-"),
            utc_stamp(result.started_unix_s),
            std::process::id()
        )),
    };
    let written = path
        .parent()
        .filter(|d| json.is_none() && !d.as_os_str().is_empty())
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| write_replacing(&path, &(text + "\n")));
    if let Err(e) = written {
        let kept = match recorded {
            Some(id) => format!(
                "; the run is recorded in the results store as run {id}: \
                 `iolab results export {id} -o FILE` writes its JSON"
            ),
            None => "; it is not in the results store either".into(),
        };
        anyhow::bail!("writing the result to {}: {e}{kept}", path.display());
    }
    // A suite run's report goes beside its JSON (also for an incomplete run), but only beside a
    // regular file: beside /dev/null or a pipe it would be a stray `/dev/null.html`.
    if result.suite.is_some() {
        if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            say!(
                "note: no HTML report: {} is not a regular file (render one with \
                 `iolab report RESULT.json -o OUT.html` from a saved result)",
                path.display()
            );
            return Ok(path.display().to_string());
        }
        let html = crate::cmd::report::write_beside(result, &path)?;
        return Ok(format!("{} (report: {})", path.display(), html.display()));
    }
    Ok(path.display().to_string())
}

/// Writes `text` to `path` through a temporary file beside it, renamed over it once written, so
/// a run killed mid-write leaves the previous save whole (a suite saves after its jobs). What is
/// not a plain file (`/dev/stdout`, a pipe, a symbolic link) is written through as it is: a
/// rename would replace it.
pub fn write_replacing(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file()) {
        return write_output(path, text.as_bytes());
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

/// Whether two files' metadata are of one file (a name, a link or a hard link to it).
pub fn same_inode(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

/// Refuses an output that is the same file as one of the command's inputs: writing it would
/// truncate (or replace) what is being read, or was read to make it. `output` is named with
/// `flag` (`-o`, `--html`, `--json`), each input by its path. The same device and inode where
/// the output exists (a hard link, a symbolic link, `./x` and `/abs/x` are all caught); where it
/// does not, its canonical path. Standard input and output (`-`) are not files, and an output
/// that is not a regular file (/dev/null, a pipe, a terminal) loses nothing when written.
pub fn check_not_input(flag: &str, output: &Path, inputs: &[&Path]) -> Result<()> {
    if output == Path::new("-") {
        return Ok(());
    }
    let out_meta = std::fs::metadata(output).ok();
    if out_meta.as_ref().is_some_and(|m| !m.is_file()) {
        return Ok(());
    }
    // Where the output does not exist yet: its directory resolved, its name as given.
    let canonical = |p: &Path| -> Option<PathBuf> {
        std::fs::canonicalize(p).ok().or_else(|| {
            let dir = match p.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
        })
    };
    for input in inputs.iter().filter(|p| **p != Path::new("-")) {
        let same = match (&out_meta, std::fs::metadata(input)) {
            (Some(o), Ok(i)) => same_inode(o, &i),
            _ => *input == output || canonical(input).is_some_and(|c| Some(c) == canonical(output)),
        };
        if same {
            anyhow::bail!(
                "{flag} {} is the same file as the input {}: writing it would destroy the input; \
                 give {flag} another path",
                output.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// Creates (or truncates) the output file `path`. A block device is refused: a result, report
/// or trace written there lands on the device's data, which no output option offers to
/// destroy (only `--destroy-data` does, for the run's target). Standard output, /dev/null and
/// pipes are written through.
pub fn create_output(path: &Path) -> std::io::Result<std::fs::File> {
    if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_block_device()) {
        return Err(block_device_output(path));
    }
    std::fs::File::create(path)
}

/// Writes `contents` to the output file `path` (see [`create_output`]).
pub fn write_output(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    create_output(path)?.write_all(contents)
}

fn block_device_output(path: &Path) -> std::io::Error {
    std::io::Error::other(format!(
        "{} is a block device: an output written there would overwrite its data; give a file \
         path",
        path.display()
    ))
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
    fn a_replacing_write_leaves_the_new_text_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        write_replacing(&path, "first").unwrap();
        write_replacing(&path, "second, longer").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second, longer");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "{names:?}");
        // A directory that is not there: an error, and nothing left behind.
        assert!(write_replacing(&dir.path().join("no/s.json"), "x").is_err());
        // A symbolic link is written through, not replaced.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        write_replacing(&link, "through the link").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "through the link");
    }

    #[test]
    fn the_output_is_checked_before_anything_is_measured() {
        let dir = tempfile::tempdir().unwrap();
        let err = |p: &Path| format!("{:#}", check_output(Some(p), &[]).unwrap_err());
        let missing = dir.path().join("no/such/dir/x.json");
        let e = err(&missing);
        assert!(e.contains("--json") && e.contains("does not exist"), "{e}");
        assert!(err(dir.path()).contains("is a directory"));
        check_output(Some(&dir.path().join("x.json")), &[]).unwrap();
        check_output(Some(Path::new("-")), &[]).unwrap();
        check_output(Some(Path::new("/dev/null")), &[Path::new("/dev/null")]).unwrap();
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
        let e = save(&result, Some(&dir.path().join("gone/r.json"))).unwrap_err();
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
