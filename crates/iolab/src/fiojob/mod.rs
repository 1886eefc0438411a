//! fio job files, run as iolab jobs: `iolab run JOB.fio [TARGET]`.
//!
//! The file is parsed with fio's syntax ([`ini`]), each job's options (its `[global]`s', then
//! its own) are translated into an iolab [`JobSpec`] ([`translate`]), and what iolab cannot
//! honour is refused naming the option, the file and line and why — or, with `--fio-lenient`,
//! left out and recorded in the result.
//!
//! fio runs the jobs of a file at the same time unless `stonewall` orders them, and so does
//! iolab (`together`, `wait_for`, reporting groups: see [`concurrency`]); on a model, which
//! runs one job at a time, such jobs are refused (strict) or run in turn (lenient). A job's
//! `numjobs` clones are iolab's threads of that job.

mod blocks;
mod budget;
mod concurrency;
mod dedupe;
mod errors;
mod fill;
pub mod ini;
mod lat_target;
pub mod options;
mod prio;
mod sprandom;
mod steady;
mod sync;
#[cfg(test)]
mod testutil;
pub mod translate;
pub mod units;
mod verify;
mod zbd;

use crate::jobfile::JobFile;
use anyhow::{bail, Result};
use iolab_core::job::JobSpec;
use iolab_engine::open::EngineChoice;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use translate::{Context, FioJob, Problem};

/// Whether `path` is a fio job file: `*.fio`, or a small text file whose first line that is not
/// a comment is a `[section]` header (fio's form; iolab's TOML job files have `[[job]]`).
pub fn is_fio_job(path: &Path) -> bool {
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("fio"))
    {
        return true;
    }
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
    {
        return false;
    }
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    // Only small regular files: a target (a device, a large test file) is never read here.
    if !meta.is_file() || meta.len() > 1 << 20 {
        return false;
    }
    let mut head = Vec::new();
    let read = std::fs::File::open(path).and_then(|f| f.take(64 << 10).read_to_end(&mut head));
    read.is_ok() && std::str::from_utf8(&head).is_ok_and(ini::looks_like_fio)
}

/// What `iolab run` was told about the fio file.
pub struct LoadOptions<'a> {
    /// Warn about and record what cannot be honoured instead of refusing it.
    pub lenient: bool,
    /// The target given on the command line, if any.
    pub target: Option<&'a Path>,
}

/// A fio job file as iolab jobs.
pub struct Translated {
    /// The jobs, with where fio set each key (for errors that name the file and line).
    pub file: JobFile,
    /// The engine fio's `ioengine` maps to, and why.
    pub engine: EngineChoice,
    /// How the engine was chosen (`ioengine=libaio (x.fio:3) → io_uring`).
    pub engine_note: String,
    /// Notes on the translation, for the terminal and the result.
    pub notes: Vec<String>,
    /// What `--fio-lenient` left out, for the terminal and the result.
    pub ignored: Vec<String>,
}

/// The size of a target that exists (a file or a block device), for `size=50%`.
fn target_size(path: &Path) -> Option<u64> {
    use std::io::{Seek, SeekFrom};
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_file() {
        return Some(meta.len());
    }
    // A block device's size is where its end is.
    std::fs::File::open(path)
        .and_then(|mut f| f.seek(SeekFrom::End(0)))
        .ok()
        .filter(|&n| n > 0)
}

