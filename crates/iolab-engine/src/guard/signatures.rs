//! On-disk signatures: partition tables, filesystems, RAID, volume managers, encryption and
//! swap, found by their magic bytes where libblkid's probes look for them.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

/// The MD RAID superblock magic, 0xa92b4efc little-endian.
pub(super) const MD_MAGIC: [u8; 4] = [0xfc, 0x4e, 0x2b, 0xa9];

/// bcache's superblock magic, at 4 KiB + 24 (libblkid bcache.c), which bcachefs wrote too before
/// it had its own (see [`old_bcachefs`]).
pub(super) const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];

/// bcachefs's own superblock magic, at 4 KiB + 24 like bcache's (libblkid bcache.c; bcachefs's
/// `BCHFS_MAGIC`).
pub(super) const BCACHEFS_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x66, 0xce, 0x90, 0xa9, 0xd9, 0x6a, 0x60, 0xcf, 0x80, 0x3d, 0xf7, 0xef,
];

/// Whether the superblock at 4 KiB is a bcachefs one with bcache's magic, as bcachefs wrote
/// before it had its own (libblkid's bcachefs probe takes both). Both superblocks record the
/// sector they were written at, 8: bcache's in the 8 bytes at 8, bcachefs's in those at 104,
/// where bcache keeps its flags (8 for a cache with random replacement) and bcachefs has a
/// checksum at 8 (libblkid bcache.c checks the one of each). Little-endian.
pub(super) fn old_bcachefs(probe: &Probe) -> bool {
    let sector_at = |at: u64| {
        let bytes = probe.get(4096 + at, 8)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    };
    probe.has(4096 + 24, &BCACHE_MAGIC) && sector_at(104) == Some(8) && sector_at(8) != Some(8)
}

