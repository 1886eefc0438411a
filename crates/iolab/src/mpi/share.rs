//! Each rank's share of the target: its own target from a pattern, its own file in a
//! directory, or its own zone of one shared file or device.

use anyhow::{bail, Result};
use iolab_core::job::Job;
use std::path::{Path, PathBuf};

/// The placeholders a target may hold, each replaced by the rank's value.
pub const PLACEHOLDERS: [&str; 3] = ["{rank}", "{host}", "{local_rank}"];

/// How the ranks share the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Share {
    /// Each rank its own target: a pattern, or a model (each rank models its own drive).
    OwnTarget,
    /// Each rank its own file in the directory given.
    OwnFileInDir,
    /// One file or device, each rank in its own zone of the jobs' span.
    Zones,
    /// Each rank its own directories in the directory given (a file-set suite).
    OwnDirectory,
}

impl Share {
    /// As the result says it.
    pub fn name(self) -> &'static str {
        match self {
            Share::OwnTarget => "own target",
            Share::OwnFileInDir => "own file in a directory",
            Share::Zones => "zones of one target",
            Share::OwnDirectory => "own directory in a directory",
        }
    }
}

/// Who a rank is, for its target.
pub struct RankPlace<'a> {
    pub rank: u32,
    pub host: &'a str,
    pub local_rank: u32,
}

/// The target rank `place` measures, and how the ranks share `given`.
pub fn rank_target(given: &Path, place: &RankPlace) -> Result<(PathBuf, Share)> {
    let text = given.to_string_lossy();
    if let Some(open) = text.find('{') {
        let rest = &text[open..];
        let known = PLACEHOLDERS.iter().any(|p| rest.starts_with(p));
        if !known {
            let end = rest.find('}').map_or(rest.len(), |e| e + 1);
            bail!(
                "target {text}: unknown placeholder {}; a target under mpirun may hold {} \
                 (each rank's own target)",
                &rest[..end],
                PLACEHOLDERS.join(", ")
            );
        }
        let own = text
            .replace("{rank}", &place.rank.to_string())
            .replace("{host}", place.host)
            .replace("{local_rank}", &place.local_rank.to_string());
        if let Some(open) = own.find('{') {
            let rest = &own[open..];
            let end = rest.find('}').map_or(rest.len(), |e| e + 1);
            bail!(
                "target {text}: unknown placeholder {}; a target under mpirun may hold {}",
                &rest[..end],
                PLACEHOLDERS.join(", ")
            );
        }
        return Ok((PathBuf::from(own), Share::OwnTarget));
    }
    if crate::subject::is_model(given) {
        return Ok((given.to_path_buf(), Share::OwnTarget));
    }
    if given.is_dir() {
        let file = given.join(format!("iolab-rank{}.dat", place.rank));
        return Ok((file, Share::OwnFileInDir));
    }
    Ok((given.to_path_buf(), Share::Zones))
}

/// Cuts rank `rank`'s zone out of `job`'s resolved span: the span split into `ranks` equal
/// zones, each a whole number of `align` bytes (the largest block and the target's sector).
pub fn cut_zone(job: &mut Job, rank: u32, ranks: u32, align: u64) -> Result<()> {
    let span = job.span();
    let align = align.max(1);
    let zone = span / u64::from(ranks) / align * align;
    if zone == 0 {
        bail!(
            "job '{}': its span of {span} bytes cannot be split into {ranks} zones of whole \
             {align}-byte blocks, one per rank; give a larger size, fewer ranks, or each rank its \
             own target (a target with {{rank}})",
            job.name
        );
    }
    job.offset_bytes += u64::from(rank) * zone;
    job.span_bytes = Some(zone);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolab_core::job::JobSpec;

    fn place(rank: u32) -> RankPlace<'static> {
        RankPlace {
            rank,
            host: "node7",
            local_rank: rank % 2,
        }
    }

    #[test]
    fn patterns_give_each_rank_its_own_target() {
        let (t, share) =
            rank_target(Path::new("/mnt/{host}/f.{rank}.{local_rank}"), &place(3)).unwrap();
        assert_eq!(t, Path::new("/mnt/node7/f.3.1"));
        assert_eq!(share, Share::OwnTarget);
        let e = rank_target(Path::new("/mnt/f.{rnak}"), &place(0)).unwrap_err();
        assert!(format!("{e}").contains("unknown placeholder {rnak}"), "{e}");
        let e = rank_target(Path::new("/mnt/f.{rank}.{pid}"), &place(0)).unwrap_err();
        assert!(format!("{e}").contains("{pid}"), "{e}");
        let (t, share) = rank_target(Path::new("sim:ssd750-1200@z97"), &place(1)).unwrap();
        assert_eq!(
            (t.to_str().unwrap(), share),
            ("sim:ssd750-1200@z97", Share::OwnTarget)
        );
    }

    #[test]
    fn a_directory_gives_each_rank_a_file_and_a_file_gives_zones() {
        let dir = tempfile::tempdir().unwrap();
        let (t, share) = rank_target(dir.path(), &place(2)).unwrap();
        assert_eq!(
            (t, share),
            (dir.path().join("iolab-rank2.dat"), Share::OwnFileInDir)
        );
        let f = dir.path().join("shared.bin");
        assert_eq!(rank_target(&f, &place(2)).unwrap().1, Share::Zones);
    }

    #[test]
    fn zones_tile_the_span_in_whole_blocks() {
        let mut spec = JobSpec {
            offset: Some(iolab_core::size::ByteSize(1 << 20)),
            size: Some(iolab_core::size::ByteSize(10 << 20)),
            ..JobSpec::default()
        };
        spec.name = Some("z".into());
        let job = spec.validate().unwrap();
        let zones: Vec<(u64, u64)> = (0..3)
            .map(|r| {
                let mut j = job.clone();
                cut_zone(&mut j, r, 3, 4096).unwrap();
                (j.offset_bytes, j.span())
            })
            .collect();
        let zone = (10 << 20) / 3 / 4096 * 4096;
        assert_eq!(zones[0], (1 << 20, zone));
        assert_eq!(zones[2], ((1 << 20) + 2 * zone, zone));
        let mut tiny = job.clone();
        tiny.span_bytes = Some(8192);
        let e = cut_zone(&mut tiny, 0, 4, 4096).unwrap_err();
        assert!(format!("{e}").contains("4 zones"), "{e}");
    }
}
