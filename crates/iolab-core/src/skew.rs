//! Skewed random access: which block of a span a random I/O goes to when some blocks are hotter
//! than others (fio's `random_distribution`): zipf(θ), pareto(h), normal(σ), and hot zones
//! given as shares of the span (`zoned`) or in bytes (`zoned_abs`).
//!
//! Pure and seeded like the rest of the workload: a [`Distribution`] is parsed from the job's
//! `distribution` key, and a [`Skew`] draws block indices from a worker's [`Rng`].

use crate::rng::{Permutation, Rng};
use crate::size::parse_size;
use serde::{Deserialize, Serialize};
use std::fmt;

/// One hot zone: a share of the accesses that falls in the next stretch of the span.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    /// Percent of the random accesses that land in this zone.
    pub access_pct: f64,
    /// The zone's length: percent of the span (`zoned`) or bytes (`zoned_abs`).
    pub extent: f64,
}

/// How random offsets are spread over the span.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Distribution {
    /// Every block equally likely (the default).
    #[default]
    Uniform,
    /// Zipf with exponent `theta`: the block of rank k is hit in proportion to 1/k^θ. Ranks are
    /// scattered over the span by the seed, as fio scatters them, so hot blocks are not adjacent.
    Zipf {
        /// The exponent θ (> 0).
        theta: f64,
    },
    /// fio's Pareto: rank ⌊(n−1)·u^(ln h / ln(1−h))⌋ for uniform u, so that a share 1−h of the
    /// accesses goes to a share h of the blocks (h = 0.2: the 80/20 rule). Scattered as zipf.
    Pareto {
        /// The power h, in (0, 1).
        h: f64,
    },
    /// Normal (Gaussian) around the middle of the span, with a standard deviation of `sigma_pct`
    /// percent of the span; draws outside it are drawn again.
    Normal {
        /// Standard deviation as percent of the span (0–100].
        sigma_pct: f64,
    },
    /// Hot zones as shares of the span, from its start: `zoned:60/10:30/20:10/70`.
    Zoned {
        /// The zones, in order.
        zones: Vec<Zone>,
    },
    /// Hot zones of absolute size, from the span's start: `zoned_abs:60/1g:40/10g`.
    ZonedAbs {
        /// The zones, in order (extent in bytes).
        zones: Vec<Zone>,
    },
}

impl Distribution {
    /// True for the uniform default (left out of results, as written before the key existed).
    pub fn is_uniform(&self) -> bool {
        matches!(self, Distribution::Uniform)
    }
}

/// Parses `random`, `zipf:1.2`, `pareto:0.2`, `normal:10` (`gauss` too), `zoned:60/10:30/20:10/`
/// or `zoned_abs:60/1g:40/4g`. A blank share of a zone takes an even part of what the given
/// shares leave of 100, as in fio's `bssplit`.
impl std::str::FromStr for Distribution {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
        let number = |what: &str| -> Result<f64, String> {
            let (first, rest) = arg.split_once(':').unwrap_or((arg, ""));
            if !rest.is_empty() {
                return Err(format!(
                    "'{s}': a second value (fio's centre of the distribution) is not supported; \
                     give {kind}:{first}"
                ));
            }
            first
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("'{s}': {kind} needs {what}, e.g. {}", example(kind)))
        };
        Ok(match kind.trim() {
            "random" | "uniform" if arg.is_empty() => Distribution::Uniform,
            "zipf" => {
                let theta = number("an exponent θ")?;
                if theta <= 0.0 {
                    return Err(format!("'{s}': zipf's θ must be above 0, e.g. zipf:1.2"));
                }
                Distribution::Zipf { theta }
            }
            "pareto" => {
                let h = number("a power h between 0 and 1")?;
                if !(h > 0.0 && h < 1.0) {
                    return Err(format!(
                        "'{s}': pareto's h must be between 0 and 1 (exclusive), e.g. pareto:0.2"
                    ));
                }
                Distribution::Pareto { h }
            }
            "normal" | "gauss" => {
                let sigma_pct = number("a deviation in percent of the span")?;
                if !(sigma_pct > 0.0 && sigma_pct <= 100.0) {
                    return Err(format!(
                        "'{s}': the deviation is percent of the span, above 0 and at most 100"
                    ));
                }
                Distribution::Normal { sigma_pct }
            }
            "zoned" => Distribution::Zoned {
                zones: parse_zones(s, arg, false)?,
            },
            "zoned_abs" => Distribution::ZonedAbs {
                zones: parse_zones(s, arg, true)?,
            },
            _ => {
                return Err(format!(
                    "unknown distribution '{s}': use random, zipf:THETA, pareto:H, normal:SIGMA%, \
                     zoned:ACCESS%/SPAN%:… or zoned_abs:ACCESS%/SIZE:…"
                ))
            }
        })
    }
}

