//! iolab's host-path prober and Linux trimcheck.
//!
//! [`probe`] follows a file, directory or block device down to the hardware — filesystem
//! (`/proc/self/mountinfo`), partition and disk (`/sys/dev/block/MAJ:MIN`), controller and every
//! PCI hop to the root port — and reports each link's trained and maximum speed, the ceiling they
//! imply (computed with [`iolab_link`], the same math as the hardware model) and mismatches.
//! It only reads sysfs and procfs: no device is opened, so it is cheap (well under 50 ms) and
//! safe to run next to every benchmark result. Missing facts are `None`, never errors.
//!
//! [`trimcheck()`] implements trimcheck's method (CyberShadow/trimcheck) on Linux: it writes a unique block,
//! finds it on the device with FIEMAP, deletes it, runs FITRIM and reads the raw device back.
//!
//! ```no_run
//! let p = iolab_probe::probe(std::path::Path::new("/tmp")).unwrap();
//! println!("{}", p.summary());
//! if let Some(c) = p.ceiling_bytes_per_s() {
//!     println!("path ceiling: {:.0} MB/s", c / 1e6);
//! }
//! ```

#![deny(missing_docs)]

mod block;
mod ceiling;
mod chipset;
mod error;
mod findings;
mod model;
mod pci;
mod resolve;
mod sata;
mod sys;
mod sysfs;
pub mod trim;
mod view;

pub use error::{ProbeError, TrimError};
pub use iolab_host::Mount;
pub use model::*;
pub use sysfs::SysRoot;
pub use trim::{trimcheck, TrimOptions, TrimReport, Verdict};

use std::path::Path;

/// Probes the path from `path` (a file, a directory, or a block device) to the CPU.
///
/// Fails only when the target cannot be examined at all (it does not exist and neither does any
/// parent, it is not storage, or the mount table is unreadable).
pub fn probe(path: &Path) -> Result<Probe, ProbeError> {
    probe_with(&SysRoot::default(), path)
}

/// [`probe`] against another sysfs/procfs root (for tests and for inspecting captured trees).
pub fn probe_with(root: &SysRoot, path: &Path) -> Result<Probe, ProbeError> {
    let resolved = resolve::resolve(root, path)?;
    let mut p = empty(path, resolved.kind);
    p.filesystem = resolved.mount;
    if let Some(dev) = &resolved.dev {
        fill_device(root, dev, &mut p);
    }
    p.findings = findings::collect(&p);
    Ok(p)
}

/// Probes a block device by its `MAJ:MIN` number, without a filesystem (for captured sysfs
/// trees; the target is recorded as `/dev/block/MAJ:MIN`).
pub fn probe_device(root: &SysRoot, dev: &str) -> Probe {
    let mut p = empty(&Path::new("/dev/block").join(dev), TargetKind::BlockDevice);
    fill_device(root, dev, &mut p);
    p.findings = findings::collect(&p);
    p
}

fn empty(path: &Path, kind: TargetKind) -> Probe {
    Probe {
        schema_version: PROBE_SCHEMA_VERSION,
        target: path.to_path_buf(),
        target_kind: kind,
        filesystem: None,
        partition: None,
        disk: None,
        controller: None,
        pci_path: Vec::new(),
        sata: None,
        chipset: None,
        ceiling: None,
        findings: Vec::new(),
    }
}

fn fill_device(root: &SysRoot, dev: &str, p: &mut Probe) {
    let Some(loc) = block::locate(root, dev) else {
        p.findings.push(Finding::new(
            Severity::Info,
            "no_sysfs_entry",
            format!("block device {dev} is not in {}", root.sys.display()),
        ));
        return;
    };
    let (disk, hw_dir) = block::describe(&loc.disk_dir);
    p.partition = loc.partition;
    p.pci_path = pci::chain_dirs(&hw_dir)
        .iter()
        .map(|d| pci::describe(d))
        .collect();
    p.controller = p.pci_path.first().cloned();
    if disk.kind == DeviceKind::Sata {
        p.sata = sata::describe(&loc.disk_dir);
    }
    p.disk = Some(disk);
    p.chipset = chipset::judge(&p.pci_path);
    p.ceiling = ceiling::compute(p.sata.as_ref(), &p.pci_path, p.chipset.as_ref());
}

impl Probe {
    /// The path's ceiling in bytes per second (one direction, after encoding and protocol
    /// framing), or `None` when no link is known (virtual devices, VMs, missing sysfs).
    pub fn ceiling_bytes_per_s(&self) -> Option<f64> {
        self.ceiling.as_ref().map(|c| c.bytes_per_s)
    }

    /// Warnings only.
    pub fn warnings(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Warn)
    }

    /// One line for a result header, e.g.
    /// `nvme0n1: NVMe Samsung SSD 970 EVO 1TB, 1.0 TB, ext4 on /; ceiling 3.65 GB/s (PCIe 3.0 x4)`.
    pub fn summary(&self) -> String {
        view::summary(self)
    }

    /// A readable multi-line report.
    pub fn render_text(&self) -> String {
        view::render(self)
    }
}