/// Reads and translates the fio job file at `path`.
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Translated> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("reading fio job file {}: {e}", path.display()))?;
    let env = |var: &str| std::env::var(var).ok();
    let sections = ini::parse(&text, path, &env)?;
    let size_of = |filename: Option<&str>| match opts.target {
        Some(t) => target_size(t),
        None => filename.and_then(|f| target_size(Path::new(f))),
    };
    let ctx = Context {
        target_size: &size_of,
        cli_target: opts.target.is_some(),
    };
    let mut global = Vec::new();
    let mut jobs: Vec<FioJob> = Vec::new();
    for section in sections {
        if section.is_global() {
            global.extend(section.opts);
            continue;
        }
        let mut all = global.clone();
        all.extend(section.opts);
        jobs.push(translate::job(&section.name, section.at, &all, &ctx));
    }
    if opts.target.is_some_and(crate::subject::is_model) {
        for job in jobs.iter_mut().filter(|j| j.spec.direct == Some(false)) {
            // fio's default is buffered; a model has none, so it is said where it comes from.
            job.problems.push(Problem {
                at: job.places.get("direct").unwrap_or(&job.header).clone(),
                option: "direct=0 (fio's default, buffered)".into(),
                why: "a model has no page cache; add direct=1 to model the drive".into(),
            });
            if opts.lenient {
                job.spec.direct = Some(true);
            }
        }
    }
    let mut problems: Vec<Problem> = jobs.iter().flat_map(|j| j.problems.clone()).collect();
    let on_model = opts.target.is_some_and(crate::subject::is_model);
    problems.extend(concurrency::file_order(&mut jobs, on_model, opts.lenient));
    let (engine, engine_note) = engine(&mut jobs);
    if !problems.is_empty() && !opts.lenient {
        let list = problems
            .iter()
            .map(|p| format!("  {p}"))
            .collect::<Vec<_>>()
            .join("\n");
        bail!(
            "{}: {} that iolab cannot honour:\n{list}\nremove or change {}, or pass \
             --fio-lenient to run without {} (each is then listed in the result's notes)",
            path.display(),
            plural(problems.len(), "option", "options"),
            if problems.len() == 1 { "it" } else { "them" },
            if problems.len() == 1 { "it" } else { "them" },
        );
    }
    let ignored = problems
        .iter()
        .map(|p| format!("fio option ignored (--fio-lenient): {p}"))
        .collect();
    let notes = jobs
        .iter()
        .flat_map(|j| {
            let name = j.spec.name.clone().unwrap_or_default();
            j.notes
                .iter()
                .map(move |n| format!("fio job '{name}': {n}"))
        })
        .collect();
    let mut specs: Vec<JobSpec> = Vec::new();
    let mut places = Vec::new();
    for job in jobs {
        let mut spec = job.spec;
        // fio lets jobs share a name; iolab's results tell jobs apart by it.
        let base = spec.name.clone().unwrap_or_default();
        let mut name = base.clone();
        let mut n = 1;
        while specs
            .iter()
            .any(|s| s.name.as_deref() == Some(name.as_str()))
        {
            n += 1;
            name = format!("{base}#{n}");
        }
        spec.name = Some(name);
        let keys: BTreeMap<String, String> = job
            .places
            .iter()
            .map(|(k, p)| (k.clone(), p.to_string()))
            .collect();
        places.push((job.header.to_string(), keys));
        specs.push(spec);
    }
    Ok(Translated {
        file: JobFile::translated(path, specs, places),
        engine,
        engine_note,
        notes,
        ignored,
    })
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The run's engine: the jobs' one, or where they name different ones, io_uring for the run
/// and psync for each job that asks for it (its own `engine` key).
fn engine(jobs: &mut [FioJob]) -> (EngineChoice, String) {
    let describe = |e: &(EngineChoice, String, Option<ini::Place>)| {
        let at = e.2.as_ref().map_or(String::new(), |p| format!(" ({p})"));
        format!("{}{at}", e.1)
    };
    let first = jobs[0].engine.clone();
    if jobs.iter().all(|j| j.engine.0 == first.0) {
        let engine = match first.0 {
            // The asynchronous engines: io_uring, where the target takes I/O without blocking.
            EngineChoice::Auto => {
                "io_uring (or psync-per-slot where io_uring would block, as on zram: said in \
                 the result)"
            }
            other => other.name(),
        };
        return (
            first.0,
            format!("{} → iolab's {engine} engine", describe(&first)),
        );
    }
    let mut own = Vec::new();
    for job in jobs
        .iter_mut()
        .filter(|j| j.engine.0 == EngineChoice::Psync)
    {
        job.spec.engine = Some("psync".into());
        own.push(format!(
            "job '{}': {}",
            job.spec.name.as_deref().unwrap_or_default(),
            describe(&job.engine)
        ));
    }
    let note = format!(
        "the jobs name different engines: {} run on iolab's psync engine (job key engine), the \
         others on io_uring (or psync-per-slot where io_uring would block)",
        own.join(", ")
    );
    (EngineChoice::Auto, note)
}

