//! Where iolab may write: the one policy for every file it writes — JSON results, HTML reports,
//! exported runs, synthesised and converted traces, the results store.
//!
//! An output is refused, before anything is measured or written, when it is
//! - a block device, or a character device other than `/dev/null` or a terminal: its data is
//!   not iolab's to replace (only `--destroy-data` offers a device, and only as a target);
//! - one of the command's inputs or the results store, under any name (a link, `./x`, an
//!   absolute path, a hard link);
//! - a file a loop device is bound to, a mount point, or active swap: whatever uses it would
//!   see its bytes change underneath;
//! - an existing file iolab did not write (it marks its own with `user.iolab.created`), unless
//!   `--overwrite` is given.
//!
//! A file is written whole or not at all: into a temporary file in the same directory, marked
//! as iolab's, then renamed over the path (through a symbolic link, onto the file it names, so
//! the link stays). Standard output (`-`), `/dev/null`, a terminal and a pipe are written
//! through as they are.

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The rules one command's outputs obey.
#[derive(Clone, Debug, Default)]
pub struct Rules<'a> {
    /// What the command reads (target, job or suite file, trace, profile, saved results):
    /// never written over.
    pub inputs: Vec<&'a Path>,
    /// `--overwrite`: an existing file iolab did not write may be replaced.
    pub overwrite: bool,
}

impl<'a> Rules<'a> {
    /// Rules for a command reading `inputs`.
    pub fn new(inputs: &[&'a Path], overwrite: bool) -> Self {
        Rules {
            inputs: inputs.to_vec(),
            overwrite,
        }
    }
}

/// Where an output goes once checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// `-`: standard output.
    Stdout,
    /// `/dev/null`, a terminal, a pipe: written through, nothing is replaced.
    Through(PathBuf),
    /// A regular file (new, or one the rules let iolab replace), by its real path: a symbolic
    /// link is resolved so that the rename replaces the file, not the link.
    File(PathBuf),
}

/// Checks that `path`, given with `flag` (`--json`, `-o`, `--html`, …), may be written under
/// `rules`, and says where the bytes will go.
pub fn check(flag: &str, path: &Path, rules: &Rules) -> Result<Destination> {
    if path == Path::new("-") {
        return Ok(Destination::Stdout);
    }
    let shown = path.display();
    let link = std::fs::symlink_metadata(path).ok();
    let meta = match (std::fs::metadata(path), &link) {
        (Ok(m), _) => Some(m),
        (Err(_), Some(l)) if l.file_type().is_symlink() => bail!(
            "{flag} {shown} is a symbolic link to nothing ({}): iolab will not create a file \
             where a link points; give the file's own path",
            std::fs::read_link(path).map_or_else(|_| "?".into(), |t| t.display().to_string())
        ),
        (Err(_), _) => None,
    };
    if let Some(m) = &meta {
        let kind = m.file_type();
        if kind.is_dir() {
            bail!(
                "{flag} {shown} is a directory: give a file path, e.g. {}",
                path.join("result.json").display()
            );
        }
        if kind.is_block_device() {
            bail!(
                "{flag} {shown} is a block device: an output written there would overwrite the \
                 data on it; give a file path"
            );
        }
        if kind.is_char_device() {
            if harmless_char_device(m.rdev()) {
                return Ok(Destination::Through(path.to_path_buf()));
            }
            bail!(
                "{flag} {shown} is a character device: iolab writes its outputs to files, \
                 standard output (-), a pipe or /dev/null only"
            );
        }
        if !kind.is_file() {
            // A FIFO or a socket: a reader takes the bytes; nothing stored is replaced.
            return Ok(Destination::Through(path.to_path_buf()));
        }
    }
    let real = real_path(path).with_context(|| format!("{flag} {shown}"))?;
    refuse_inputs(flag, path, &real, meta.as_ref(), rules)?;
    let Some(meta) = meta else {
        check_directory(flag, path, &real)?;
        return Ok(Destination::File(real));
    };
    iolab_engine::guard::check_file_in_use(&real).map_err(|e| anyhow::anyhow!("{flag}: {e}"))?;
    if iolab_engine::guard::mount_points()
        .unwrap_or_default()
        .contains(&real)
    {
        bail!(
            "{flag} {shown} is a mount point: something is mounted on it, and replacing it \
             would change what that mount shows; give another path"
        );
    }
    if !rules.overwrite && !written_by_iolab(&real) {
        bail!(
            "{flag} {shown} exists and was not written by iolab ({} bytes): pass --overwrite to \
             replace it, or give another path",
            meta.len()
        );
    }
    Ok(Destination::File(real))
}

