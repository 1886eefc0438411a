//! fio's job-file syntax: `[section]` lines, `key=value` or bare `key` options, `;` and `#`
//! comment lines, `include FILE` (options only, as fio allows), and `${VAR}` expanded from
//! the environment on the right of the `=` (an unset variable is the empty string, as in fio).

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

/// Where something is written: file and 1-based line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Place {
    /// The file (the job file, or a file it includes).
    pub file: PathBuf,
    /// The line.
    pub line: usize,
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// One option as written.
#[derive(Clone, Debug, PartialEq)]
pub struct Opt {
    /// Its name, lower case, as written (before aliases are resolved).
    pub key: String,
    /// Its value, expanded; `None` for a bare flag (`time_based`).
    pub value: Option<String>,
    /// Where.
    pub at: Place,
}

impl Opt {
    /// `key=value`, or `key` for a bare flag.
    pub fn written(&self) -> String {
        match &self.value {
            Some(v) => format!("{}={v}", self.key),
            None => self.key.clone(),
        }
    }
}

/// A `[section]` and its options, in order.
#[derive(Clone, Debug)]
pub struct Section {
    /// The name between the brackets.
    pub name: String,
    /// Where the header is.
    pub at: Place,
    /// Its options, in order (those of included files where the `include` is).
    pub opts: Vec<Opt>,
}

impl Section {
    /// True for `[global]`.
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// `raw` without what follows a `;` or `#` anywhere on it (fio cuts comments off every line),
/// trimmed.
fn content(raw: &str) -> &str {
    raw.split([';', '#']).next().unwrap_or("").trim()
}

/// Whether `line` (trimmed) is a comment or blank.
fn is_comment(line: &str) -> bool {
    line.is_empty() || line.starts_with(';') || line.starts_with('#')
}

/// The section name of a header line `[name]`, if it is one.
pub fn header(line: &str) -> Option<&str> {
    let inner = line.strip_prefix('[')?.strip_suffix(']')?;
    (!inner.is_empty() && !inner.starts_with('[')).then_some(inner)
}

/// Whether `text` reads as a fio job file: its first line that is not blank or a comment is a
/// `[section]` header.
pub fn looks_like_fio(text: &str) -> bool {
    text.lines()
        .map(content)
        .find(|l| !is_comment(l))
        .is_some_and(|l| header(l).is_some())
}

/// Expands `${VAR}` from `env`; an unset variable is empty, as in fio.
fn expand(value: &str, env: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(&env(&rest[start + 2..start + 2 + len]).unwrap_or_default());
        rest = &rest[start + 3 + len..];
    }
    out.push_str(rest);
    out
}

/// Splits an option line into its key and value.
fn option(line: &str, at: Place, env: &dyn Fn(&str) -> Option<String>) -> Opt {
    let (key, value) = match line.split_once('=') {
        Some((k, v)) => (k.trim(), Some(expand(v.trim(), env))),
        None => (line.trim(), None),
    };
    Opt {
        key: key.to_ascii_lowercase(),
        value,
        at,
    }
}

/// Reads the options of an included file (`nested`: no sections allowed) or a whole job file.
struct Reader<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    /// Files being read, to refuse an include that includes itself.
    open: Vec<PathBuf>,
}

impl Reader<'_> {
    fn include(&mut self, name: &str, from: &Place, into: &mut Vec<Opt>) -> Result<()> {
        // As fio: the name as given if it exists, else beside the including file.
        let direct = PathBuf::from(name);
        let path = if direct.exists() {
            direct
        } else {
            from.file
                .parent()
                .map_or(direct.clone(), |dir| dir.join(name))
        };
        if self.open.contains(&path) {
            bail!("{from}: include {name} includes itself");
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("{from}: include {name}: reading {}", path.display()))?;
        self.open.push(path.clone());
        for (i, raw) in text.lines().enumerate() {
            let line = content(raw);
            let at = Place {
                file: path.clone(),
                line: i + 1,
            };
            if is_comment(line) {
                continue;
            }
            if header(line).is_some() {
                bail!("{at}: an included file may not have [sections] (fio's rule)");
            }
            self.line(line, at, into)?;
        }
        self.open.pop();
        Ok(())
    }

    fn line(&mut self, line: &str, at: Place, into: &mut Vec<Opt>) -> Result<()> {
        if let Some(name) = line.strip_prefix("include") {
            if name.starts_with(char::is_whitespace) {
                return self.include(name.trim(), &at, into);
            }
        }
        into.push(option(line, at, self.env));
        Ok(())
    }
}