/// Jobs as an iolab job file (`--print-job`): `notes` as comments, then one `[[job]]` each.
pub fn jobs_as_toml(specs: &[JobSpec], notes: &[String]) -> Result<String> {
    #[derive(serde::Serialize)]
    struct List<'a> {
        job: &'a [JobSpec],
    }
    let mut out = String::new();
    for line in notes {
        out.push_str(&format!("# {}\n", line.replace('\n', " ")));
    }
    if !notes.is_empty() {
        out.push('\n');
    }
    out.push_str(&toml::to_string(&List { job: specs })?);
    Ok(out)
}

/// Reads a fio job file for `iolab run`: its jobs, its engine where the command line left the
/// choice to iolab (`engine` is `auto`), and its notes (said here, and pushed to `notes` for
/// the result).
pub fn read_for_run(
    path: &Path,
    target: Option<&Path>,
    lenient: bool,
    engine: &mut EngineChoice,
    notes: &mut Vec<String>,
) -> Result<JobFile> {
    let t = load(path, &LoadOptions { lenient, target })?;
    if target.is_some_and(crate::subject::is_model) {
        // A model has no engine: its figures are the drive's and the host path's.
        notes.push(format!(
            "fio: {}: not used, a model has no engine",
            t.engine_note
        ));
    } else if *engine != EngineChoice::Auto {
        // --engine runs every job on the engine it names.
        let mut file = t.file;
        for spec in &mut file.specs {
            spec.engine = None;
        }
        return finish(file, &t.notes, &t.ignored, notes);
    } else if *engine == EngineChoice::Auto {
        *engine = t.engine;
        let again = match t.engine {
            EngineChoice::Auto => String::new(),
            other => format!("; a TOML job file runs so with --engine {}", other.name()),
        };
        notes.push(format!("fio: {}{again}", t.engine_note));
    }
    finish(t.file, &t.notes, &t.ignored, notes)
}

