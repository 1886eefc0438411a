//! The SATA link of a libata disk: `ataN/linkN/ata_link/linkN/sata_spd` and the drive's
//! IDENTIFY data in `ata_device/devN.M/id`.

use crate::model::SataFacts;
use crate::sysfs::{entries, read};
use iolab_link::{Link, SataGen};
use std::path::{Path, PathBuf};

/// The `ataN` directory on a canonical device path.
fn port_dir(disk_dir: &Path) -> Option<PathBuf> {
    let mut cur = PathBuf::new();
    let mut found = None;
    for c in disk_dir.components() {
        cur.push(c);
        let s = c.as_os_str().to_string_lossy();
        if s.strip_prefix("ata")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|d| d.is_ascii_digit()))
        {
            found = Some(cur.clone());
        }
    }
    found
}

/// `6.0 Gbps` → SATA 6 Gb/s; `<unknown>` → None.
pub(crate) fn parse_spd(s: &str) -> Option<Link> {
    let v: f64 = s.split_whitespace().next()?.parse().ok()?;
    SataGen::from_gbps(v).map(Link::sata)
}

/// IDENTIFY DEVICE words from the `id` attribute (hex words separated by white space).
pub(crate) fn parse_identify(text: &str) -> Vec<u16> {
    text.split_whitespace()
        .map_while(|w| u16::from_str_radix(w, 16).ok())
        .collect()
}

/// Applies the IDENTIFY words we use to `facts`. A word of 0 or 0xFFFF means "not reported".
pub(crate) fn apply_identify(words: &[u16], facts: &mut SataFacts) {
    let w = |i: usize| words.get(i).copied().filter(|v| *v != 0 && *v != 0xffff);
    if let Some(w76) = w(76) {
        facts.device_supports = [(1, SataGen::Gen1), (2, SataGen::Gen2), (3, SataGen::Gen3)]
            .into_iter()
            .filter(|(bit, _)| w76 & (1 << bit) != 0)
            .map(|(_, g)| Link::sata(g))
            .collect();
        if w76 & (1 << 8) != 0 {
            facts.ncq_depth = w(75).map(|q| u32::from(q & 0x1f) + 1);
        }
    }
    facts.trim_supported = words.get(169).map(|v| v & 1 != 0);
    if let Some(w69) = words.get(69) {
        facts.deterministic_read_after_trim = Some(w69 & (1 << 14) != 0);
        facts.zeroes_after_trim = Some(w69 & (1 << 5) != 0);
    }
}

/// SATA facts of the disk at `disk_dir`, if it hangs off a libata port.
pub(crate) fn describe(disk_dir: &Path) -> Option<SataFacts> {
    let port = port_dir(disk_dir)?;
    let mut facts = SataFacts {
        port: crate::block::file_name(&port),
        ..Default::default()
    };
    // linkN (no port multiplier) or linkN.M; the ata_link class directory holds the attributes.
    let link = entries(&port)
        .into_iter()
        .filter(|n| n.starts_with("link"))
        .map(|n| port.join(&n).join("ata_link").join(&n))
        .find(|d| d.join("sata_spd").exists());
    if let Some(link) = &link {
        facts.current = read(link.join("sata_spd"));
        facts.current_link = facts.current.as_deref().and_then(parse_spd);
        facts.host_limit = read(link.join("hw_sata_spd_limit"));
        let link_dir = link.parent().and_then(Path::parent).map(Path::to_path_buf);
        let id = link_dir.into_iter().flat_map(|ld| {
            entries(&ld)
                .into_iter()
                .filter(|n| n.starts_with("dev"))
                .map(move |n| ld.join(&n).join("ata_device").join(&n).join("id"))
        });
        if let Some(words) = id.filter_map(read).map(|t| parse_identify(&t)).next() {
            apply_identify(&words, &mut facts);
        }
    }
    Some(facts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spd() {
        assert_eq!(parse_spd("6.0 Gbps"), Some(Link::sata(SataGen::Gen3)));
        assert_eq!(parse_spd("1.5 Gbps"), Some(Link::sata(SataGen::Gen1)));
        assert_eq!(parse_spd("<unknown>"), None);
    }

    #[test]
    fn identify_words() {
        let mut words = vec![0u16; 256];
        words[76] = 0b1_0000_1110; // Gen1-3, NCQ
        words[75] = 31;
        words[169] = 1;
        words[69] = 1 << 14;
        let text: String = words.iter().map(|w| format!("{w:04x} ")).collect();
        let mut f = SataFacts::default();
        apply_identify(&parse_identify(&text), &mut f);
        assert_eq!(f.device_supports.len(), 3);
        assert_eq!(f.ncq_depth, Some(32));
        assert_eq!(f.trim_supported, Some(true));
        assert_eq!(f.deterministic_read_after_trim, Some(true));
        assert_eq!(f.zeroes_after_trim, Some(false));
    }
}
