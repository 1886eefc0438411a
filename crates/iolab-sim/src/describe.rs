//! What a model says about itself: its path, its parameters for results, and `explain`'s
//! short tests of what limits it.

use crate::model::Vol;
use crate::{calib, figures, open, SimError, SimSetup};
use serde_json::json;
use std::path::Path;

impl SimSetup {
    /// The path from the drive to the CPU, one line per hop, device first.
    pub fn path(&self) -> Vec<String> {
        let mut seen = std::collections::BTreeSet::new();
        let mut out = Vec::new();
        for l in &self.world.leaves {
            let key = l.describe.join(" → ");
            if seen.insert(key.clone()) {
                out.push(key);
            }
        }
        if let Vol::Tier(t) = &self.world.vol {
            if let Some(ram) = &t.ram {
                out.push(format!(
                    "RAM layer in front: {:.2} GB of host memory, {:.1} GB/s copies, written through",
                    ram.bytes() as f64 / 1e9,
                    ram.copy.bytes_per_s() / 1e9
                ));
            }
        }
        out
    }

    /// The model's parameters and what it did, for results (`TargetInfo.model`).
    pub fn describe(&self) -> serde_json::Value {
        let drive = self.catalog.drives.get(&self.drive);
        let plat = self.catalog.platforms.get(&self.platform);
        let port = plat.and_then(|(_, p)| p.ports.get(&self.port));
        // A card's or a tier's member drives are entries of their own, which a user catalog
        // may override: their parameters go with the result too.
        let members: std::collections::BTreeSet<&str> = drive
            .map(|(_, d)| {
                let card = d.card.as_ref().map(|c| c.member.as_str());
                let tier = d
                    .tiered
                    .as_ref()
                    .map(|t| [t.fast.as_str(), t.slow.as_str()]);
                card.into_iter().chain(tier.into_iter().flatten()).collect()
            })
            .unwrap_or_default();
        let members: Vec<_> = members
            .into_iter()
            .filter_map(|m| self.catalog.drives.get(m))
            .map(|(f, d)| json!({"file": f, "entry": d}))
            .collect();
        json!({
            "spec": self.spec,
            "modelled": true,
            "model": "iolab-sim resource-reservation model (virtual time)",
            "drive": drive.map(|(f, d)| json!({"file": f, "entry": d})),
            "members": members,
            // The whole entry, as for the drive: its drivers, links and HBAs set the path.
            "platform": plat.map(|(f, p)| json!({"file": f, "name": p.name, "title": p.title, "source": p.source, "entry": p})),
            "port": port,
            "driver": self.driver,
            "driver_latency_ns": self.world.driver_ns,
            "max_outstanding": self.world.max_outstanding,
            "path": self.path(),
            "state": self.state,
            "idle_power_w": self.idle_w(),
            "tests": self.tests,
        })
    }
}

/// The path of `spec` and, for a standard set of short tests (each on a freshly filled model,
/// measured after a ramp), the resource that limits each.
pub fn explain(spec: &str, catalog_dir: Option<&Path>) -> Result<String, SimError> {
    use std::fmt::Write;
    let sim = open(spec, catalog_dir)?;
    let mut s = String::new();
    let _ = writeln!(s, "{}", sim.spec());
    for p in sim.path() {
        let _ = writeln!(s, "  path: {p}");
    }
    let card_limits = sim
        .catalog
        .drives
        .get(&sim.drive)
        .and_then(|(_, d)| d.card.as_ref())
        .and_then(|c| c.queue_depth)
        .is_some_and(|q| q == sim.world.max_outstanding);
    let _ = writeln!(
        s,
        "  driver: {} ({:.1} µs per I/O), host queue limit {}{}",
        sim.driver,
        sim.world.driver_ns as f64 / 1e3,
        sim.world.max_outstanding,
        if card_limits {
            " (the card's RAID layer keeps no more in flight)"
        } else {
            ""
        }
    );
    for line in figures::validation_summary(&sim.drive, &sim.platform) {
        let _ = writeln!(s, "  {line}");
    }
    let span = (sim.size_bytes() / 4).min(16 << 30);
    // Said up front: a disk's or a tier's figures depend on the span (seek distance, what
    // fits the fast tier), so `run` over the whole drive gives others.
    let _ = writeln!(
        s,
        "  tests: each over the first {} (a quarter of the drive, at most 16 GiB), on a \
         freshly filled model, measured for 0.3 s after a 1 s ramp",
        iolab_core::size::binary_size(span)
    );
    let tests = [
        ("4K random read QD1", "randread", "4k", 1),
        ("4K random read QD32", "randread", "4k", 32),
        ("4K random write QD32", "randwrite", "4k", 32),
        ("128K sequential read QD32", "read", "128k", 32),
        ("128K sequential write QD32", "write", "128k", 32),
    ];
    let _ = writeln!(
        s,
        "  {:<28} {:>12} {:>10} {:>8}  bottleneck",
        "test", "MB/s", "IOPS", "W"
    );
    for (name, access, bs, qd) in tests {
        // Every test starts from the same filled drive: what one test leaves behind (random
        // writes a hard disk's cache still destages, a write buffer to drain) is not the
        // next test's bottleneck.
        let mut sim = open(spec, catalog_dir)?;
        sim.precondition_fill();
        let mut job = calib::job(name, access, bs, qd, 1, span, 0.3);
        // Measured past the first second: a hard disk's 64 MB write cache, or a write buffer,
        // would otherwise pass as the drive's speed.
        job.ramp_s = 1.0;
        match sim.run_job(&job, None) {
            Ok(r) => {
                let t = sim.tests.last().expect("just ran").clone();
                let (mb, iops) = (
                    r.result.read.bw_mb_per_s + r.result.write.bw_mb_per_s,
                    r.result.read.iops + r.result.write.iops,
                );
                let _ = writeln!(
                    s,
                    "  {name:<28} {mb:>12.1} {iops:>10.0} {:>8.1}  {} ({:.0} %)",
                    t.avg_power_w,
                    t.bottleneck,
                    t.bottleneck_utilisation * 100.0
                );
            }
            Err(e) => {
                let _ = writeln!(s, "  {name:<28} failed: {e}");
            }
        }
    }
    Ok(s)
}
