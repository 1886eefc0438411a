//! Published figures as data: the calibration set and the validation set
//! (`catalog/figures/calibration.toml`, `catalog/figures/validation.toml`).
//!
//! Each figure names its source (publication, address, date), the test as the review ran it
//! (one or more measurements on modelled testbeds, and an expression over them: a figure, a
//! ratio, a difference), and its tolerance. **A figure used to choose a parameter belongs to
//! calibration**; the validation set holds figures no parameter was chosen on, so its error is
//! the model's out-of-sample error. A figure moves from validation to calibration the moment a
//! parameter is set by looking at it, never back.
//!
//! The modelled value of every figure as of the last blessed run is kept beside them
//! (`catalog/figures/state.toml`), so `sim explain` can say how well a setup is validated
//! without running the sets; the calibration test checks that file against a fresh run.

use serde::Deserialize;
use std::collections::BTreeMap;

const CALIBRATION_TOML: &str = include_str!("../../../catalog/figures/calibration.toml");
const VALIDATION_TOML: &str = include_str!("../../../catalog/figures/validation.toml");
const STATE_TOML: &str = include_str!("../../../catalog/figures/state.toml");

/// Where a figure was published.
#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Source {
    /// Publication (site, vendor, journal).
    pub publication: String,
    /// Title of the article or document.
    pub title: String,
    /// Address where it was read.
    pub url: String,
    /// Publication date (YYYY-MM-DD, or YYYY-MM, or YYYY).
    pub date: String,
}

/// A one-sided figure: the review says "over" or "about half or less".
#[derive(Clone, Copy, Debug, Deserialize, serde::Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The modelled value must be at least the published one.
    AtLeast,
    /// The modelled value must be at most the published one.
    AtMost,
}

/// State a measurement starts from.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Prep {
    /// Secure-erased.
    #[default]
    Empty,
    /// The test span written sequentially first, in the measured job's data (what a review's
    /// read test reads).
    Written,
    /// The whole drive written sequentially (a suite's prepare fill), analytically.
    Full,
    /// The whole drive in the steady state of random writes, analytically.
    Steady,
}

/// What a measurement does.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// One job on a fresh model prepared as asked.
    #[default]
    Run,
    /// `runs` runs of the job on one model, `idle_s` apart; the `pick`-th (from 1) counts.
    Launches,
    /// A storage-bench trace (`profile`, `requests`) replayed as fast as possible at its
    /// recorded queue depth on a full drive, or in steady state with `prep = "steady"`.
    StorageBench,
    /// The model's capacity in bytes.
    Size,
    /// The model's idle power in W.
    IdlePower,
    /// The DMI 3.0 link's ceiling for 256-byte payloads, MB/s.
    Dmi3Ceiling,
}

/// What is read off a run.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Read plus write MB/s (10^6 bytes).
    #[default]
    MbS,
    /// Read plus write IOPS.
    Iops,
    /// Mean latency, µs.
    LatUs,
    /// Mean power over the run, W.
    Watts,
    /// I/Os slower than 10 ms (storage bench).
    #[serde(rename = "over_10ms")]
    Over10ms,
}

/// One measurement of a figure.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// `sim:DRIVE@PLATFORM[/PORT]`.
    #[serde(default)]
    pub target: String,
    /// What it does.
    #[serde(default)]
    pub kind: Kind,
    /// State it starts from.
    #[serde(default)]
    pub prep: Prep,
    /// A job of the file's `[job]` table.
    #[serde(default)]
    pub job: Option<String>,
    /// What is read off.
    #[serde(default)]
    pub metric: Metric,
    /// Launches: runs, the one that counts (from 1), idle seconds between.
    #[serde(default)]
    pub runs: Option<usize>,
    /// See `runs`.
    #[serde(default)]
    pub pick: Option<usize>,
    /// See `runs`.
    #[serde(default)]
    pub idle_s: Option<f64>,
    /// Storage bench: built-in trace profile and requests replayed.
    #[serde(default)]
    pub profile: Option<String>,
    /// See `profile`.
    #[serde(default)]
    pub requests: Option<u64>,
}

