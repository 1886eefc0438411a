//! The kernel's per-device I/O counters.

/// The kernel's per-device counters from `/sys/block/NAME/stat` (fields 1, 3, 5, 7: read I/Os,
/// read sectors, write I/Os, write sectors; sectors are 512 B whatever the device's block size).
///
/// Use [`BlockStat::since`] around an operation to prove what reached the device (or that
/// nothing did).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BlockStat {
    /// Read requests completed.
    pub read_ios: u64,
    /// 512-byte sectors read.
    pub read_sectors: u64,
    /// Write requests completed.
    pub write_ios: u64,
    /// 512-byte sectors written.
    pub write_sectors: u64,
}

impl BlockStat {
    /// Reads the counters of `dev_name` (`loop3`, `zram0`, `sda1`; a `/dev/` prefix is
    /// accepted). Partitions work too (through `/sys/class/block`).
    pub fn read(dev_name: &str) -> std::io::Result<BlockStat> {
        let name = dev_name.trim_start_matches("/dev/");
        if name.is_empty() || name.contains('/') {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{dev_name:?} is not a block device name"),
            ));
        }
        let path = format!("/sys/class/block/{name}/stat");
        let text = std::fs::read_to_string(&path)?;
        BlockStat::parse(&text).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{path}: unexpected contents {text:?}"),
            )
        })
    }

    /// Parses the contents of a `stat` file (at least 7 whitespace-separated numbers).
    pub fn parse(text: &str) -> Option<BlockStat> {
        let f: Vec<u64> = text
            .split_whitespace()
            .take(7)
            .map(|t| t.parse().ok())
            .collect::<Option<_>>()?;
        (f.len() == 7).then(|| BlockStat {
            read_ios: f[0],
            read_sectors: f[2],
            write_ios: f[4],
            write_sectors: f[6],
        })
    }

    /// The counts between `earlier` and `self` (saturating at 0, e.g. across a device reset).
    pub fn since(&self, earlier: &BlockStat) -> BlockStat {
        BlockStat {
            read_ios: self.read_ios.saturating_sub(earlier.read_ios),
            read_sectors: self.read_sectors.saturating_sub(earlier.read_sectors),
            write_ios: self.write_ios.saturating_sub(earlier.write_ios),
            write_sectors: self.write_sectors.saturating_sub(earlier.write_sectors),
        }
    }

    /// Bytes read (`read_sectors` × 512).
    pub fn read_bytes(&self) -> u64 {
        self.read_sectors * 512
    }

    /// Bytes written (`write_sectors` × 512).
    pub fn write_bytes(&self) -> u64 {
        self.write_sectors * 512
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A real line of /sys/block/vda/stat (kernel 6.x, 17 fields).
    const SAMPLE: &str = "   20165     5233  1630794    15066    43212    31016  2712552   \
        105326        0    52208   130498      911        0 30418968      105        0        0\n";

    #[test]
    fn parses_fields_1_3_5_7() {
        let s = BlockStat::parse(SAMPLE).unwrap();
        assert_eq!(
            s,
            BlockStat {
                read_ios: 20165,
                read_sectors: 1630794,
                write_ios: 43212,
                write_sectors: 2712552,
            }
        );
        assert_eq!(s.read_bytes(), 1630794 * 512);
        // Old kernels print 11 fields; 7 suffice.
        assert_eq!(BlockStat::parse("1 2 3 4 5 6 7").unwrap().write_sectors, 7);
    }

    #[test]
    fn rejects_garbage() {
        assert_eq!(BlockStat::parse(""), None);
        assert_eq!(BlockStat::parse("1 2 3"), None);
        assert_eq!(BlockStat::parse("1 2 x 4 5 6 7"), None);
    }

    #[test]
    fn since_subtracts_and_saturates() {
        let a = BlockStat {
            read_ios: 10,
            read_sectors: 80,
            write_ios: 5,
            write_sectors: 40,
        };
        let b = BlockStat {
            read_ios: 12,
            read_sectors: 96,
            write_ios: 5,
            write_sectors: 40,
        };
        let d = b.since(&a);
        assert_eq!(
            (d.read_ios, d.read_sectors, d.write_ios, d.write_sectors),
            (2, 16, 0, 0)
        );
        assert_eq!(a.since(&b), BlockStat::default());
    }

    #[test]
    fn bad_names_are_errors() {
        assert!(BlockStat::read("").is_err());
        assert!(BlockStat::read("../../etc").is_err());
        assert!(BlockStat::read("no-such-device-iolab").is_err());
    }
}