fn example(kind: &str) -> &'static str {
    match kind {
        "zipf" => "zipf:1.2",
        "pareto" => "pareto:0.2",
        _ => "normal:10",
    }
}

/// The zones of `zoned:` (`absolute` false: extents in percent) or `zoned_abs:` (sizes).
fn parse_zones(whole: &str, list: &str, absolute: bool) -> Result<Vec<Zone>, String> {
    if list.contains(',') {
        return Err(format!(
            "'{whole}' gives separate zones for reads and writes (fio's READ,WRITE form), which \
             is not supported: give one list, used for reads and writes alike"
        ));
    }
    let mut zones = Vec::new();
    let mut blanks = 0;
    for part in list.split(':').filter(|p| !p.trim().is_empty()) {
        let Some((access, extent)) = part.split_once('/') else {
            return Err(format!(
                "'{part}' in '{whole}' is not ACCESS%/{}",
                if absolute { "SIZE" } else { "SPAN%" }
            ));
        };
        let access = access.trim();
        let access_pct = if access.is_empty() {
            blanks += 1;
            f64::NAN
        } else {
            access
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("'{access}' in '{whole}' is not a percentage"))?
        };
        let extent = extent.trim();
        let extent = if absolute {
            parse_size(extent).map_err(|e| format!("'{whole}': {e}"))? as f64
        } else if extent.is_empty() {
            // fio's `20/`: the rest of the span.
            f64::NAN
        } else {
            extent
                .trim_end_matches('%')
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0 && *v <= 100.0)
                .ok_or_else(|| {
                    format!("'{extent}' in '{whole}' is not a share of the span (0–100)")
                })?
        };
        zones.push(Zone { access_pct, extent });
    }
    if zones.is_empty() {
        return Err(format!("'{whole}' lists no zone, e.g. zoned:60/10:40/90"));
    }
    let given: f64 = zones
        .iter()
        .filter(|z| !z.access_pct.is_nan())
        .map(|z| z.access_pct)
        .sum();
    if blanks > 0 {
        let rest = (100.0 - given) / blanks as f64;
        if rest <= 0.0 {
            return Err(format!(
                "'{whole}': the given shares add up to {given}, leaving nothing for the blank one"
            ));
        }
        for z in zones.iter_mut().filter(|z| z.access_pct.is_nan()) {
            z.access_pct = rest;
        }
    }
    let total: f64 = zones.iter().map(|z| z.access_pct).sum();
    if (total - 100.0).abs() > 1e-6 {
        return Err(format!(
            "'{whole}': the access shares add up to {total}, not 100"
        ));
    }
    if !absolute {
        let spans = zones.iter().filter(|z| z.extent.is_nan()).count();
        let used: f64 = zones
            .iter()
            .filter(|z| !z.extent.is_nan())
            .map(|z| z.extent)
            .sum();
        if used > 100.0 + 1e-6 || (spans > 0 && used >= 100.0) {
            return Err(format!(
                "'{whole}': the zones cover {used} % of the span, more than all of it"
            ));
        }
        for z in zones.iter_mut().filter(|z| z.extent.is_nan()) {
            z.extent = (100.0 - used) / spans as f64;
        }
    }
    Ok(zones)
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let zones = |f: &mut fmt::Formatter<'_>, kind: &str, zones: &[Zone], abs: bool| {
            let list = zones
                .iter()
                .map(|z| {
                    let extent = if abs {
                        crate::size::format_size(z.extent as u64)
                    } else {
                        format!("{}", z.extent)
                    };
                    format!("{}/{extent}", z.access_pct)
                })
                .collect::<Vec<_>>()
                .join(":");
            write!(f, "{kind}:{list}")
        };
        match self {
            Distribution::Uniform => write!(f, "random"),
            Distribution::Zipf { theta } => write!(f, "zipf:{theta}"),
            Distribution::Pareto { h } => write!(f, "pareto:{h}"),
            Distribution::Normal { sigma_pct } => write!(f, "normal:{sigma_pct}"),
            Distribution::Zoned { zones: z } => zones(f, "zoned", z, false),
            Distribution::ZonedAbs { zones: z } => zones(f, "zoned_abs", z, true),
        }
    }
}

