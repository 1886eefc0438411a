//! Job files: one job's keys at the top level, or several `[[job]]` tables. Read with the line
//! of every key, so that a value refused later (when the job is validated, or meets its target)
//! is named by file, line and job, as TOML's own errors (types, unknown keys) already are.

use anyhow::{bail, Context, Result};
use iolab_core::job::{JobError, JobSpec};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// Whether a command-line input names a job file: `*.toml`, in any case (`RR.TOML`).
pub fn is_job_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// A job file's `[[job]]` tables.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct JobList {
    job: Vec<JobSpec>,
}

/// The same tables, with where each key of each one is written.
#[derive(Deserialize)]
struct KeyLines {
    job: Vec<Spanned<BTreeMap<Spanned<String>, toml::Value>>>,
}

/// Where a job is written in its file.
#[derive(Debug, Default)]
struct JobLines {
    /// The line of its `[[job]]` header (a job at the top level has none).
    table: Option<usize>,
    /// The line of each key it sets.
    keys: BTreeMap<String, usize>,
}

/// A job file, read and parsed.
#[derive(Debug)]
pub struct JobFile {
    /// The path as given.
    pub path: PathBuf,
    /// Its jobs, in order.
    pub specs: Vec<JobSpec>,
    lines: Vec<JobLines>,
    /// For a translated fio file: each job's header (`FILE:LINE`) and where each key came from.
    translated: Vec<(String, BTreeMap<String, String>)>,
}