/// On-disk signatures: (what, byte offset from the start, magic bytes). Offsets from libblkid's
/// probes and the formats' own headers; a format with copies at several fixed offsets has an
/// entry for each. Enough to recognise anything a user would miss; those that take more than a
/// magic at a fixed offset (swap, LVM, UDF, LUKS2's second header, NILFS2, HFS, BitLocker To
/// Go, bcachefs with bcache's magic, the GPT backup, MD RAID at the end) are in
/// [`signature_in`].
pub(super) const SIGNATURES: &[(&str, u64, &[u8])] = &[
    // BitLocker's boot sectors (libblkid bitlocker.c): a jump and the OEM name "-FVE-FS-", which
    // only BitLocker writes (Vista's jump is 0x52, Windows 7's and later's 0x58). They carry
    // 0x55AA as well, so these come before the MBR rule; To Go's is in [`signature_in`].
    ("BitLocker encrypted volume", 0, b"\xeb\x52\x90-FVE-FS-"),
    ("BitLocker encrypted volume", 0, b"\xeb\x58\x90-FVE-FS-"),
    ("GPT partition table", 512, b"EFI PART"),
    ("GPT partition table (4K sectors)", 4096, b"EFI PART"),
    ("ext2/3/4 filesystem", 1080, &[0x53, 0xEF]),
    ("XFS filesystem", 0, b"XFSB"),
    ("btrfs filesystem", 0x10040, b"_BHRfS_M"),
    ("F2FS filesystem", 1024, &[0x10, 0x20, 0xF5, 0xF2]),
    ("NTFS filesystem", 3, b"NTFS    "),
    ("exFAT filesystem", 3, b"EXFAT   "),
    ("ISO 9660 filesystem", 32769, b"CD001"),
    ("squashfs filesystem", 0, b"hsqs"),
    ("squashfs filesystem (big-endian)", 0, b"sqsh"),
    // cramfs: its magic 0x28cd3d45 either way round, at the start or after the 512 bytes of
    // boot code `mkfs.cramfs -p` pads with (libblkid cramfs.c; the kernel's cramfs_fs.h).
    ("cramfs filesystem", 0, b"\x45\x3d\xcd\x28"),
    ("cramfs filesystem", 0, b"\x28\xcd\x3d\x45"),
    ("cramfs filesystem", 512, b"\x45\x3d\xcd\x28"),
    ("cramfs filesystem", 512, b"\x28\xcd\x3d\x45"),
    ("SCO BFS filesystem", 0, b"\xce\xfa\xad\x1b"),
    ("romfs filesystem", 0, b"-rom1fs-"),
    ("EROFS filesystem", 1024, &[0xe2, 0xe1, 0xf5, 0xe0]),
    // HFS+ and HFSX: the volume header at 1 KiB, its signature and then its version, 4 for HFS+
    // and 5 for HFSX, big-endian (libblkid hfs.c; Apple's TN1150). HFS is in [`signature_in`].
    ("HFS+ filesystem", 1024, b"H+\x00\x04"),
    ("HFSX filesystem", 1024, b"HX\x00\x05"),
    // APFS: the container superblock in block 0, its magic after the 32-byte object header
    // (libblkid apfs.c).
    ("APFS container", 32, b"NXSB"),
    ("JFS filesystem", 32 * 1024, b"JFS1"),
    ("ReiserFS filesystem", 64 * 1024 + 0x34, b"ReIsEr2Fs"),
    ("ReiserFS filesystem", 64 * 1024 + 0x34, b"ReIsEr3Fs"),
    ("ReiserFS filesystem", 64 * 1024 + 0x34, b"ReIsErFs"),
    ("ReiserFS filesystem", 8 * 1024 + 0x34, b"ReIsErFs"),
    ("ReiserFS filesystem", 8 * 1024 + 20, b"ReIsErFs"),
    ("Reiser4 filesystem", 64 * 1024, b"ReIsEr4"),
    (
        "TuxOnIce hibernation image",
        0,
        &[0xed, 0xc3, 0x02, 0xe9, 0x98, 0x56, 0xe5, 0x0c],
    ),
    ("LUKS encrypted volume", 0, b"LUKS\xba\xbe"),
    ("MD RAID (v1.1) member", 0, &MD_MAGIC),
    ("MD RAID (v1.2) member", 4096, &MD_MAGIC),
    // bcachefs: its superblock at 4 KiB, the magic UUID at 24 of it (libblkid bcache.c). It
    // shares only its first four bytes with bcache's. A bcachefs formatted before it had this
    // magic carries bcache's, and is found in [`signature_in`].
    ("bcachefs filesystem", 4096 + 24, &BCACHEFS_MAGIC),
    (
        "bcache backing device",
        4096 + 24,
        &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca],
    ),
    // VDO (dm-vdo deduplicating volume): its geometry block at 0 opens with "dmvdo001"
    // (libblkid vdo.c).
    ("VDO volume", 0, b"dmvdo001"),
    // Stratis: two copies of its static header, in sectors 1 and 9, the magic after a 4-byte
    // CRC (libblkid stratis.c). Either one does, as when the other is damaged.
    ("Stratis pool member", 512 + 4, STRATIS_MAGIC),
    ("Stratis pool member", 9 * 512 + 4, STRATIS_MAGIC),
];

/// The magic of a Stratis static header (libblkid stratis.c).
pub(super) const STRATIS_MAGIC: &[u8] = b"!Stra0tis\x86\xff\x02^Arh";

/// The magics at the end of the first page of a swap area (at page size - 10): swap, and a
/// hibernation image written into swap.
pub(super) const SWAP_MAGICS: &[(&str, &[u8])] = &[
    ("swap", b"SWAPSPACE2"),
    ("swap", b"SWAP-SPACE"),
    ("hibernation image (in swap)", b"S1SUSPEND"),
    ("hibernation image (in swap)", b"S2SUSPEND"),
    ("hibernation image (in swap)", b"ULSUSPEND"),
    ("hibernation image (in swap)", b"LINHIB0001"),
];

/// Where LUKS2 keeps its second header (cryptsetup's and libblkid's list): found when the
/// first one is damaged or wiped.
pub(super) const LUKS2_SECOND_HEADER: [u64; 9] = [
    0x4000, 0x8000, 0x10000, 0x20000, 0x40000, 0x80000, 0x10_0000, 0x20_0000, 0x40_0000,
];

/// The ISO 13346 (UDF) volume structure descriptors that can open or fill the volume
/// recognition sequence, from 32 KiB on.
pub(super) const UDF_DESCRIPTORS: [&[u8]; 6] =
    [b"BEA01", b"NSR02", b"NSR03", b"BOOT2", b"CDW02", b"TEA01"];