/// The results store, given by `from` (`IOLAB_DB`, `--db`, …): only a regular file that is an
/// SQLite database (or empty, or not there yet, to be created) is opened. A device, another
/// program's file or a file something else uses is refused, untouched.
pub fn check_store(path: &Path, from: &str) -> Result<()> {
    let shown = path.display();
    // The link is looked at before what it leads to, as in `check`: the other order took a
    // store another run created between the two looks for a symbolic link to nothing.
    let link = std::fs::symlink_metadata(path).ok();
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if link.is_some_and(|l| l.file_type().is_symlink()) {
                bail!("the results store {shown} ({from}) is a symbolic link to nothing: give the database file's own path");
            }
            return Ok(());
        }
        Err(e) => bail!("the results store {shown} ({from}) cannot be examined: {e}"),
    };
    if !meta.is_file() {
        let what = match meta.file_type() {
            k if k.is_dir() => "a directory (give the database file in it, e.g. results.sqlite)",
            k if k.is_block_device() => {
                "a block device: SQLite written there would destroy its data"
            }
            k if k.is_char_device() => "a character device",
            _ => "not a regular file",
        };
        bail!("the results store {shown} ({from}) is {what}; point {from} at a database file");
    }
    let real = real_path(path)?;
    iolab_engine::guard::check_file_in_use(&real)
        .map_err(|e| anyhow::anyhow!("the results store ({from}): {e}"))?;
    if meta.len() > 0 && !starts_with_sqlite_header(&real) {
        bail!(
            "the results store {shown} ({from}) is not an SQLite database ({} bytes of something \
             else): iolab would destroy it; point {from} at a results store or a new file",
            meta.len()
        );
    }
    Ok(())
}

/// Whether `path` starts with SQLite's 16-byte file header.
fn starts_with_sqlite_header(path: &Path) -> bool {
    let mut head = [0u8; 16];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| &head == b"SQLite format 3\0")
}

/// Writes `bytes` to `path` under `rules` (checked again here: the file may have appeared since
/// the command began). Returns where they went.
pub fn write(flag: &str, path: &Path, rules: &Rules, bytes: &[u8]) -> Result<Destination> {
    let dest = check(flag, path, rules)?;
    let (mut sink, pending) = open(&dest).with_context(|| format!("{flag} {}", path.display()))?;
    sink.write_all(bytes)
        .and_then(|()| sink.flush())
        .and_then(|()| pending.commit())
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(dest)
}

/// Creates a file that is written as a run goes and must stay at its path through a crash
/// (the verify journal): checked as every output is, then created in place (no temporary
/// file and rename) and marked as iolab's. Standard output and pipes are refused: a journal
/// must be a file that is there after a power cut.
pub fn create_in_place(flag: &str, path: &Path, rules: &Rules) -> Result<std::fs::File> {
    let dest = check(flag, path, rules)?;
    let Destination::File(real) = dest else {
        bail!(
            "{flag} {}: give a regular file, which is still there after a crash",
            path.display()
        );
    };
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&real)
        .with_context(|| format!("{flag} {}", path.display()))?;
    let _ = iolab_engine::sys::mark_created(&file);
    Ok(file)
}

/// Opens `dest` for writing: the writer, and the [`Pending`] output that
/// [`Pending::commit`] puts in place once everything is written. A file is written into a
/// temporary file beside it, marked as iolab's.
pub fn open(dest: &Destination) -> std::io::Result<(Box<dyn Write>, Pending)> {
    Ok(match dest {
        Destination::Stdout => (Box::new(std::io::stdout()), Pending(None)),
        Destination::Through(p) => (
            Box::new(std::fs::OpenOptions::new().write(true).open(p)?),
            Pending(None),
        ),
        Destination::File(path) => {
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let tmp = path.with_file_name(format!(".{name}.{}.iolab-tmp", std::process::id()));
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            // Marked before it takes the path, so a later run may replace it without
            // --overwrite. A filesystem without user xattrs loses only that.
            let _ = iolab_engine::sys::mark_created(&file);
            let pending = Pending(Some((tmp, path.clone())));
            (Box::new(std::io::BufWriter::new(file)), pending)
        }
    })
}

