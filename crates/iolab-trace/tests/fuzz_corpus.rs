//! Runs every file of the committed cargo-fuzz corpus (fuzz/corpus/<target>/) through the
//! same body as the fuzz targets, on stable, so CI exercises the corpus without nightly
//! or cargo-fuzz. Also checks that every reader has a fuzz target and a non-empty corpus,
//! and that the hand-written seeds are valid input (inputs libFuzzer added, named by
//! their SHA-1, only have to not panic).

use std::path::{Path, PathBuf};

use iolab_trace::{open_bytes, Event, Format, ReadOptions, ALL_FORMATS};

/// The fuzz targets' shared body, compiled here exactly as the targets use it.
#[path = "../../../fuzz/src/lib.rs"]
mod fuzz_body;

const FUZZ: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz");

/// What a fuzz target reads.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// One format, named.
    Read(Format),
    /// Whatever format detection finds.
    Detect,
    /// Compressed input, through the decompressing reader.
    Decompress,
}

/// (target name, what it reads) from fuzz/Cargo.toml.
fn targets() -> Vec<(String, Kind)> {
    let manifest = std::fs::read_to_string(Path::new(FUZZ).join("Cargo.toml"))
        .expect("fuzz/Cargo.toml is missing");
    let doc: toml::Value = toml::from_str(&manifest).expect("fuzz/Cargo.toml parses");
    let bins = doc
        .get("bin")
        .and_then(|b| b.as_array())
        .expect("fuzz/Cargo.toml has [[bin]] targets");
    bins.iter()
        .map(|b| {
            let name = b["name"].as_str().expect("target name").to_string();
            let path = b["path"].as_str().expect("target path");
            assert_eq!(
                path,
                format!("fuzz_targets/{name}.rs"),
                "target {name}: unexpected path"
            );
            let source = std::fs::read_to_string(Path::new(FUZZ).join(path))
                .unwrap_or_else(|e| panic!("{path}: {e}"));
            let format = match name.strip_prefix("read_") {
                Some(f) => {
                    let format = Format::from_name(f).unwrap_or_else(|e| panic!("{name}: {e}"));
                    assert_eq!(
                        format.name(),
                        f,
                        "target {name} must use the canonical name"
                    );
                    assert!(
                        source.contains(&format!("drain(Some(\"{f}\"), data)")),
                        "{path} must call drain(Some(\"{f}\"), data)"
                    );
                    Kind::Read(format)
                }
                None if name == "decompress" => {
                    assert!(source.contains("drain_decompress(data)"), "{path}");
                    Kind::Decompress
                }
                None => {
                    assert_eq!(name, "detect", "unknown kind of fuzz target {name}");
                    assert!(source.contains("drain(None, data)"), "{path}");
                    Kind::Detect
                }
            };
            (name, format)
        })
        .collect()
}

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(FUZZ).join("corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e} (every fuzz target keeps a corpus)", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "{} is empty", dir.display());
    files
}

/// libFuzzer names the inputs it adds by the SHA-1 of their content.
fn added_by_fuzzer(path: &Path) -> bool {
    let name = path.file_name().unwrap().to_string_lossy();
    name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

#[test]
fn every_reader_has_a_fuzz_target_with_a_corpus() {
    let targets = targets();
    for format in ALL_FORMATS {
        assert!(
            targets.iter().any(|(_, k)| *k == Kind::Read(format)),
            "no fuzz target read_{format} in fuzz/Cargo.toml"
        );
    }
    assert!(targets.iter().any(|(n, _)| n == "detect"));
    assert!(targets.iter().any(|(n, _)| n == "decompress"));
    for (name, _) in &targets {
        corpus(name);
    }
}

#[test]
fn the_corpus_never_panics_and_seeds_are_valid() {
    let mut files = 0;
    let mut bad_seeds = std::collections::BTreeSet::new();
    for (name, kind) in targets() {
        for path in corpus(&name) {
            let data = std::fs::read(&path).unwrap();
            let shown = path.display().to_string();
            // What the fuzz target does with it (all modes, then analysis): must not panic.
            let format = match kind {
                Kind::Read(f) => Some(f),
                Kind::Detect | Kind::Decompress => None,
            };
            match kind {
                Kind::Decompress => fuzz_body::drain_decompress(&data),
                _ => fuzz_body::drain(format.map(Format::name), &data),
            }
            files += 1;
            if added_by_fuzzer(&path) {
                continue;
            }
            let file = path.file_name().unwrap().to_string_lossy();
            // A bad-input seed (bad_…) is refused with an error that names the file (and the
            // line, for a line that is wrong): never a panic, never a silent empty trace.
            if file.starts_with("bad_") || file.starts_with("refused_") {
                let opts = ReadOptions {
                    format,
                    ..ReadOptions::default()
                };
                let err = match open_bytes(&shown, data.clone(), &opts) {
                    Err(e) => e.to_string(),
                    Ok(r) => match r.collect::<Result<Vec<_>, _>>() {
                        Err(e) => e.to_string(),
                        Ok(recs) => panic!("{shown}: bad input read as {} records", recs.len()),
                    },
                };
                assert!(
                    err.starts_with(&format!("{shown}:")),
                    "{shown}: the error does not name the file: {err}"
                );
                assert!(
                    !err.chars().any(|c| c.is_control()),
                    "{shown}: control bytes in {err:?}"
                );
                bad_seeds.insert(name.clone());
                continue;
            }
            // A hand-written seed is a valid trace: it is detected as the format its name
            // (detect/<format>_…, decompress/<format>_…) or its directory says, and reads
            // without a bad line.
            let want = format.unwrap_or_else(|| {
                let prefix = file.split('_').next().unwrap();
                Format::from_name(prefix)
                    .unwrap_or_else(|_| panic!("{shown}: detect seeds are named <format>_…"))
            });
            // blkparse/blktrace seeds may hold only Q (or only C) events.
            let mut most = 0;
            for event in [Event::D, Event::Q, Event::C] {
                let opts = ReadOptions {
                    event,
                    format: format.filter(|f| matches!(f, Format::Disksim | Format::Mqsim)),
                    ..ReadOptions::default()
                };
                let r = open_bytes(&shown, data.clone(), &opts).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(r.format(), want, "{shown}: detected as {}", r.format());
                let n = r
                    .map(|x| x.map_err(|e| e.to_string()))
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap_or_else(|e| panic!("seed {e}"))
                    .len();
                most = most.max(n);
            }
            assert!(most > 0, "{shown}: a seed should hold at least one record");
        }
    }
    // The bad-input corpus: every reader, detection and the decompressor have bad seeds.
    for (name, _) in targets() {
        assert!(
            bad_seeds.contains(&name),
            "fuzz/corpus/{name} has no bad_… seed (bad input that must be refused)"
        );
    }
    assert!(files >= 30, "only {files} corpus files");
}
