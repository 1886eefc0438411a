//! The readable view of a probe: one line for result headers, a block for `iolab probe`.

use crate::model::{Ceiling, Disk, PciDevice, Probe, SataFacts, Severity};
use iolab_link::Rate;
use std::fmt::Write;

pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

fn opt<T: ToString>(v: &Option<T>) -> String {
    v.as_ref().map_or_else(|| "?".to_string(), T::to_string)
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    }
}

fn pci_ids(d: &PciDevice) -> String {
    format!(
        "[{:04x}:{:04x}] class {:06x}",
        d.vendor_id.unwrap_or(0),
        d.device_id.unwrap_or(0),
        d.class.unwrap_or(0)
    )
}

fn disk_title(d: &Disk) -> String {
    let mut s = format!("{} {}", d.name, d.kind.label());
    if let Some(m) = &d.model {
        let _ = write!(s, " {m}");
    }
    if let Some(c) = d.capacity_bytes {
        let _ = write!(s, ", {}", bytes(c));
    }
    s
}

pub(crate) fn summary(p: &Probe) -> String {
    let mut s = match &p.disk {
        Some(d) => disk_title(d),
        None => "no block device".to_string(),
    };
    if let Some(m) = &p.filesystem {
        let _ = write!(s, ", {} on {}", m.fs_type, m.mount_point.display());
    }
    match &p.ceiling {
        Some(c) => {
            let b = &c.links[c.bottleneck];
            let _ = write!(
                s,
                "; ceiling {}{} ({})",
                Rate::from_bytes_per_s(c.bytes_per_s),
                if c.partial { " or less" } else { "" },
                b.link
            );
        }
        None => s.push_str("; ceiling unknown"),
    }
    if p.chipset.as_ref().is_some_and(|v| v.behind_chipset) {
        s.push_str("; behind chipset");
    }
    let warns = p.warnings().count();
    if warns > 0 {
        let _ = write!(s, "; {warns} warning{}", if warns == 1 { "" } else { "s" });
    }
    s
}

pub(crate) fn render(p: &Probe) -> String {
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(
        w,
        "target      {} ({:?})",
        p.target.display(),
        p.target_kind
    );
    if let Some(m) = &p.filesystem {
        let _ = writeln!(
            w,
            "filesystem  {} on {} (source {}, options {},{})",
            m.fs_type,
            m.mount_point.display(),
            m.source,
            m.mount_options,
            m.super_options
        );
    }
    if let Some(pt) = &p.partition {
        let _ = writeln!(
            w,
            "partition   {} {} #{} start sector {} ({}), size {}",
            pt.name,
            pt.dev,
            opt(&pt.number),
            opt(&pt.start_sectors),
            pt.start_sectors.map_or("?".into(), |s| bytes(s * 512)),
            pt.size_bytes.map_or("?".into(), bytes)
        );
    }
    if let Some(d) = &p.disk {
        render_disk(w, d);
    }
    if let Some(s) = &p.sata {
        render_sata(w, s);
    }
    if !p.pci_path.is_empty() {
        render_pci_path(w, &p.pci_path);
    }
    if let Some(v) = &p.chipset {
        let _ = writeln!(
            w,
            "chipset     {} ({} confidence): {}",
            if v.behind_chipset {
                "behind the chipset uplink"
            } else {
                "on CPU lanes"
            },
            v.confidence.label(),
            v.reason
        );
    }
    render_ceiling(w, p.ceiling.as_ref());
    if !p.findings.is_empty() {
        let _ = writeln!(w, "findings");
        for f in &p.findings {
            let mark = if f.severity == Severity::Warn {
                "!"
            } else {
                "-"
            };
            let _ = writeln!(w, "  {mark} {}", f.message);
        }
    }
    o
}