/// An output file written under a temporary name: [`Pending::commit`] makes it durable and
/// renames it over its path; dropped without that (an error, a panic), the temporary file is
/// removed and whatever was at the path is left as it was.
#[must_use = "an output is only put in place by commit"]
pub struct Pending(Option<(PathBuf, PathBuf)>);

impl Pending {
    /// Puts the output in place. Call once its writer has been flushed (or dropped).
    pub fn commit(mut self) -> std::io::Result<()> {
        let Some((tmp, path)) = self.0.take() else {
            return Ok(());
        };
        let done = std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .and_then(|()| std::fs::rename(&tmp, &path));
        if done.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        done
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some((tmp, _)) = &self.0 {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// `/dev/null` (1:3) and terminals (the console, `/dev/tty`, virtual consoles, pseudo-terminals):
/// character devices that keep nothing an output could destroy.
fn harmless_char_device(rdev: u64) -> bool {
    let (major, minor) = (
        iolab_engine::guard::major(rdev),
        iolab_engine::guard::minor(rdev),
    );
    matches!((major, minor), (1, 3) | (4, _) | (5, 0 | 1)) || (136..=143).contains(&major)
}

/// The path with every symbolic link resolved; for a file not there yet, its directory's.
fn real_path(path: &Path) -> Result<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Ok(p);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let dir = std::fs::canonicalize(dir).with_context(|| {
        format!(
            "the directory {} does not exist; create it or give a path in an existing directory",
            dir.display()
        )
    })?;
    Ok(dir.join(name))
}

/// Refuses an output that is one of the inputs or the results store.
fn refuse_inputs(
    flag: &str,
    path: &Path,
    real: &Path,
    meta: Option<&std::fs::Metadata>,
    rules: &Rules,
) -> Result<()> {
    let (store, from) = crate::cmd::results::db_path(None);
    let store_is = format!("the results store {} ({from})", store.display());
    let named = rules
        .inputs
        .iter()
        .filter(|p| **p != Path::new("-"))
        .map(|p| (*p, format!("the input {}", p.display()), "the input"))
        .chain([(store.as_path(), store_is, "the recorded runs")]);
    for (input, what, lost) in named {
        let same = match (meta, std::fs::metadata(input)) {
            (Some(o), Ok(i)) => same_inode(o, &i),
            _ => real_path(input).is_ok_and(|r| r == real),
        };
        if same {
            bail!(
                "{flag} {} is the same file as {what}: writing it would destroy {lost}; give \
                 {flag} another path",
                path.display(),
            );
        }
    }
    Ok(())
}

/// A new file's directory must exist and take a new file: found out now, not after a suite of
/// many minutes.
fn check_directory(flag: &str, path: &Path, real: &Path) -> Result<()> {
    let dir = real.parent().unwrap_or(Path::new("/"));
    check_writable_dir(dir).with_context(|| {
        format!(
            "{flag} {}: cannot write in {}; give a path in a writable directory",
            path.display(),
            dir.display()
        )
    })
}

/// Creates and removes a file in `dir`, as writing an output will (a temporary file beside it,
/// renamed): permission bits alone miss read-only mounts and ACLs.
pub fn check_writable_dir(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(
        ".iolab-write-check.{}.iolab-tmp",
        std::process::id()
    ));
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)?;
    std::fs::remove_file(&probe)
}

/// Whether `path` carries iolab's mark.
fn written_by_iolab(path: &Path) -> bool {
    std::fs::File::open(path).is_ok_and(|f| iolab_engine::sys::is_marked_created(&f))
}

