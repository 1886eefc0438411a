//! CSV (RFC 4180) of what the results store holds, for spreadsheets and scripts: a run's jobs
//! with every metric (`results export --csv`), and runs side by side (`results compare
//! --csv`). Figures are written in full precision, in the units their column names say; an
//! empty cell is a figure the run does not have.

use crate::store::{metric_order, Comparison, RunDetail};
use std::fmt::Write;

/// One CSV field, quoted where it must be (a comma, a quote or a line break in it).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn line(out: &mut String, cells: &[String]) {
    let cells: Vec<String> = cells.iter().map(|c| field(c)).collect();
    let _ = write!(out, "{}\r\n", cells.join(","));
}

fn number(v: Option<f64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

/// A run's jobs, one row each, every metric a column (in [`metric_order`]).
pub fn run_csv(d: &RunDetail) -> String {
    let names = metric_order();
    let mut out = String::new();
    let mut header: Vec<String> = [
        "run",
        "key",
        "kind",
        "tool_version",
        "target",
        "job_index",
        "job",
        "workload",
        "complete",
        "measured_s",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    header.extend(names.iter().cloned());
    line(&mut out, &header);
    for step in &d.steps {
        let mut cells = vec![
            d.summary.id.to_string(),
            d.summary.key.clone(),
            d.summary.kind.clone(),
            d.summary.tool_version.clone(),
            d.target.path.clone(),
            step.job_index.to_string(),
            step.label.clone(),
            step.job.as_ref().map(|j| j.to_string()).unwrap_or_default(),
            step.complete.to_string(),
            (step.measured_ns as f64 / 1e9).to_string(),
        ];
        for name in &names {
            cells.push(number(
                step.metrics
                    .iter()
                    .find(|m| &m.name == name)
                    .map(|m| m.value),
            ));
        }
        line(&mut out, &cells);
    }
    out
}

/// Runs (or sides of several runs) side by side: one row per job and metric; with two
/// columns the change in percent; with repeats each column's lowest and highest value.
pub fn compare_csv(c: &Comparison) -> String {
    let names: Vec<String> = if c.sides.is_empty() {
        c.runs.iter().map(|r| format!("run {}", r.id)).collect()
    } else {
        c.sides
            .iter()
            .map(|s| {
                let ids: Vec<String> = s.iter().map(|r| r.id.to_string()).collect();
                format!("runs {}", ids.join(" "))
            })
            .collect()
    };
    let two = names.len() == 2;
    let spreads = c.rows.iter().any(|r| r.spread.iter().any(Option::is_some));
    let mut header = vec!["job".to_string(), "metric".into()];
    header.extend(names.iter().cloned());
    if spreads {
        for n in &names {
            header.push(format!("{n} min"));
            header.push(format!("{n} max"));
        }
    }
    if two {
        header.push("change_pct".into());
        header.push("noise".into());
    }
    let mut out = String::new();
    line(&mut out, &header);
    for row in &c.rows {
        let mut cells = vec![row.label.clone(), row.metric.clone()];
        cells.extend(row.values.iter().map(|v| number(*v)));
        if spreads {
            for i in 0..names.len() {
                let s = row.spread.get(i).copied().flatten();
                cells.push(number(s.map(|s| s.min)));
                cells.push(number(s.map(|s| s.max)));
            }
        }
        if two {
            cells.push(match (row.values[0], row.values[1]) {
                (Some(a), Some(b)) if a != 0.0 => (100.0 * (b - a) / a.abs()).to_string(),
                _ => String::new(),
            });
            let spread = |i: usize| row.spread.get(i).copied().flatten();
            cells.push(match (row.values[0], row.values[1]) {
                (Some(a), Some(b)) => {
                    match crate::compare::within_noise((a, spread(0)), (b, spread(1))) {
                        Some(true) => "within".into(),
                        Some(false) => "beyond".into(),
                        None => String::new(),
                    }
                }
                _ => String::new(),
            });
        }
        line(&mut out, &cells);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_quoted_only_where_they_must_be() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        let mut out = String::new();
        line(&mut out, &["x".into(), "1,5".into()]);
        assert_eq!(out, "x,\"1,5\"\r\n");
    }
}
