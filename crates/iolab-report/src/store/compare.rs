//! Runs side by side.

use super::*;

impl Store {
    /// Runs side by side: one row per job label and metric (and per score), one value per
    /// run. Jobs are matched by name; a name that repeats within a run is told apart by its
    /// round or its occurrence.
    pub fn compare(&self, ids: &[i64]) -> Result<Comparison> {
        let mut runs = Vec::with_capacity(ids.len());
        let mut rows: Vec<ComparedRow> = Vec::new();
        let mut index: std::collections::HashMap<(String, String), usize> = Default::default();
        // Each label's workload per run, to tell when the same name ran different work.
        let mut workloads: Vec<(String, Vec<Option<String>>)> = Vec::new();
        let mut put =
            |rows: &mut Vec<ComparedRow>, label: String, metric: String, col: usize, v| {
                let at = *index
                    .entry((label.clone(), metric.clone()))
                    .or_insert_with(|| {
                        rows.push(ComparedRow {
                            label,
                            metric,
                            values: vec![None; ids.len()],
                            ..ComparedRow::default()
                        });
                        rows.len() - 1
                    });
                rows[at].values[col] = Some(v);
            };
        for (col, &id) in ids.iter().enumerate() {
            let detail = self.show(id)?;
            let mut seen: std::collections::HashMap<String, u32> = Default::default();
            for step in &detail.steps {
                let mut label = match step.round {
                    Some(n) => format!("{} (round {n})", step.label),
                    None => step.label.clone(),
                };
                let count = seen.entry(label.clone()).or_insert(0);
                *count += 1;
                if *count > 1 {
                    label = format!("{label} #{count}");
                }
                if let Some(job) = &step.job {
                    let at = match workloads.iter().position(|(l, _)| *l == label) {
                        Some(at) => at,
                        None => {
                            workloads.push((label.clone(), vec![None; ids.len()]));
                            workloads.len() - 1
                        }
                    };
                    workloads[at].1[col] = Some(job.to_string());
                }
                for m in &step.metrics {
                    put(&mut rows, label.clone(), m.name.clone(), col, m.value);
                }
            }
            for s in &detail.scores {
                put(
                    &mut rows,
                    "score".into(),
                    format!("{} ({})", s.name, s.unit),
                    col,
                    s.value,
                );
            }
            runs.push(detail.summary);
        }
        // Keep each job's rows together, in metric order, even when a later run brought
        // metrics the first lacked.
        let order = metric_order();
        let rank = |m: &str| order.iter().position(|n| n == m).unwrap_or(order.len());
        let mut first_seen: Vec<&str> = Vec::new();
        for r in &rows {
            if !first_seen.contains(&r.label.as_str()) {
                first_seen.push(&r.label);
            }
        }
        let group = |label: &str| first_seen.iter().position(|l| *l == label);
        let mut keyed: Vec<_> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| (group(&r.label), rank(&r.metric), i))
            .collect();
        keyed.sort();
        let rows = keyed.into_iter().map(|(_, _, i)| rows[i].clone()).collect();
        let differing = workloads
            .into_iter()
            .filter(|(_, w)| {
                let mut seen = w.iter().flatten();
                let first = seen.next();
                seen.any(|x| Some(x) != first)
            })
            .collect();
        Ok(Comparison {
            runs,
            sides: Vec::new(),
            rows,
            differing,
        })
    }
}