/// Whether two files' metadata are of one file (a name, a link or a hard link to it).
pub fn same_inode(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(inputs: &[&Path], overwrite: bool) -> Rules<'static> {
        let inputs: Vec<&'static Path> = inputs
            .iter()
            .map(|p| &*Box::leak(p.to_path_buf().into_boxed_path()))
            .collect();
        Rules::new(&inputs, overwrite)
    }

    fn refusal(flag: &str, path: &Path, rules: &Rules) -> String {
        format!("{:#}", check(flag, path, rules).unwrap_err())
    }

    #[test]
    fn a_new_file_is_written_whole_and_marked_so_it_may_be_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.json");
        write("--json", &out, &Rules::default(), b"first").unwrap();
        // iolab's own file: replaced without --overwrite (where the filesystem keeps xattrs).
        if written_by_iolab(&out) {
            write("--json", &out, &Rules::default(), b"second").unwrap();
            assert_eq!(std::fs::read(&out).unwrap(), b"second");
        }
        // Nothing else is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_users_file_is_kept_unless_overwrite_is_given() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("notes.html");
        std::fs::write(&out, "mine").unwrap();
        let e = refusal("-o", &out, &Rules::default());
        assert!(e.contains("-o") && e.contains("--overwrite"), "{e}");
        assert_eq!(std::fs::read(&out).unwrap(), b"mine");
        write("-o", &out, &rules(&[], true), b"report").unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"report");
    }

    #[test]
    fn an_input_is_refused_under_any_name() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("trace.csv");
        std::fs::write(&input, "data").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let hard = dir.path().join("hard.csv");
        std::fs::hard_link(&input, &hard).unwrap();
        let r = rules(&[&input], true);
        for alias in [&input, &link, &hard] {
            let e = refusal("-o", alias, &r);
            assert!(e.contains("same file as the input"), "{e}");
        }
        assert_eq!(std::fs::read(&input).unwrap(), b"data");
    }

    #[test]
    fn devices_directories_and_dangling_links_are_refused_and_dev_null_is_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let e = refusal("--json", dir.path(), &Rules::default());
        assert!(e.contains("is a directory"), "{e}");
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        assert!(refusal("-o", &dangling, &Rules::default()).contains("link to nothing"));
        assert!(!dir.path().join("nowhere").exists());
        assert_eq!(
            check("--json", Path::new("/dev/null"), &Rules::default()).unwrap(),
            Destination::Through("/dev/null".into())
        );
        // /dev/zero keeps nothing either, but is no place for a result: only null and terminals.
        let e = refusal("--json", Path::new("/dev/zero"), &rules(&[], true));
        assert!(e.contains("character device"), "{e}");
        let e = refusal(
            "--json",
            Path::new("/no/such/dir/r.json"),
            &Rules::default(),
        );
        assert!(e.contains("does not exist"), "{e}");
    }

    #[test]
    fn a_link_to_a_file_is_written_through_to_that_file() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        write("--json", &real, &Rules::default(), b"old").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write("--json", &link, &rules(&[], true), b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
    }

    #[test]
    fn an_output_dropped_before_commit_leaves_the_old_file() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("t.csv");
        std::fs::write(&out, "old").unwrap();
        let dest = check("-o", &out, &rules(&[], true)).unwrap();
        let (mut sink, pending) = open(&dest).unwrap();
        sink.write_all(b"half").unwrap();
        sink.flush().unwrap();
        drop((sink, pending));
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn the_store_opens_only_sqlite_or_a_new_file() {
        let dir = tempfile::tempdir().unwrap();
        check_store(&dir.path().join("new.sqlite"), "IOLAB_DB").unwrap();
        let json = dir.path().join("r.json");
        std::fs::write(&json, "{}").unwrap();
        let e = format!("{:#}", check_store(&json, "IOLAB_DB").unwrap_err());
        assert!(
            e.contains("not an SQLite database") && e.contains("IOLAB_DB"),
            "{e}"
        );
        let e = format!("{:#}", check_store(dir.path(), "IOLAB_DB").unwrap_err());
        assert!(e.contains("directory"), "{e}");
        let e = format!(
            "{:#}",
            check_store(Path::new("/dev/zero"), "--db").unwrap_err()
        );
        assert!(e.contains("character device"), "{e}");
        let db = dir.path().join("db.sqlite");
        std::fs::write(&db, b"SQLite format 3\0rest").unwrap();
        check_store(&db, "IOLAB_DB").unwrap();
        let dangling = dir.path().join("dangling.sqlite");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
        let e = format!("{:#}", check_store(&dangling, "--db").unwrap_err());
        assert!(e.contains("symbolic link to nothing"), "{e}");
    }
}