/// Parses `text`, read from `path`, into its sections, expanding `${VAR}` with `env`.
pub fn parse(
    text: &str,
    path: &Path,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<Section>> {
    let mut reader = Reader {
        env,
        open: vec![path.to_path_buf()],
    };
    let mut sections: Vec<Section> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = content(raw);
        let at = Place {
            file: path.to_path_buf(),
            line: i + 1,
        };
        if is_comment(line) {
            continue;
        }
        if let Some(name) = header(line) {
            sections.push(Section {
                name: name.to_string(),
                at,
                opts: Vec::new(),
            });
            continue;
        }
        let Some(section) = sections.last_mut() else {
            if line.starts_with("fio version") {
                bail!("{at}: this is a fio iolog (a trace), not a job file: replay it with `iolab trace replay`");
            }
            bail!("{at}: `{line}` is outside any [section]; fio options go under a [job] header");
        };
        reader.line(line, at, &mut section.opts)?;
    }
    if !sections.iter().any(|s| !s.is_global()) {
        bail!(
            "{}: no job: the file has no section other than [global]; add a [job] section",
            path.display()
        );
    }
    Ok(sections)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(var: &str) -> Option<String> {
        (var == "SIZE").then(|| "64m".to_string())
    }

    #[test]
    fn sections_options_comments_and_variables() {
        let text = "; a comment\n# another\n[global]\nrw=randread\n\n[job one]\n  size = ${SIZE}\n\
                    time_based ; as fio, comments end a line too\nname=${UNSET}x\t# here\n";
        let s = parse(text, Path::new("j.fio"), &env).unwrap();
        assert_eq!(s.len(), 2);
        assert!(s[0].is_global());
        assert_eq!(s[1].name, "job one");
        assert_eq!(s[1].at.line, 6);
        let o = &s[1].opts;
        assert_eq!(
            (o[0].key.as_str(), o[0].value.as_deref()),
            ("size", Some("64m"))
        );
        assert_eq!(o[0].at.to_string(), "j.fio:7");
        assert_eq!(
            (o[1].key.as_str(), o[1].value.as_deref()),
            ("time_based", None)
        );
        assert_eq!(o[2].value.as_deref(), Some("x"));
    }

    #[test]
    fn includes_bring_their_options_in_place() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("common.inc"),
            "; shared\nbs=64k\niodepth=8\n",
        )
        .unwrap();
        let job = dir.path().join("j.fio");
        let text = "[a]\nrw=read\ninclude common.inc\nsize=1m\n";
        let s = parse(text, &job, &env).unwrap();
        let keys: Vec<_> = s[0].opts.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["rw", "bs", "iodepth", "size"]);
        assert_eq!(s[0].opts[1].at.line, 2);
        assert!(s[0].opts[1].at.file.ends_with("common.inc"));
        std::fs::write(dir.path().join("bad.inc"), "[x]\n").unwrap();
        let e = parse("[a]\ninclude bad.inc\n", &job, &env).unwrap_err();
        assert!(e.to_string().contains("may not have [sections]"), "{e}");
        let e = parse("[a]\ninclude missing.inc\n", &job, &env).unwrap_err();
        assert!(
            format!("{e:#}").contains("j.fio:2: include missing.inc"),
            "{e:#}"
        );
    }

    #[test]
    fn malformed_files_are_refused_with_the_line() {
        let e = parse("rw=read\n[a]\n", Path::new("j.fio"), &env).unwrap_err();
        assert!(
            e.to_string().starts_with("j.fio:1: `rw=read` is outside"),
            "{e}"
        );
        let e = parse("fio version 3 iolog\n", Path::new("j.fio"), &env).unwrap_err();
        assert!(e.to_string().contains("iolab trace replay"), "{e}");
        let e = parse("[global]\nrw=read\n", Path::new("j.fio"), &env).unwrap_err();
        assert!(e.to_string().contains("no job"), "{e}");
    }

    #[test]
    fn fio_files_are_told_from_other_text() {
        assert!(looks_like_fio("; c\n\n[global]\nbs=4k\n"));
        assert!(looks_like_fio("[job]\n"));
        assert!(!looks_like_fio("[[job]]\naccess = \"read\"\n"));
        assert!(!looks_like_fio("access = \"read\"\n"));
        assert!(!looks_like_fio(""));
    }
}