/// Draws block indices in `0..n` for one worker, as a [`Distribution`] says.
#[derive(Clone, Debug)]
pub enum Skew {
    /// fio's zipf, by rejection-inversion (Hörmann and Derflinger, 1996): exact for any n and
    /// θ, a few operations per draw, no table.
    Zipf {
        /// The sampler.
        sampler: ZipfSampler,
        /// Scatters ranks over the blocks.
        scatter: Permutation,
    },
    /// fio's pareto.
    Pareto {
        /// ln h / ln (1 − h).
        power: f64,
        /// Blocks.
        n: u64,
        /// Scatters ranks over the blocks.
        scatter: Permutation,
    },
    /// Normal around the middle.
    Normal {
        /// Blocks.
        n: u64,
        /// Standard deviation in blocks.
        sigma: f64,
    },
    /// Zones: cumulative access share and the block range `[lo, hi)` of each.
    Zones(Vec<(f64, u64, u64)>),
}

impl Skew {
    /// The sampler of `dist` over `n` blocks of `block` bytes each (`None` for uniform), its
    /// scatter chosen by `seed`.
    pub fn new(dist: &Distribution, n: u64, block: u64, seed: u64) -> Option<Skew> {
        let n = n.max(1);
        let scatter = || Permutation::new(n, seed ^ 0x5CA7_7E25);
        Some(match dist {
            Distribution::Uniform => return None,
            Distribution::Zipf { theta } => Skew::Zipf {
                sampler: ZipfSampler::new(n, *theta),
                scatter: scatter(),
            },
            Distribution::Pareto { h } => Skew::Pareto {
                power: h.ln() / (1.0 - h).ln(),
                n,
                scatter: scatter(),
            },
            Distribution::Normal { sigma_pct } => Skew::Normal {
                n,
                sigma: (sigma_pct / 100.0 * n as f64).max(1e-9),
            },
            Distribution::Zoned { zones } | Distribution::ZonedAbs { zones } => {
                let absolute = matches!(dist, Distribution::ZonedAbs { .. });
                let mut out = Vec::new();
                let (mut cum, mut at) = (0.0, 0u64);
                for z in zones {
                    let blocks = if absolute {
                        (z.extent / block as f64) as u64
                    } else {
                        (z.extent / 100.0 * n as f64).round() as u64
                    };
                    let hi = at.saturating_add(blocks.max(1)).min(n);
                    let lo = at.min(hi.saturating_sub(1));
                    cum += z.access_pct / 100.0;
                    if z.access_pct > 0.0 {
                        out.push((cum, lo, hi.max(lo + 1)));
                    }
                    at = hi;
                }
                Skew::Zones(out)
            }
        })
    }

    /// The next block index, in `0..n`.
    #[inline]
    pub fn next(&self, rng: &mut Rng) -> u64 {
        let rank = self.next_rank(rng);
        match self {
            Skew::Zipf { scatter, .. } | Skew::Pareto { scatter, .. } => scatter.at(rank),
            _ => rank,
        }
    }