/// A BitLocker To Go boot sector's jump and OEM name (libblkid bitlocker.c). They are a FAT32
/// boot sector's too, so a To Go volume is told apart by the FVE metadata block it points to
/// (see [`bitlocker_to_go_metadata`]).
pub(super) const BITLOCKER_TO_GO: &[u8] = b"\xeb\x58\x90MSWIN4.1";

/// The signature that opens a BitLocker FVE metadata block.
pub(super) const FVE_SIGNATURE: &[u8] = b"-FVE-FS-";

/// Where the first FVE metadata block is, if sector 0 is a BitLocker To Go boot sector: the
/// offset from the start it keeps at 440 (little-endian; libblkid bitlocker.c, and libbde's
/// "BitLocker Drive Encryption (BDE) format"). Anywhere on the volume, so the probe reads it
/// separately (see [`Probe::further_ranges`]).
pub(super) fn bitlocker_to_go_metadata(probe: &Probe) -> Option<u64> {
    if !probe.has(0, BITLOCKER_TO_GO) {
        return None;
    }
    let at = u64::from_le_bytes(probe.get(440, 8)?.try_into().ok()?);
    (at != 0).then_some(at)
}

/// What the signature check reads of a device: its size and some byte ranges of it (a whole
/// image in tests).
#[derive(Clone, Debug, Default)]
pub struct Probe {
    size: u64,
    /// `(offset, bytes)`, in any order.
    pieces: Vec<(u64, Vec<u8>)>,
}

impl Probe {
    /// The bytes the check looks at on a device of `size` bytes, as `(offset, length)`: the
    /// first 160 KiB, the last 128 KiB, a sector at each place LUKS2 may keep its second
    /// header beyond those, and the ZFS uberblock rings ([`zfs_rings`]).
    fn ranges(size: u64) -> Vec<(u64, u64)> {
        let mut ranges = vec![(0, HEAD_BYTES.min(size))];
        let mut tail_at = size;
        if size > HEAD_BYTES {
            let tail = TAIL_BYTES.min(size - HEAD_BYTES);
            tail_at = size - tail;
            ranges.push((tail_at, tail));
        }
        for at in LUKS2_SECOND_HEADER {
            if at >= HEAD_BYTES && at < tail_at && at + 512 <= size {
                ranges.push((at, 512));
            }
        }
        // The parts of the ZFS uberblock rings the head and tail leave out.
        for (at, len) in zfs_rings(size) {
            let end = (at + len).min(tail_at);
            if end > at.max(HEAD_BYTES) {
                ranges.push((at.max(HEAD_BYTES), end - at.max(HEAD_BYTES)));
            }
        }
        ranges
    }

    /// What the check must read besides [`Probe::ranges`], found in what those gave: the
    /// signature of the FVE metadata block a BitLocker To Go boot sector points to, which may
    /// be anywhere on the volume (without it, that boot sector is a FAT32 one). Nothing on a
    /// device without such a boot sector.
    fn further_ranges(&self) -> Vec<(u64, u64)> {
        let len = FVE_SIGNATURE.len();
        bitlocker_to_go_metadata(self)
            .filter(|&at| {
                at.checked_add(len as u64)
                    .is_some_and(|end| end <= self.size)
            })
            .filter(|&at| self.get(at, len).is_none())
            .map(|at| (at, len as u64))
            .into_iter()
            .collect()
    }

    /// Reads what the check looks at from an open device (or image file).
    pub fn read(f: &mut File) -> io::Result<Probe> {
        let size = f.seek(SeekFrom::End(0))?;
        let mut probe = Probe {
            size,
            pieces: Vec::new(),
        };
        for (at, len) in Probe::ranges(size) {
            probe.pieces.push((at, read_at(f, at, len)?));
        }
        for (at, len) in probe.further_ranges() {
            probe.pieces.push((at, read_at(f, at, len)?));
        }
        Ok(probe)
    }

    /// A whole device image held in memory.
    pub fn whole(image: &[u8]) -> Probe {
        Probe {
            size: image.len() as u64,
            pieces: vec![(0, image.to_vec())],
        }
    }