/// One published figure and how it is reproduced.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    /// Unique within both sets.
    pub id: String,
    /// Review or document, short.
    pub review: String,
    /// Test and path, as the table prints it.
    pub figure: String,
    /// Published value.
    pub published: f64,
    /// A one-sided figure.
    #[serde(default)]
    pub bound: Option<Bound>,
    /// Allowed error of a two-sided figure, %.
    #[serde(default = "default_tolerance")]
    pub tolerance_pct: f64,
    /// Key into the file's `[source]` table.
    pub source: String,
    /// A garbage-collection steady-state figure.
    #[serde(default)]
    pub steady_state: bool,
    /// Names the queue-depth curve the figure is a point of.
    #[serde(default)]
    pub qd_curve: Option<String>,
    /// Why the test is run as it is, where the review leaves a choice.
    #[serde(default)]
    pub note: Option<String>,
    /// Expression over the measurements' names: numbers, `+ - * /`, parentheses.
    pub value: String,
    /// The measurements, by name.
    pub measure: BTreeMap<String, Measure>,
}

fn default_tolerance() -> f64 {
    15.0
}

/// A set of figures as read from its file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureSet {
    /// `calibration` or `validation`.
    #[serde(skip)]
    pub name: String,
    /// Sources by key.
    #[serde(default)]
    pub source: BTreeMap<String, Source>,
    /// Jobs by name (the keys of a job file).
    #[serde(default)]
    pub job: BTreeMap<String, toml::Table>,
    /// The figures.
    pub figure: Vec<Figure>,
}

impl FigureSet {
    fn parse(name: &str, file: &str, text: &str) -> Result<FigureSet, String> {
        let mut set: FigureSet = toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
        set.name = name.into();
        for f in &set.figure {
            let at = |what: &str| format!("{file}: figure {}: {what}", f.id);
            if !set.source.contains_key(&f.source) {
                return Err(at(&format!("source {:?} is not in [source]", f.source)));
            }
            let names: Vec<&str> = f.measure.keys().map(String::as_str).collect();
            eval(&f.value, &|n| names.contains(&n).then_some(1.0)).map_err(|e| at(&e))?;
            for (m, measure) in &f.measure {
                if let Some(j) = &measure.job {
                    if !set.job.contains_key(j) {
                        return Err(at(&format!("measure {m}: job {j:?} is not in [job]")));
                    }
                }
                let needs_target = !matches!(measure.kind, Kind::Dmi3Ceiling);
                if needs_target && !measure.target.starts_with("sim:") {
                    return Err(at(&format!(
                        "measure {m}: target must be sim:DRIVE@PLATFORM"
                    )));
                }
                let needs_job = matches!(measure.kind, Kind::Run | Kind::Launches);
                if needs_job && measure.job.is_none() {
                    return Err(at(&format!("measure {m}: a job is needed")));
                }
            }
        }
        Ok(set)
    }

    /// The built-in calibration set.
    pub fn calibration() -> FigureSet {
        Self::parse(
            "calibration",
            "catalog/figures/calibration.toml",
            CALIBRATION_TOML,
        )
        .expect("built-in calibration set parses")
    }

    /// The built-in validation set.
    pub fn validation() -> FigureSet {
        Self::parse(
            "validation",
            "catalog/figures/validation.toml",
            VALIDATION_TOML,
        )
        .expect("built-in validation set parses")
    }
}

/// The drive and the platform a target names (`sim:DRIVE@PLATFORM/PORT`).
pub fn drive_and_platform(target: &str) -> (String, String) {
    let rest = target.strip_prefix("sim:").unwrap_or(target);
    let (drive, path) = rest.split_once('@').unwrap_or((rest, ""));
    let platform = path.split('/').next().unwrap_or("");
    (drive.to_string(), platform.to_string())
}

/// A drive's family: its catalog name without the capacity, or the channel count of a card's
/// member, and what follows (`ssd750-1200` → `ssd750`, `revodrive-120-jbod` → `revodrive`,
/// `revodrive-x2-100` → `revodrive-x2`, `sf1200-4ch` → `sf1200`): an IBIS's 4-channel member
/// is the same controller, firmware and flash as the other SF-1200s, as a 25 GB one is.
pub fn drive_family(drive: &str) -> String {
    let is_variant = |part: &str| {
        let digits = part.strip_suffix("ch").unwrap_or(part);
        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    };
    let mut out: Vec<&str> = Vec::new();
    for part in drive.split('-') {
        if is_variant(part) && !out.is_empty() {
            break;
        }
        out.push(part);
    }
    out.join("-")
}

