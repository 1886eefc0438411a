//! `iolab report RESULT.json…`: re-render saved results, overlaying several on one report.

use crate::output::{self, Rules};
use anyhow::{Context, Result};
use clap::Args;
use iolab_core::result::{RunResult, SCHEMA_VERSION};
use std::path::{Path, PathBuf};

/// `iolab report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Saved JSON results; several are drawn on the same charts, one series each.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// Where the HTML report goes (default: beside the first result, named like it, .html).
    #[arg(short = 'o', long = "output", value_name = "OUT.html")]
    pub output: Option<PathBuf>,
    /// Allow replacing an existing file that iolab did not write.
    #[arg(long)]
    pub overwrite: bool,
}

/// Reads one saved result, or says which file is wrong and why: iolab's own JSON result, or
/// fio 3.x's JSON output (`--output-format=json` or `json+`), converted into iolab's schema.
pub fn read_result(path: &Path) -> Result<RunResult> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the result {}", path.display()))?;
    if iolab_report::fio::import::looks_like_fio(&text) {
        return iolab_report::fio::import::parse_fio_json(&text).map_err(|e| {
            anyhow::anyhow!("{}: not readable as fio's JSON output: {e}", path.display())
        });
    }
    // The version first, so a result from another schema gets that reason rather than a
    // missing-field error.
    let value: serde_json::Value = serde_json::from_str(&text).with_context(|| {
        format!(
            "{}: not a JSON result (is it the file `--json` wrote, or fio's \
             --output-format=json output?)",
            path.display()
        )
    })?;
    match value.get("schema_version").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(SCHEMA_VERSION) => {}
        Some(v) => anyhow::bail!(
            "{}: schema_version {v} is not the one this iolab reads ({SCHEMA_VERSION}); render it with the iolab that wrote it",
            path.display()
        ),
        None => anyhow::bail!(
            "{}: no schema_version: not an iolab result (nor fio's JSON output, which names \
             \"fio version\")",
            path.display()
        ),
    }
    serde_json::from_value(value)
        .with_context(|| format!("{}: not a valid iolab result", path.display()))
}

/// The report's default path: `json`'s with the extension `.html`.
pub fn html_path_for(json: &Path) -> PathBuf {
    json.with_extension("html")
}

/// Refuses a JSON path whose report, written beside it ([`html_path_for`]), would be the JSON
/// file itself (`--json r.html`, or a name the report's path links to), or a file the output
/// rules keep (a file of the user's, an input): the report would replace it. Checked before a
/// suite measures anything.
pub fn check_beside(json: &Path, rules: &Rules) -> Result<()> {
    let out = html_path_for(json);
    let flag = format!("the report beside --json {}:", json.display());
    let mut with_json = rules.clone();
    with_json.inputs.push(json);
    if out == json {
        anyhow::bail!(
            "--json {}: a suite's HTML report goes beside its JSON result, named like it with \
             .html, so it would overwrite the result; give the result a .json name (e.g. \
             --json {}), and the report goes to {}",
            json.display(),
            json.with_extension("json").display(),
            out.display()
        );
    }
    // The same file under another name (a link), where both exist already.
    if let (Ok(a), Ok(b)) = (std::fs::metadata(json), std::fs::metadata(&out)) {
        if output::same_inode(&a, &b) {
            anyhow::bail!(
                "--json {}: the suite's HTML report would go to {}, which is the same file as \
                 the result; remove or rename {}, or give another --json path",
                json.display(),
                out.display(),
                out.display()
            );
        }
    }
    output::check(&flag, &out, &with_json)?;
    Ok(())
}

/// Writes the HTML report of `result` beside its JSON at `json`; returns its path.
pub fn write_beside(result: &RunResult, json: &Path, rules: &Rules) -> Result<PathBuf> {
    // Checked before the suite ran as well; here so that no caller can lose its result.
    check_beside(json, rules)?;
    let out = html_path_for(json);
    let flag = format!("the report beside --json {}:", json.display());
    let html = iolab_report::html::render_html(std::slice::from_ref(result));
    output::write(&flag, &out, rules, html.as_bytes())?;
    Ok(out)
}

/// Runs `iolab report`; returns the exit code.
pub fn run(args: ReportArgs) -> Result<i32> {
    let results = args
        .results
        .iter()
        .map(|p| read_result(p))
        .collect::<Result<Vec<_>>>()?;
    for r in &results {
        let table = match (r.kind.as_str(), &r.suite) {
            (_, Some(_)) => iolab_report::terminal::suite_table(r),
            ("quick", None) => iolab_report::terminal::quick_table(r),
            _ => iolab_report::terminal::run_table(r),
        };
        println!("{table}");
    }
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| html_path_for(&args.results[0]));
    let inputs: Vec<&Path> = args.results.iter().map(PathBuf::as_path).collect();
    let rules = Rules::new(&inputs, args.overwrite);
    output::write(
        "-o",
        &out,
        &rules,
        iolab_report::html::render_html(&results).as_bytes(),
    )?;
    println!("report written to {}", out.display());
    Ok(0)
}
