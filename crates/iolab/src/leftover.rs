//! The test file a command creates when given no target, and the ones earlier runs left.
//!
//! A run removes its test file when it ends, Ctrl-C included; a run that is killed (SIGKILL,
//! a crash, the machine's OOM killer) cannot. Its file was named with one fixed name, which the
//! next run then took as a file iolab had created and ran on, and, not having created it
//! itself, never removed: gigabytes left for good, without a word. So a run's own test file
//! carries its process id (`iolab-quick.4711.iolab-tmp`), and before a new run creates its own,
//! it removes those whose process is gone, saying so. A file whose process still runs belongs
//! to a run going on beside it and is left alone; so is a file iolab did not mark as its own
//! (`user.iolab.created`), which is said, as it may be someone's data that only looks like one.
//! `--keep` keeps its file under the plain name (`iolab-quick.iolab-tmp`), which later runs use
//! and keep, as they say.

use iolab_core::size::human_size;
use std::path::{Path, PathBuf};

/// The extension of every test file iolab creates for a run without a target.
const EXTENSION: &str = "iolab-tmp";

/// The test file a run of this process creates: `STEM.PID.iolab-tmp`.
pub fn own_test_file(stem: &str) -> PathBuf {
    PathBuf::from(test_file_name(stem, std::process::id()))
}

/// The kept test file (`--keep`): `STEM.iolab-tmp`.
pub fn kept_test_file(stem: &str) -> PathBuf {
    PathBuf::from(format!("{stem}.{EXTENSION}"))
}

fn test_file_name(stem: &str, pid: u32) -> String {
    format!("{stem}.{pid}.{EXTENSION}")
}

/// The process id in `name` if it is a run's own test file of `stem` (`STEM.PID.iolab-tmp`).
fn owner_pid(stem: &str, name: &str) -> Option<u32> {
    let pid = name
        .strip_prefix(stem)?
        .strip_prefix('.')?
        .strip_suffix(EXTENSION)?
        .strip_suffix('.')?;
    // Digits only: `u32::from_str` also takes a leading `+`.
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// What became of a test file a run left behind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Leftover {
    /// Removed: its run is gone (path, size in bytes, process id).
    Removed(PathBuf, u64, u32),
    /// Left alone: iolab did not mark it as its own.
    Unmarked(PathBuf),
    /// Could not be removed (path, why).
    Failed(PathBuf, String),
}

impl std::fmt::Display for Leftover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Leftover::Removed(path, bytes, pid) => write!(
                f,
                "removed {} ({}), the test file of an earlier run (process {pid}) that ended \
                 without removing it (killed, or crashed)",
                path.display(),
                human_size(*bytes)
            ),
            Leftover::Unmarked(path) => write!(
                f,
                "left {} alone: it is named like the test file of a run that ended without \
                 removing it, but it does not carry iolab's mark (the user.iolab.created \
                 extended attribute); remove it yourself if it is one",
                path.display()
            ),
            Leftover::Failed(path, why) => write!(
                f,
                "could not remove {}, the test file of an earlier run that ended without \
                 removing it: {why}; remove it yourself",
                path.display()
            ),
        }
    }
}

/// Removes from `dir` the test files of `stem` that runs left behind: those whose process,
/// by `alive`, is gone, and that carry iolab's mark. Not this process's own, not a link (its
/// far end is no test file of ours), and nothing at all where `alive` cannot be told
/// (`None`: no /proc), as a run going on beside this one would lose its file.
pub fn remove_left_test_files(
    dir: &Path,
    stem: &str,
    alive: impl Fn(u32) -> Option<bool>,
) -> Vec<Leftover> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, u32)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name();
            let pid = owner_pid(stem, name.to_str()?)?;
            // Named as the user would (`iolab-quick.4711.iolab-tmp`, not `./…`) in the working
            // directory.
            let path = if dir == Path::new(".") {
                PathBuf::from(name)
            } else {
                e.path()
            };
            Some((path, pid))
        })
        .filter(|(_, pid)| *pid != std::process::id())
        .collect();
    found.sort();
    let mut done = Vec::new();
    for (path, pid) in found {
        if alive(pid) != Some(false) {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let marked =
            std::fs::File::open(&path).is_ok_and(|f| iolab_engine::sys::is_marked_created(&f));
        if !marked {
            done.push(Leftover::Unmarked(path));
            continue;
        }
        done.push(match std::fs::remove_file(&path) {
            Ok(()) => Leftover::Removed(path, meta.len(), pid),
            Err(e) => Leftover::Failed(path, e.to_string()),
        });
    }
    done
}