/// The modelled value of each figure as of the last blessed run, by figure id.
pub fn recorded_state() -> BTreeMap<String, f64> {
    #[derive(Deserialize)]
    struct Row {
        id: String,
        modelled: f64,
    }
    #[derive(Deserialize)]
    struct State {
        #[serde(default)]
        row: Vec<Row>,
    }
    toml::from_str::<State>(STATE_TOML)
        .expect("built-in figure state parses")
        .row
        .into_iter()
        .map(|r| (r.id, r.modelled))
        .collect()
}

/// How well the figures validate a drive family and a platform: for each, the validation
/// figures that ran on it (from the recorded state), how many are within tolerance, and the
/// median and largest error of the two-sided ones; "not validated" where there is none. A
/// third line does the same for the garbage-collection steady state on every drive.
pub fn validation_summary(drive: &str, platform: &str) -> Vec<String> {
    let set = FigureSet::validation();
    let state = recorded_state();
    let family = drive_family(drive);
    let runs_on = |f: &Figure, on: &dyn Fn(&str, &str) -> bool| {
        f.measure.values().any(|m| {
            let (d, p) = drive_and_platform(&m.target);
            !m.target.is_empty() && on(&d, &p)
        })
    };
    vec![
        summary_line(
            &format!("validated, drive family {family}"),
            &set,
            &state,
            &|f| runs_on(f, &|d, _| drive_family(d) == family),
        ),
        summary_line(
            &format!("validated, platform {platform}"),
            &set,
            &state,
            &|f| runs_on(f, &|_, p| p == platform),
        ),
        steady_state_validation(),
    ]
}

/// How well the validation set checks the model in garbage-collection steady state, on every
/// drive: its steady-state figures (from the recorded state), how many are within tolerance,
/// and their error. Said with a model's results when collection ran during them.
pub fn steady_state_validation() -> String {
    summary_line(
        "validated in garbage-collection steady state (every drive)",
        &FigureSet::validation(),
        &recorded_state(),
        &|f| f.steady_state,
    )
}

/// How well the validation set checks the model replaying traces, on every drive: its figures
/// of AnandTech's Storage Bench replayed on a model (data rates and average latencies). Said
/// with a replay's results on a model.
pub fn trace_replay_validation() -> String {
    summary_line(
        "validated replaying traces (AnandTech's Storage Bench, every drive)",
        &FigureSet::validation(),
        &recorded_state(),
        &|f| f.measure.values().any(|m| m.kind == Kind::StorageBench),
    )
}

/// `what`: how many of the figures of `set` that `pick` takes are within tolerance in the
/// recorded `state`, and the median and largest error of the two-sided ones.
fn summary_line(
    what: &str,
    set: &FigureSet,
    state: &BTreeMap<String, f64>,
    pick: &dyn Fn(&Figure) -> bool,
) -> String {
    let mut n = 0;
    let mut within = 0;
    let mut errors: Vec<f64> = Vec::new();
    for f in set.figure.iter().filter(|f| pick(f)) {
        let Some(&modelled) = state.get(&f.id) else {
            continue;
        };
        n += 1;
        let err = (modelled - f.published) / f.published * 100.0;
        let ok = match f.bound {
            Some(Bound::AtLeast) => modelled >= f.published,
            Some(Bound::AtMost) => modelled <= f.published,
            None => {
                errors.push(err.abs());
                err.abs() <= f.tolerance_pct
            }
        };
        within += usize::from(ok);
    }
    if n == 0 {
        return format!("{what}: not validated (no published figure outside the calibration set)");
    }
    errors.sort_by(f64::total_cmp);
    let spread = match (errors.get(errors.len() / 2), errors.last()) {
        (Some(median), Some(max)) => format!(", |error| median {median:.0} %, largest {max:.0} %"),
        _ => String::new(),
    };
    format!("{what}: {within} of {n} validation figures within tolerance{spread}")
}