    /// `len` bytes at `at`, if the probe read them.
    fn get(&self, at: u64, len: usize) -> Option<&[u8]> {
        self.pieces.iter().find_map(|(start, bytes)| {
            let i = usize::try_from(at.checked_sub(*start)?).ok()?;
            bytes.get(i..i.checked_add(len)?)
        })
    }

    /// Whether `magic` is at `at`.
    fn has(&self, at: u64, magic: &[u8]) -> bool {
        self.get(at, magic.len()) == Some(magic)
    }
}

/// `len` bytes of `f` at `at`.
pub(super) fn read_at(f: &mut File, at: u64, len: u64) -> io::Result<Vec<u8>> {
    f.seek(SeekFrom::Start(at))?;
    let mut bytes = vec![0u8; len as usize];
    f.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// How much of the start of a device the signature check reads.
pub(super) const HEAD_BYTES: u64 = 160 * 1024;
/// How much of the end of a device the signature check reads.
pub(super) const TAIL_BYTES: u64 = 128 * 1024;

/// The first signature found on `dev` (see [`signature_in`]).
pub fn read_signature(dev: &Path) -> io::Result<Option<&'static str>> {
    Ok(signature_in(&Probe::read(&mut File::open(dev)?)?))
}

/// The first signature in a whole device image, if any (pure; see [`signature_in`]).
pub fn signature_in_image(image: &[u8]) -> Option<&'static str> {
    signature_in(&Probe::whole(image))
}

/// A ZFS label is 256 KiB: four of them, two at the start of the device and two at its end
/// (the end rounded down to 256 KiB), each ending in a 128 KiB ring of uberblocks (the ZFS
/// on-disk format; libblkid zfs.c). `(offset, length)` of each ring that fits.
pub(super) fn zfs_rings(size: u64) -> Vec<(u64, u64)> {
    const LABEL: u64 = 256 * 1024;
    const RING: u64 = 128 * 1024;
    if size < 4 * LABEL {
        return Vec::new();
    }
    let end = size / LABEL * LABEL;
    [0, LABEL, end - 2 * LABEL, end - LABEL]
        .into_iter()
        .map(|label| (label + LABEL - RING, RING))
        .collect()
}

/// A ZFS pool member: an uberblock in any label's ring. An uberblock slot is 1 KiB or the
/// pool's sector size, and which slots hold one depends on the transaction group, so every
/// 1 KiB step of each ring is looked at: its magic 0x00bab10c, as a 64-bit word of either byte
/// order, then an SPA version (1 to 5000) in the same order (libblkid zfs.c). Finding any
/// one refuses: a pool whose first label was overwritten still has three.
pub(super) fn is_zfs_member(probe: &Probe) -> bool {
    const MAGIC: u64 = 0x00ba_b10c;
    const SLOT: u64 = 1024;
    let uberblock_at = |at: u64| {
        let Some(b) = probe.get(at, 16) else {
            return false;
        };
        let words = |big: bool| {
            let word = |i: usize| {
                let w: [u8; 8] = b[i..i + 8].try_into().expect("8 bytes");
                if big {
                    u64::from_be_bytes(w)
                } else {
                    u64::from_le_bytes(w)
                }
            };
            (word(0), word(8))
        };
        [false, true].into_iter().any(|big| {
            let (magic, version) = words(big);
            magic == MAGIC && (1..=5000).contains(&version)
        })
    };
    zfs_rings(probe.size)
        .into_iter()
        .any(|(ring, len)| (0..len / SLOT).any(|k| uberblock_at(ring + k * SLOT)))
}