/// The 1-based line of byte `at` of `text`.
fn line_at(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

impl JobFile {
    /// Reads a job file, naming the file and line of what is wrong: TOML syntax, unknown keys
    /// and wrong types (TOML's own message), a file with no job in it (fio's "No job(s)
    /// defined"), and keys outside the `[[job]]` tables of a file that has them.
    pub fn read(path: &Path) -> Result<JobFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading job file {}", path.display()))?;
        Self::parse(&text, path)
    }

    /// [`JobFile::read`] on `text`, read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<JobFile> {
        let origin = path.display();
        let top: BTreeMap<Spanned<String>, toml::Value> =
            toml::from_str(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
        if top.is_empty() {
            bail!(
                "no [[job]] in {origin}: the file sets no key; write one job's keys (e.g. \
                 access = \"randread\") at the top level, or one [[job]] table per job"
            );
        }
        let Some((_, jobs)) = top.iter().find(|(k, _)| k.get_ref() == "job") else {
            // One job, its keys at the top level.
            let spec = JobSpec::from_toml(text, &origin.to_string()).map_err(anyhow::Error::msg)?;
            let keys = top
                .keys()
                .map(|k| (k.get_ref().clone(), line_at(text, k.span().start)))
                .collect();
            return Ok(JobFile {
                path: path.to_path_buf(),
                specs: vec![spec],
                lines: vec![JobLines { table: None, keys }],
                translated: Vec::new(),
            });
        };
        let job_line = top
            .keys()
            .find(|k| k.get_ref() == "job")
            .map_or(1, |k| line_at(text, k.span().start));
        let tables = jobs
            .as_array()
            .is_some_and(|a| a.iter().all(toml::Value::is_table));
        if !tables {
            bail!(
                "{origin}, line {job_line}: `job` is not a list of tables; write each job as a \
                 [[job]] table (two brackets) followed by its keys"
            );
        }
        if let Some(stray) = top.keys().find(|k| k.get_ref() != "job") {
            bail!(
                "{origin}, line {}: `{}` is outside the [[job]] tables; in a file of [[job]] \
                 tables every key goes inside one (under the [[job]] it is for), and only a \
                 file of one job has its keys at the top level, with no [[job]]",
                line_at(text, stray.span().start),
                stray.get_ref()
            );
        }
        let list: JobList = toml::from_str(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
        if list.job.is_empty() {
            bail!("no [[job]] in {origin}: `job` is an empty list; add a [[job]] table per job");
        }
        let located: KeyLines =
            toml::from_str(text).map_err(|e| anyhow::anyhow!("{origin}: {e}"))?;
        let lines = located
            .job
            .iter()
            .map(|t| JobLines {
                table: Some(line_at(text, t.span().start)),
                keys: t
                    .get_ref()
                    .keys()
                    .map(|k| (k.get_ref().clone(), line_at(text, k.span().start)))
                    .collect(),
            })
            .collect();
        Ok(JobFile {
            path: path.to_path_buf(),
            specs: list.job,
            lines,
            translated: Vec::new(),
        })
    }

    /// Jobs translated from another format (a fio job file): `places` gives, per job, where
    /// its header is and where each of its keys came from, as `FILE:LINE`.
    pub fn translated(
        path: &Path,
        specs: Vec<JobSpec>,
        places: Vec<(String, BTreeMap<String, String>)>,
    ) -> JobFile {
        JobFile {
            path: path.to_path_buf(),
            specs,
            lines: Vec::new(),
            translated: places,
        }
    }

    /// Where job `index` sets `key`: `FILE, line N`; where it does not, where the job is
    /// (`FILE, job 2 (line 7)`, or the file for a job at the top level).
    pub fn place(&self, index: usize, key: &str) -> String {
        let origin = self.path.display();
        if let Some((header, keys)) = self.translated.get(index) {
            return match keys.get(key) {
                Some(at) => at.clone(),
                None => format!("{header} (job {})", index + 1),
            };
        }
        let Some(lines) = self.lines.get(index) else {
            return origin.to_string();
        };
        match (lines.keys.get(key), lines.table) {
            (Some(line), _) => format!("{origin}, line {line}"),
            (None, Some(table)) => format!("{origin}, job {} (line {table})", index + 1),
            (None, None) => origin.to_string(),
        }
    }

    /// `err`, about job `index`, with where the file sets the key at fault. A key the command
    /// line set (`flags`: the keys its flags give every job) is said to come from there.
    pub fn locate(&self, index: usize, err: &JobError, flags: &[String]) -> anyhow::Error {
        if flags.iter().any(|f| f == err.key) {
            anyhow::anyhow!(
                "{err} (`{}` set on the command line, for job {} of {})",
                err.key,
                index + 1,
                self.path.display()
            )
        } else {
            anyhow::anyhow!("{}: {err}", self.place(index, err.key))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<JobFile> {
        JobFile::parse(text, Path::new("j.toml"))
    }

    fn error(text: &str) -> String {
        format!("{:#}", parse(text).unwrap_err())
    }

    #[test]
    fn keys_are_found_on_their_lines() {
        let f =
            parse("# two jobs\n[[job]]\nname = \"a\"\n\n[[job]]\nname = \"b\"\nqueue_depth = 0\n")
                .unwrap();
        assert_eq!(f.specs.len(), 2);
        assert_eq!(f.place(1, "queue_depth"), "j.toml, line 7");
        assert_eq!(f.place(1, "threads"), "j.toml, job 2 (line 5)");
        assert_eq!(f.place(0, "name"), "j.toml, line 3");
        let one = parse("\n\nqueue_depth = 0\n").unwrap();
        assert_eq!(one.place(0, "queue_depth"), "j.toml, line 3");
        assert_eq!(one.place(0, "threads"), "j.toml");
    }

    #[test]
    fn a_file_without_a_job_or_with_keys_outside_its_jobs_is_refused() {
        for empty in ["", "# only a comment\n", "\n\n"] {
            assert!(
                error(empty).starts_with("no [[job]] in j.toml"),
                "{empty:?}"
            );
        }
        assert!(error("job = []\n").starts_with("no [[job]] in j.toml"));
        let e = error("access = \"read\"\n[[job]]\nname = \"x\"\n");
        assert!(
            e.contains("j.toml, line 1: `access` is outside the [[job]] tables")
                && e.contains("only a file of one job has its keys at the top level"),
            "{e}"
        );
        let e = error("[job]\nname = \"x\"\n");
        assert!(
            e.contains("j.toml, line 1: `job` is not a list of tables"),
            "{e}"
        );
        assert!(e.contains("[[job]] table (two brackets)"), "{e}");
    }

    #[test]
    fn job_files_are_told_by_their_extension_in_any_case() {
        for name in ["r.toml", "RR.TOML", "a/b.Toml"] {
            assert!(is_job_file(Path::new(name)), "{name}");
        }
        for name in ["t.bin", "toml", "/dev/sda", "sim:ssd750-400@z97"] {
            assert!(!is_job_file(Path::new(name)), "{name}");
        }
    }
}