/// Evaluates `expr` with `var` giving each name's value.
pub fn eval(expr: &str, var: &dyn Fn(&str) -> Option<f64>) -> Result<f64, String> {
    let tokens = tokenize(expr)?;
    let mut p = Parser {
        tokens: &tokens,
        at: 0,
        var,
    };
    let v = p.sum()?;
    if p.at != tokens.len() {
        return Err(format!("value {expr:?}: unexpected {:?}", tokens[p.at]));
    }
    Ok(v)
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Num(f64),
    Name(String),
    Op(char),
}

fn tokenize(expr: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = expr.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if "+-*/()".contains(c) {
            out.push(Token::Op(c));
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || chars[i] == '.'
                    || chars[i] == 'e'
                    || (chars[i] == '-' && chars[i - 1] == 'e'))
            {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            out.push(Token::Num(
                s.parse()
                    .map_err(|_| format!("value {expr:?}: bad number {s:?}"))?,
            ));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token::Name(chars[start..i].iter().collect()));
        } else {
            return Err(format!("value {expr:?}: unexpected {c:?}"));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: &'a [Token],
    at: usize,
    var: &'a dyn Fn(&str) -> Option<f64>,
}

impl Parser<'_> {
    fn sum(&mut self) -> Result<f64, String> {
        let mut v = self.product()?;
        while let Some(&Token::Op(op @ ('+' | '-'))) = self.tokens.get(self.at) {
            self.at += 1;
            let r = self.product()?;
            v = if op == '+' { v + r } else { v - r };
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<f64, String> {
        let mut v = self.atom()?;
        while let Some(&Token::Op(op @ ('*' | '/'))) = self.tokens.get(self.at) {
            self.at += 1;
            let r = self.atom()?;
            v = if op == '*' { v * r } else { v / r };
        }
        Ok(v)
    }

    fn atom(&mut self) -> Result<f64, String> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        match t {
            Some(Token::Num(n)) => Ok(n),
            Some(Token::Name(n)) => (self.var)(&n).ok_or_else(|| format!("no measure {n:?}")),
            Some(Token::Op('(')) => {
                let v = self.sum()?;
                match self.tokens.get(self.at) {
                    Some(Token::Op(')')) => {
                        self.at += 1;
                        Ok(v)
                    }
                    _ => Err("missing ')'".into()),
                }
            }
            Some(Token::Op('-')) => Ok(-self.atom()?),
            other => Err(format!("unexpected {other:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_evaluate_with_precedence() {
        let var = |n: &str| match n {
            "a" => Some(6.0),
            "b" => Some(3.0),
            _ => None,
        };
        assert_eq!(eval("a / b", &var), Ok(2.0));
        assert_eq!(eval("a - b * 2", &var), Ok(0.0));
        let v = eval("(a + 256e9) / 1e9", &var).expect("evaluates");
        assert!((v - 256.000000006).abs() < 1e-9, "{v}");
        assert!(eval("a / c", &var).is_err());
        assert!(eval("a b", &var).is_err());
    }

    #[test]
    fn families_drop_the_capacity() {
        assert_eq!(drive_family("ssd750-1200"), "ssd750");
        assert_eq!(drive_family("revodrive-120-jbod"), "revodrive");
        assert_eq!(drive_family("revodrive-x2-100"), "revodrive-x2");
        assert_eq!(drive_family("vertex-le-100"), "vertex-le");
        assert_eq!(drive_family("sf1200-4ch"), "sf1200");
        assert_eq!(drive_family("storemi-ram"), "storemi-ram");
        assert_eq!(drive_family("nvme2018-500"), "nvme2018");
        assert_eq!(
            drive_and_platform("sim:c300-256@x58/ioh-marvell"),
            ("c300-256".into(), "x58".into())
        );
    }

    #[test]
    fn both_sets_parse_with_unique_ids_and_no_figure_in_both() {
        let (c, v) = (FigureSet::calibration(), FigureSet::validation());
        let mut ids = std::collections::HashSet::new();
        for f in c.figure.iter().chain(&v.figure) {
            assert!(ids.insert(f.id.clone()), "duplicate id {}", f.id);
        }
        for f in &v.figure {
            assert!(
                !c.figure
                    .iter()
                    .any(|g| g.review == f.review && g.figure == f.figure),
                "{} is in both sets",
                f.id
            );
        }
    }
}