/// The test file for a run of `stem`'s command given no target, after removing those earlier
/// runs left in the working directory (said, one line each): the one an earlier `--keep` kept,
/// if it is there and iolab's (it stays, as said), else this run's own, which `keep` keeps
/// under the plain name instead.
pub fn default_test_file(stem: &str, keep: bool) -> PathBuf {
    for left in remove_left_test_files(Path::new("."), stem, process_alive) {
        say!("{left}");
    }
    let kept = kept_test_file(stem);
    let ours = std::fs::File::open(&kept).is_ok_and(|f| iolab_engine::sys::is_marked_created(&f));
    if ours {
        say!(
            "using the test file {} that an earlier run kept (--keep); it stays: remove it to \
             have a run create its own and remove it afterwards",
            kept.display()
        );
    }
    if keep || ours {
        return kept;
    }
    own_test_file(stem)
}

/// Whether process `pid` exists, by `/proc`; `None` where `/proc` is not mounted.
pub fn process_alive(pid: u32) -> Option<bool> {
    if !Path::new("/proc/self").exists() {
        return None;
    }
    Some(Path::new("/proc").join(pid.to_string()).exists())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_files_name_carries_its_process_id() {
        assert_eq!(
            owner_pid("iolab-quick", "iolab-quick.4711.iolab-tmp"),
            Some(4711)
        );
        for name in [
            "iolab-quick.iolab-tmp",
            "iolab-quick..iolab-tmp",
            "iolab-quick.+4711.iolab-tmp",
            "iolab-quick.47x1.iolab-tmp",
            "iolab-quick.4711.iolab-tmp.bak",
            "iolab-suite.4711.iolab-tmp",
            "iolab-quick.99999999999.iolab-tmp",
        ] {
            assert_eq!(owner_pid("iolab-quick", name), None, "{name}");
        }
        let own = own_test_file("iolab-quick");
        assert_eq!(
            owner_pid("iolab-quick", own.to_str().unwrap()),
            Some(std::process::id())
        );
    }

    /// A file of `len` bytes named `name` in `dir`, marked as iolab's if `marked`.
    fn file(dir: &Path, name: &str, len: u64, marked: bool) -> PathBuf {
        let path = dir.join(name);
        let f = std::fs::File::create(&path).unwrap();
        f.set_len(len).unwrap();
        if marked {
            iolab_engine::sys::mark_created(&f).unwrap();
        }
        path
    }

    #[test]
    fn only_marked_files_of_gone_runs_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let gone = file(d, "iolab-quick.100.iolab-tmp", 4096, true);
        let running = file(d, "iolab-quick.200.iolab-tmp", 4096, true);
        let unmarked = file(d, "iolab-quick.300.iolab-tmp", 4096, false);
        let kept = file(d, "iolab-quick.iolab-tmp", 4096, true);
        let other = file(d, "iolab-suite.100.iolab-tmp", 4096, true);
        let own = file(
            d,
            &test_file_name("iolab-quick", std::process::id()),
            1,
            true,
        );
        std::os::unix::fs::symlink(&other, d.join("iolab-quick.400.iolab-tmp")).unwrap();
        let alive = |pid| Some(pid == 200);
        let done = remove_left_test_files(d, "iolab-quick", alive);
        assert_eq!(
            done,
            vec![
                Leftover::Removed(gone.clone(), 4096, 100),
                Leftover::Unmarked(unmarked.clone()),
            ]
        );
        assert!(!gone.exists());
        for stays in [&running, &unmarked, &kept, &other, &own] {
            assert!(stays.exists(), "{}", stays.display());
        }
        assert!(done[0].to_string().contains("process 100"), "{}", done[0]);
        assert!(
            done[1].to_string().contains("remove it yourself"),
            "{}",
            done[1]
        );
        // Where liveness cannot be told, nothing is removed.
        let gone = file(d, "iolab-quick.500.iolab-tmp", 4096, true);
        assert_eq!(remove_left_test_files(d, "iolab-quick", |_| None), vec![]);
        assert!(gone.exists());
    }
}