/// The SATA link line: negotiated and possible speeds, NCQ depth and TRIM behaviour.
fn render_sata(w: &mut String, s: &SataFacts) {
    let _ = writeln!(
        w,
        "sata        {} link {} (host limit {}), drive supports [{}]; NCQ depth {}; TRIM {}, \
         deterministic read after TRIM {}, zeroes after TRIM {}",
        s.port,
        opt(&s.current),
        opt(&s.host_limit),
        s.device_supports
            .iter()
            .map(|l| l.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        opt(&s.ncq_depth),
        yes_no(s.trim_supported),
        yes_no(s.deterministic_read_after_trim),
        yes_no(s.zeroes_after_trim)
    );
}

/// The PCI devices from the controller to the root port, each with its link.
fn render_pci_path(w: &mut String, path: &[PciDevice]) {
    let _ = writeln!(w, "pci path    (controller first, root port last)");
    for d in path {
        let link = match (d.current_speed_gts, d.current_width) {
            (Some(s), Some(wd)) => format!(
                "link {s} GT/s x{wd}, max {} GT/s x{}",
                opt(&d.max_speed_gts),
                opt(&d.max_width)
            ),
            _ => "no PCIe link attributes (legacy/virtual PCI or integrated)".to_string(),
        };
        let _ = writeln!(
            w,
            "  {} {} driver {}{}{}; {link}",
            d.address,
            pci_ids(d),
            opt(&d.driver),
            d.port_type.map_or(String::new(), |t| format!(" {t:?}")),
            d.max_payload_bytes
                .map_or(String::new(), |m| format!(" MPS {m} B")),
        );
    }
}

/// Each link's rates, drive first, with the bottleneck marked, and the ceiling.
fn render_ceiling(w: &mut String, ceiling: Option<&Ceiling>) {
    match ceiling {
        Some(c) => {
            let _ = writeln!(
                w,
                "links       (drive first)   line rate → after encoding → effective"
            );
            for (i, l) in c.links.iter().enumerate() {
                let _ = writeln!(
                    w,
                    "  {}: {}{}  {} → {} → {} ({} B {}{}){}",
                    l.label,
                    l.link,
                    l.capable
                        .map_or(String::new(), |c| format!(" [capable: {c}]")),
                    Rate::from_bytes_per_s(l.line_rate.bytes_per_s()),
                    l.after_encoding,
                    l.effective,
                    l.payload_bytes,
                    if matches!(l.link, iolab_link::Link::Sata { .. }) {
                        "FIS"
                    } else {
                        "TLP payload"
                    },
                    if l.payload_assumed { ", assumed" } else { "" },
                    if i == c.bottleneck {
                        "  ← bottleneck"
                    } else {
                        ""
                    }
                );
            }
            let _ = writeln!(
                w,
                "ceiling     {}{}",
                Rate::from_bytes_per_s(c.bytes_per_s),
                if c.partial {
                    " or less (a link is unknown)"
                } else {
                    ""
                }
            );
        }
        None => {
            let _ = writeln!(w, "ceiling     unknown (no link on the path is visible)");
        }
    }
}

fn render_disk(w: &mut String, d: &Disk) {
    let _ = writeln!(w, "disk        {} {}", disk_title(d), d.dev);
    let _ = writeln!(
        w,
        "  identity  vendor {}, model {}, firmware {}",
        opt(&d.vendor),
        opt(&d.model),
        opt(&d.firmware)
    );
    let _ = writeln!(
        w,
        "  sectors   logical {} B, physical {} B; rotational {}; removable {}; read-only {}",
        opt(&d.logical_block_bytes),
        opt(&d.physical_block_bytes),
        yes_no(d.rotational),
        yes_no(d.removable),
        yes_no(d.read_only)
    );
    let q = &d.queue;
    let _ = writeln!(
        w,
        "  queue     scheduler {} [{}]; nr_requests {}; hw queues {}; max request {} KiB (hw {} \
         KiB); segments {}; optimal I/O {} B",
        opt(&d.scheduler),
        d.schedulers.join(" "),
        opt(&q.nr_requests),
        opt(&q.hw_queues),
        opt(&q.max_sectors_kb),
        opt(&q.max_hw_sectors_kb),
        opt(&q.max_segments),
        opt(&q.optimal_io_bytes)
    );
    let dc = &d.discard;
    let _ = writeln!(
        w,
        "  discard   {}; granularity {}; max {} (hw {})",
        yes_no(dc.supported),
        dc.granularity_bytes.map_or("?".into(), bytes),
        dc.max_bytes.map_or("?".into(), bytes),
        dc.max_hw_bytes.map_or("?".into(), bytes)
    );
    let _ = writeln!(
        w,
        "  cache     volatile write cache {}; FUA {}; zoned {}",
        match d.volatile_write_cache {
            Some(true) => "yes (write back)",
            Some(false) => "no (write through)",
            None => "?",
        },
        yes_no(d.fua),
        opt(&d.zoned)
    );
    if let Some(n) = &d.nvme {
        let _ = writeln!(
            w,
            "  nvme      controller {} transport {} state {}; queues {}; sqsize {}; nsid {}",
            n.controller,
            opt(&n.transport),
            opt(&n.state),
            opt(&n.queue_count),
            opt(&n.sqsize),
            opt(&n.nsid)
        );
    }
    if let Some(v) = &d.virt {
        let mut parts = Vec::new();
        if let Some(b) = &v.backing_file {
            parts.push(format!("backing file {b}"));
        }
        if let Some(o) = v.offset_bytes {
            parts.push(format!("offset {o}"));
        }
        if let Some(dio) = v.direct_io {
            parts.push(format!("direct I/O {}", yes_no(Some(dio))));
        }
        if let Some(n) = &v.name {
            parts.push(format!("name {n}"));
        }
        if let Some(u) = &v.uuid {
            parts.push(format!("uuid {u}"));
        }
        if let Some(c) = &v.compression {
            parts.push(format!("compression {c}"));
        }
        if !v.lower_devices.is_empty() {
            parts.push(format!("over {}", v.lower_devices.join(", ")));
        }
        let _ = writeln!(w, "  virtual   {}", parts.join("; "));
    }
}