    /// The next draw before zipf's and pareto's ranks are scattered over the span: 0 is the
    /// hottest block, 1 the next, and so on (the block itself for the others).
    pub fn next_rank(&self, rng: &mut Rng) -> u64 {
        match self {
            Skew::Zipf { sampler, .. } => sampler.sample(rng) - 1,
            Skew::Pareto { power, n, .. } => {
                let rank = ((*n - 1) as f64 * rng.unit().powf(*power)) as u64;
                rank.min(n - 1)
            }
            Skew::Normal { n, sigma } => {
                let centre = *n as f64 / 2.0;
                loop {
                    // Box–Muller; one of the pair is enough.
                    let (u1, u2) = (1.0 - rng.unit(), rng.unit());
                    let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                    let x = centre + z * sigma;
                    if x >= 0.0 && x < *n as f64 {
                        return x as u64;
                    }
                }
            }
            Skew::Zones(zones) => {
                let u = rng.unit();
                let &(_, lo, hi) = zones
                    .iter()
                    .find(|z| u < z.0)
                    .unwrap_or(&zones[zones.len() - 1]);
                lo + rng.below(hi - lo)
            }
        }
    }
}

/// Zipf ranks `1..=n` with exponent θ by rejection-inversion.
#[derive(Clone, Debug)]
pub struct ZipfSampler {
    n: u64,
    exponent: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    s: f64,
}

impl ZipfSampler {
    /// The sampler of ranks `1..=n` (n ≥ 1) with exponent `exponent` (> 0).
    pub fn new(n: u64, exponent: f64) -> Self {
        let mut z = ZipfSampler {
            n: n.max(1),
            exponent,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            s: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(z.n as f64 + 0.5);
        z.s = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// A rank in `1..=n`.
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_integral_n + rng.unit() * (self.h_integral_x1 - self.h_integral_n);
            let x = self.h_integral_inverse(u);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            if k as f64 - x <= self.s || u >= self.h_integral(k as f64 + 0.5) - self.h(k as f64) {
                return k;
            }
        }
    }

    fn h(&self, x: f64) -> f64 {
        (-self.exponent * x.ln()).exp()
    }

    fn h_integral(&self, x: f64) -> f64 {
        let log_x = x.ln();
        helper2((1.0 - self.exponent) * log_x) * log_x
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.exponent)).max(-1.0);
        (helper1(t) * x).exp()
    }
}

/// ln(1 + x) / x, exact near 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - x * 0.25))
    }
}