/// A Minix superblock at 1 KiB (libblkid minix.c): version 1 or 2's magic (0x137f, 0x138f,
/// 0x2468, 0x2478) at +16 or version 3's (0x4d5a) at +24, in either byte order. A two-byte
/// magic turns up in other data by chance, so, as libblkid does, its inode and zone maps must
/// be there and (versions 1 and 2) large enough for the inodes and zones it counts.
pub(super) fn is_minix(probe: &Probe) -> bool {
    let Some(sb) = probe.get(1024, 32) else {
        return false;
    };
    let u16_at = |at: usize, big: bool| {
        let b = [sb[at], sb[at + 1]];
        if big {
            u16::from_be_bytes(b)
        } else {
            u16::from_le_bytes(b)
        }
    };
    for big in [false, true] {
        let version = match u16_at(16, big) {
            0x137f | 0x138f => 1,
            0x2468 | 0x2478 => 2,
            _ if u16_at(24, big) == 0x4d5a => 3,
            _ => continue,
        };
        if version == 3 {
            // ninodes (u32), a pad, then the map block counts at +6 and +8.
            return u16_at(6, big) != 0 && u16_at(8, big) != 0;
        }
        let (ninodes, imaps, zmaps, first_zone) = (
            u16_at(0, big),
            u16_at(4, big),
            u16_at(6, big),
            u16_at(8, big),
        );
        let zones = if version == 2 {
            let b = [sb[20], sb[21], sb[22], sb[23]];
            if big {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        } else {
            u32::from(u16_at(2, big))
        };
        const BITS_PER_MAP_BLOCK: u64 = 1024 * 8;
        return imaps != 0
            && zmaps != 0
            && u64::from(imaps) * BITS_PER_MAP_BLOCK > u64::from(ninodes)
            && u64::from(zmaps) * BITS_PER_MAP_BLOCK
                > u64::from(zones).saturating_sub(u64::from(first_zone));
    }
    false
}

/// What a FAT boot sector is named.
pub(super) const FAT_FILESYSTEM: &str = "vfat (FAT12/16/32) filesystem";

/// Whether sector 0 is a FAT12, FAT16 or FAT32 boot sector, as libblkid's vfat probe tells one
/// (vfat.c, `fat_valid_superblock`): a name where FAT keeps one ("FAT12   ", "FAT16   ",
/// "FAT     " or "MSDOS" at 0x36; "FAT32   " or "MSWIN" at 0x52), or, as old floppies have no
/// name, a jump instruction (0xEB or 0xE9) with the boot signature 0x55AA and no "JFS" or
/// "HPFS" where FAT's name would be (OS/2 writes a FAT-like block before those). Either way
/// the BIOS parameter block must be one: a sector size that is a power of two from 512 to
/// 4096, a power-of-two sectors per cluster, reserved sectors and at least one FAT, and a
/// media byte of 0xF0 or 0xF8 to 0xFF. A partition table's sector 0 has boot code there, not
/// such a block, so an MBR is not taken for FAT.
pub(super) fn is_fat_boot_sector(probe: &Probe) -> bool {
    let Some(sector) = probe.get(0, 512) else {
        return false;
    };
    let named = [&b"FAT12   "[..], b"FAT16   ", b"FAT     ", b"MSDOS"]
        .iter()
        .any(|name| sector[0x36..].starts_with(name))
        || [&b"FAT32   "[..], b"MSWIN"]
            .iter()
            .any(|name| sector[0x52..].starts_with(name));
    let unnamed = matches!(sector[0], 0xEB | 0xE9)
        && sector[510..512] == [0x55, 0xAA]
        && !sector[0x36..].starts_with(b"JFS     ")
        && !sector[0x36..].starts_with(b"HPFS    ");
    if !named && !unnamed {
        return false;
    }
    let sector_size = u16::from_le_bytes([sector[11], sector[12]]);
    let sectors_per_cluster = sector[13];
    let reserved = u16::from_le_bytes([sector[14], sector[15]]);
    let fats = sector[16];
    let media = sector[21];
    sector_size.is_power_of_two()
        && (512..=4096).contains(&sector_size)
        && sectors_per_cluster.is_power_of_two()
        && reserved != 0
        && fats != 0
        && (media == 0xF0 || media >= 0xF8)
}

/// The first signature in what was read of a device, if any: a bcachefs superblock with
/// bcache's magic, [`SIGNATURES`] at their offsets from the start, an HFS master directory
/// block, swap and hibernation images for every page size, Minix, an LVM label in any of the
/// first four sectors, a UDF volume recognition sequence, NILFS2 (either superblock), ZFS
/// uberblocks in any label, the second LUKS2 header, a BitLocker To Go boot sector, a FAT boot
/// sector, an MBR, the backup GPT header in the last sector, and MD RAID superblocks near the end.
pub fn signature_in(probe: &Probe) -> Option<&'static str> {
    // Before the table, whose bcache entry its magic would meet.
    if old_bcachefs(probe) {
        return Some("bcachefs filesystem");
    }
    for &(what, at, magic) in SIGNATURES {
        if probe.has(at, magic) {
            return Some(what);
        }
    }
    // HFS: the master directory block at 1 KiB, "BD". An HFS+ volume in an HFS wrapper (as Mac
    // OS 8.1 to 9 made them) names its own signature at 0x7C of it (libblkid hfs.c).
    if probe.has(1024, b"BD") {
        let wrapped = probe.has(1024 + 0x7C, b"H+") || probe.has(1024 + 0x7C, b"HX");
        return Some(if wrapped {
            "HFS+ filesystem (in an HFS wrapper)"
        } else {
            "HFS filesystem"
        });
    }
    // Swap's first page is one memory page: 4 KiB on x86, up to 64 KiB on arm64 and ppc64.
    for page in [4096, 8192, 16384, 32768, 65536] {
        for &(what, magic) in SWAP_MAGICS {
            if probe.has(page - 10, magic) {
                return Some(what);
            }
        }
    }
    if is_minix(probe) {
        return Some("Minix filesystem");
    }
    if is_zfs_member(probe) {
        return Some("ZFS pool member");
    }
    // LVM2 writes its label into one of the first four sectors (pvcreate --labelsector).
    for sector in 0..4 {
        if probe.has(sector * 512, b"LABELONE") || probe.has(sector * 512 + 0x18, b"LVM2 001") {
            return Some("LVM physical volume");
        }
    }
    // UDF: descriptors of 2 KiB (or one 4 KiB sector) from 32 KiB on, the ID after a type byte.
    for k in 0..64 {
        let at = 32 * 1024 + k * 2048 + 1;
        if UDF_DESCRIPTORS.iter().any(|id| probe.has(at, id)) {
            return Some("UDF filesystem");
        }
    }
    // NILFS2: magic 0x3434 after a small revision number, at 1 KiB and in the 8th sector from
    // the end.
    let nilfs = |at: u64| {
        probe.has(at + 6, &[0x34, 0x34])
            && probe.get(at, 4).is_some_and(|rev| {
                (1..16).contains(&u32::from_le_bytes([rev[0], rev[1], rev[2], rev[3]]))
            })
    };
    let size = probe.size;
    if nilfs(1024) || (size >= 8 * 512 && nilfs((size / 512 - 8) * 512)) {
        return Some("NILFS2 filesystem");
    }
    for at in LUKS2_SECOND_HEADER {
        if probe.has(at, b"SKUL\xba\xbe") {
            return Some("LUKS2 encrypted volume (second header)");
        }
    }
    // BitLocker To Go: a FAT32 boot sector whose first FVE metadata block is where it says.
    // Before the MBR rule, which its 0x55AA would meet.
    if bitlocker_to_go_metadata(probe).is_some_and(|at| probe.has(at, FVE_SIGNATURE)) {
        return Some("BitLocker To Go encrypted volume");
    }
    // A FAT boot sector carries the MBR's 0x55AA too: told apart by its BIOS parameter block.
    if is_fat_boot_sector(probe) {
        return Some(FAT_FILESYSTEM);
    }
    // An MBR: the boot signature (NTFS and exFAT boot sectors carry 0x55AA too, and are found
    // by their names above).
    if probe.has(510, &[0x55, 0xAA]) {
        return Some("MBR partition table or boot sector");
    }
    // A GPT whose primary header is gone still has its backup in the last sector (512 bytes or
    // 4 KiB).
    for sector in [512, 4096] {
        if size >= 2 * sector && probe.has(size - sector, b"EFI PART") {
            return Some("GPT partition table (backup header)");
        }
    }
    // MD RAID 0.90 and 1.0 keep their superblock at the end of the device.
    if size >= 128 * 1024 {
        let v090 = (size & !(64 * 1024 - 1)) - 64 * 1024;
        let v10 = (size - 8 * 1024) & !(4 * 1024 - 1);
        for (what, at) in [
            ("MD RAID (v0.90) member", v090),
            ("MD RAID (v1.0) member", v10),
        ] {
            if probe.has(at, &MD_MAGIC) {
                return Some(what);
            }
        }
    }
    None
}

#[cfg(test)]
#[path = "signature_tests.rs"]
mod tests;