/// Says the translation's notes and what was ignored, and keeps them for the result.
fn finish(
    file: JobFile,
    said: &[String],
    ignored: &[String],
    notes: &mut Vec<String>,
) -> Result<JobFile> {
    for n in said {
        say!("note: {n}");
        notes.push(n.clone());
    }
    for n in ignored {
        say!("warning: {n}");
        notes.push(n.clone());
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_text(text: &str, lenient: bool) -> Result<Translated> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.fio");
        std::fs::write(&path, text).unwrap();
        let target = dir.path().join("t.bin");
        load(
            &path,
            &LoadOptions {
                lenient,
                target: Some(&target),
            },
        )
    }

    #[test]
    fn jobs_without_a_stonewall_run_together_and_groups_are_fios() {
        let text = "[global]\nrw=read\nsize=1m\ngroup_reporting\nexitall\n[a]\n[b]\n\
                    [c]\nstonewall\nexit_what=all\n[d]\nnew_group\n[e]\nwait_for=a\n";
        let t = load_text(text, false).unwrap();
        let s = &t.file.specs;
        let together: Vec<Option<bool>> = s.iter().map(|s| s.together).collect();
        assert_eq!(together, [None, Some(true), None, Some(true), Some(true)]);
        // Groups: {a, b}, {c}, {d, e}; c's group has one job, so nothing to merge there.
        let groups: Vec<Option<u32>> = s.iter().map(|s| s.group).collect();
        assert_eq!(groups, [Some(0), Some(0), None, Some(2), Some(2)]);
        assert_eq!(s[0].group_reporting, Some(true));
        assert_eq!(s[2].group_reporting, None);
        use iolab_core::schedule::EndsOthers;
        assert_eq!(s[0].ends_others, Some(EndsOthers::Group));
        assert_eq!(s[2].ends_others, Some(EndsOthers::All));
        assert_eq!(s[4].wait_for.as_deref(), Some("a"));
        let e = format!(
            "{:#}",
            load_text("[a]\nsize=1m\n[b]\nwait_for=z\n", false)
                .err()
                .unwrap()
        );
        assert!(e.contains("j.fio:4: wait_for=z: no job named 'z'"), "{e}");
    }

    /// The job file at `path` loaded for a model target, leniently or not.
    fn load_on_model(path: &Path, lenient: bool) -> Result<Translated> {
        load(
            path,
            &LoadOptions {
                lenient,
                target: Some(Path::new("sim:ssd750-400@z97")),
            },
        )
    }

    #[test]
    fn jobs_at_the_same_time_on_a_model_are_refused_or_run_in_turn() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.fio");
        std::fs::write(&path, "[global]\ndirect=1\nsize=1m\n[a]\n[b]\n").unwrap();
        let load_on = |lenient| load_on_model(&path, lenient);
        let e = format!("{:#}", load_on(false).err().unwrap());
        assert!(
            e.contains("j.fio:5: [b]: job 'b' runs at the same time"),
            "{e}"
        );
        let t = load_on(true).unwrap();
        assert!(t.file.specs.iter().all(|s| s.together.is_none()));
        assert_eq!(t.ignored.len(), 1);
    }

    #[test]
    fn buffered_io_on_a_model_is_refused_or_made_direct() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.fio");
        std::fs::write(&path, "[a]\nrw=randread\nsize=1m\n").unwrap();
        let load_on = |lenient| load_on_model(&path, lenient);
        let e = format!("{:#}", load_on(false).err().unwrap());
        assert!(
            e.contains("j.fio:1: direct=0 (fio's default, buffered): a model"),
            "{e}"
        );
        let t = load_on(true).unwrap();
        assert_eq!(t.file.specs[0].direct, Some(true));
        assert!(t.ignored[0].contains("add direct=1"), "{:?}", t.ignored);
    }

    #[test]
    fn jobs_of_different_engines_keep_theirs_and_names_are_kept_apart() {
        let text = "[a]\nioengine=libaio\nsize=1m\n[a]\nstonewall\nioengine=sync\nsize=1m\n";
        let t = load_text(text, false).unwrap();
        let names: Vec<_> = t.file.specs.iter().filter_map(|s| s.name.clone()).collect();
        assert_eq!(names, ["a", "a#2"]);
        assert_eq!(t.engine, EngineChoice::Auto);
        let engines: Vec<_> = t.file.specs.iter().map(|s| s.engine.as_deref()).collect();
        assert_eq!(engines, [None, Some("psync")]);
        assert!(
            t.engine_note
                .contains("j.fio:6) run on iolab's psync engine"),
            "{}",
            t.engine_note
        );
        // One engine for all: no job key.
        let t = load_text("[a]\nioengine=sync\nsize=1m\n", false).unwrap();
        assert_eq!(
            (t.engine, t.file.specs[0].engine.as_deref()),
            (EngineChoice::Psync, None)
        );
    }

    #[test]
    fn the_printed_job_is_an_iolab_job_file() {
        let t = load_text(
            "[r]\nioengine=libaio\nrw=randread\nbs=4k\niodepth=16\nsize=4m\ndirect=1\n",
            false,
        )
        .unwrap();
        let text = jobs_as_toml(&t.file.specs, std::slice::from_ref(&t.engine_note)).unwrap();
        assert!(
            text.starts_with("# ioengine=libaio (") && text.contains("io_uring"),
            "{text}"
        );
        let back = JobFile::parse(&text, Path::new("p.toml")).unwrap();
        assert_eq!(back.specs, t.file.specs);
    }

    #[test]
    fn fio_files_are_recognised_by_suffix_or_form() {
        let dir = tempfile::tempdir().unwrap();
        let ini = dir.path().join("job.ini");
        std::fs::write(&ini, "# x\n[global]\nbs=4k\n[j]\n").unwrap();
        let toml = dir.path().join("job.cfg");
        std::fs::write(&toml, "[[job]]\naccess = \"read\"\n").unwrap();
        let data = dir.path().join("t.bin");
        std::fs::write(&data, [0u8, 159, 146, 150]).unwrap();
        assert!(is_fio_job(&ini));
        assert!(is_fio_job(Path::new("missing.fio")));
        assert!(!is_fio_job(&toml));
        assert!(!is_fio_job(&data));
        assert!(!is_fio_job(Path::new("/dev/null")));
    }
}