/// (e^x − 1) / x, exact near 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + x * 0.25))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dist(s: &str) -> Distribution {
        s.parse().unwrap()
    }

    /// Share of `draws` that fall on the `hot` hottest ranks.
    fn hottest_share(skew: &Skew, hot: u64, draws: usize, seed: u64) -> f64 {
        let mut rng = Rng::new(seed);
        let hits = (0..draws)
            .filter(|_| skew.next_rank(&mut rng) < hot)
            .count();
        hits as f64 / draws as f64
    }

    #[test]
    fn zipf_hottest_tenth_gets_its_analytic_share() {
        let n = 10_000u64;
        for theta in [0.8, 1.2, 2.0] {
            let skew = Skew::new(&dist(&format!("zipf:{theta}")), n, 4096, 7).unwrap();
            let weight = |k: u64| (k as f64).powf(-theta);
            let all: f64 = (1..=n).map(weight).sum();
            let top: f64 = (1..=n / 10).map(weight).sum();
            let analytic = top / all;
            let seen = hottest_share(&skew, n / 10, 400_000, 3);
            assert!(
                (seen - analytic).abs() < 0.005,
                "θ {theta}: {seen} vs analytic {analytic}"
            );
        }
    }

    #[test]
    fn zipf_ranks_follow_the_power_law_at_the_head() {
        // P(rank 1) / P(rank 2) = 2^θ.
        let z = ZipfSampler::new(1_000_000, 1.2);
        let mut rng = Rng::new(1);
        let (mut one, mut two) = (0u64, 0u64);
        for _ in 0..500_000 {
            match z.sample(&mut rng) {
                1 => one += 1,
                2 => two += 1,
                _ => {}
            }
        }
        let ratio = one as f64 / two as f64;
        assert!((ratio - 2f64.powf(1.2)).abs() < 0.05, "{ratio}");
    }

    #[test]
    fn hot_ranks_are_scattered_over_the_span_one_block_each() {
        let n = 1000u64;
        let skew = Skew::new(&dist("zipf:1.2"), n, 4096, 7).unwrap();
        let Skew::Zipf { scatter, .. } = &skew else {
            panic!()
        };
        let mut blocks: Vec<u64> = (0..n).map(|r| scatter.at(r)).collect();
        // The hottest ten are not the first ten blocks.
        assert_ne!(blocks[..10], (0..10).collect::<Vec<_>>()[..]);
        blocks.sort_unstable();
        assert_eq!(blocks, (0..n).collect::<Vec<_>>());
    }

    #[test]
    fn pareto_gives_a_share_1_minus_h_to_a_share_h_of_the_blocks() {
        let n = 10_000u64;
        let skew = Skew::new(&dist("pareto:0.2"), n, 4096, 7).unwrap();
        // rank < h·n  ⇔  u^p < h  ⇔  u < h^(1/p) = 1 − h (p = ln h / ln(1−h)).
        let seen = hottest_share(&skew, n / 5, 400_000, 9);
        assert!((seen - 0.8).abs() < 0.005, "{seen}");
    }

    #[test]
    fn normal_keeps_68_percent_within_one_sigma_of_the_middle() {
        let n = 100_000u64;
        let skew = Skew::new(&dist("normal:10"), n, 4096, 7).unwrap();
        let mut rng = Rng::new(5);
        let draws = 200_000;
        let within = (0..draws)
            .filter(|_| (skew.next(&mut rng) as f64 - 50_000.0).abs() < 10_000.0)
            .count();
        let share = within as f64 / draws as f64;
        assert!((share - 0.6827).abs() < 0.01, "{share}");
    }

    #[test]
    fn zones_get_their_shares_and_fill_a_blank_rest() {
        let d = dist("zoned:50/5:30/15:20/");
        let Distribution::Zoned { zones } = &d else {
            panic!("{d:?}")
        };
        assert_eq!(zones[2].extent, 80.0);
        let n = 1000u64;
        let skew = Skew::new(&d, n, 4096, 1).unwrap();
        let mut rng = Rng::new(2);
        let mut per = [0u32; 3];
        let draws = 200_000;
        for _ in 0..draws {
            let b = skew.next(&mut rng);
            per[if b < 50 {
                0
            } else if b < 200 {
                1
            } else {
                2
            }] += 1;
        }
        for (got, want) in per.iter().zip([50.0, 30.0, 20.0]) {
            let pct = *got as f64 / draws as f64 * 100.0;
            assert!((pct - want).abs() < 0.5, "{per:?}");
        }
        // Absolute zones: 60 % in the first 1 MiB of 4 KiB blocks (256 blocks).
        let skew = Skew::new(&dist("zoned_abs:60/1m:40/3m"), 1024, 4096, 1).unwrap();
        let hot = (0..draws).filter(|_| skew.next(&mut rng) < 256).count();
        assert!((hot as f64 / draws as f64 - 0.6).abs() < 0.005);
    }

    #[test]
    fn same_seed_same_blocks() {
        let d = dist("zipf:1.1");
        let draw = |seed| {
            let skew = Skew::new(&d, 1 << 20, 4096, seed).unwrap();
            let mut rng = Rng::new(seed);
            (0..100).map(|_| skew.next(&mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }

    #[test]
    fn bad_distributions_say_what_to_write() {
        for (text, hint) in [
            ("zipf", "zipf needs"),
            ("zipf:0", "above 0"),
            ("pareto:1.5", "between 0 and 1"),
            ("normal:0", "above 0"),
            ("zoned:60/10:30/20", "not 100"),
            ("zoned:60/70:40/40", "more than all"),
            ("zoned:60/10,40/10", "separate zones"),
            ("zipf:1.2:0.3", "second value"),
            ("lognormal:1", "unknown distribution"),
        ] {
            let e = text.parse::<Distribution>().unwrap_err();
            assert!(e.contains(hint), "{text}: {e}");
        }
        assert_eq!(dist("random"), Distribution::Uniform);
        assert_eq!(dist("gauss:5").to_string(), "normal:5");
    }
}
