//! From FIEMAP extents to byte ranges on the device, rejecting extents whose physical address
//! cannot be trusted (kernel `Documentation/filesystems/fiemap.rst`).

use crate::sys::Extent;

/// `FIEMAP_EXTENT_*` flags that make `fe_physical` unusable for reading the raw device, with
/// the reason each one gives.
const UNRELIABLE: [(u32, &str); 9] = [
    (0x0002, "UNKNOWN (location not known yet)"),
    (0x0004, "DELALLOC (not allocated yet)"),
    (0x0008, "ENCODED (compressed or otherwise encoded data)"),
    (0x0080, "DATA_ENCRYPTED (encrypted data)"),
    (0x0100, "NOT_ALIGNED (offset not block aligned)"),
    (0x0200, "DATA_INLINE (stored in metadata)"),
    (0x0400, "DATA_TAIL (packed with other files)"),
    (0x0800, "UNWRITTEN (allocated but not written)"),
    (
        0x2000,
        "SHARED (shared with another file, would not be freed)",
    ),
];

/// One piece of the test block on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DevRange {
    /// Offset of this piece within the test block.
    pub block_offset: u64,
    /// Offset on the filesystem's block device.
    pub fs_dev_offset: u64,
    /// Length in bytes.
    pub len: u64,
}

/// Maps `[start, start + len)` of the file through `extents` to device ranges. Fails with a
/// reason when a byte is not covered or an extent is unreliable.
pub(crate) fn map_range(extents: &[Extent], start: u64, len: u64) -> Result<Vec<DevRange>, String> {
    let mut out = Vec::new();
    let mut pos = start;
    let end = start + len;
    while pos < end {
        let Some(e) = extents
            .iter()
            .find(|e| e.logical <= pos && pos < e.logical.saturating_add(e.length))
        else {
            return Err(format!("file offset {pos} is not in any extent (a hole?)"));
        };
        if let Some((_, why)) = UNRELIABLE.iter().find(|(f, _)| e.flags & f != 0) {
            return Err(format!(
                "the extent at file offset {} is flagged {why}",
                e.logical
            ));
        }
        let piece_end = end.min(e.logical + e.length);
        out.push(DevRange {
            block_offset: pos - start,
            fs_dev_offset: e.physical + (pos - e.logical),
            len: piece_end - pos,
        });
        pos = piece_end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(logical: u64, physical: u64, length: u64, flags: u32) -> Extent {
        Extent {
            logical,
            physical,
            length,
            flags,
        }
    }

    #[test]
    fn maps_across_two_extents() {
        let e = [ext(0, 1 << 20, 40960, 0), ext(40960, 8 << 20, 40960, 1)];
        let r = map_range(&e, 32768, 16384).unwrap();
        assert_eq!(
            r,
            vec![
                DevRange {
                    block_offset: 0,
                    fs_dev_offset: (1 << 20) + 32768,
                    len: 8192
                },
                DevRange {
                    block_offset: 8192,
                    fs_dev_offset: 8 << 20,
                    len: 8192
                },
            ]
        );
    }

    #[test]
    fn rejects_unreliable_and_holes() {
        let e = [ext(0, 4096, 8192, 0x800)];
        assert!(map_range(&e, 0, 4096).unwrap_err().contains("UNWRITTEN"));
        let e = [ext(0, 4096, 4096, 0)];
        assert!(map_range(&e, 0, 8192)
            .unwrap_err()
            .contains("not in any extent"));
        let e = [ext(0, 4096, 8192, 0x8)];
        assert!(map_range(&e, 0, 4096).unwrap_err().contains("ENCODED"));
    }
}
