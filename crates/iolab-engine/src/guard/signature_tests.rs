//! Signatures found where libblkid finds them, in images made here and by each format's own tool
//! where it is installed; near misses not taken for them.

use super::*;
use std::fs;
use std::path::PathBuf;

#[test]
fn blank_head_has_no_signature() {
    assert_eq!(signature_in_image(&vec![0u8; 160 * 1024]), None);
}

#[test]
fn known_signatures_are_found() {
    let mut head = vec![0u8; 160 * 1024];
    head[1080] = 0x53;
    head[1081] = 0xEF;
    assert_eq!(signature_in_image(&head), Some("ext2/3/4 filesystem"));
    let mut head = vec![0u8; 160 * 1024];
    head[512..520].copy_from_slice(b"EFI PART");
    assert_eq!(signature_in_image(&head), Some("GPT partition table"));
    let mut head = vec![0u8; 160 * 1024];
    head[510] = 0x55;
    head[511] = 0xAA;
    assert!(signature_in_image(&head).unwrap().contains("MBR"));
    let mut head = vec![0u8; 8192];
    head[4086..4096].copy_from_slice(b"SWAPSPACE2");
    assert_eq!(signature_in_image(&head), Some("swap"));
}

/// An image of `size` zero bytes with `magic` written at `at`.
fn image_with(size: usize, at: u64, magic: &[u8]) -> Vec<u8> {
    let mut image = vec![0u8; size];
    let at = at as usize;
    image[at..at + magic.len()].copy_from_slice(magic);
    image
}

#[test]
fn filesystems_found_at_their_superblocks() {
    let cases: &[(&str, u64, &[u8])] = &[
        ("squashfs filesystem", 0, b"hsqs"),
        ("squashfs filesystem (big-endian)", 0, b"sqsh"),
        ("EROFS filesystem", 1024, &[0xe2, 0xe1, 0xf5, 0xe0]),
        // HFS+ and HFSX: the volume header at 1 KiB, its signature and then its version, 4 for HFS+
        // and 5 for HFSX, big-endian (libblkid hfs.c; Apple's TN1150). HFS is in [`signature_in`].
        ("HFS+ filesystem", 1024, b"H+\x00\x04"),
        ("HFSX filesystem", 1024, b"HX\x00\x05"),
        // APFS: the container superblock in block 0, its magic after the 32-byte object header
        // (libblkid apfs.c).
        ("APFS container", 32, b"NXSB"),
        ("JFS filesystem", 32768, b"JFS1"),
        ("ReiserFS filesystem", 65536 + 0x34, b"ReIsEr2Fs"),
        ("ReiserFS filesystem", 65536 + 0x34, b"ReIsEr3Fs"),
        ("ReiserFS filesystem", 65536 + 0x34, b"ReIsErFs"),
        ("ReiserFS filesystem", 8192 + 0x34, b"ReIsErFs"),
        ("ReiserFS filesystem", 8192 + 20, b"ReIsErFs"),
        ("Reiser4 filesystem", 65536, b"ReIsEr4"),
        ("UDF filesystem", 32769, b"BEA01"),
        // mkudffs --bootarea=erase: BEA01, NSR03, TEA01 at 32, 34, 36 KiB; any one does.
        ("UDF filesystem", 32768 + 2048 + 1, b"NSR03"),
        ("UDF filesystem", 32768 + 4096 + 1, b"NSR02"),
        ("UDF filesystem", 32768 + 63 * 2048 + 1, b"TEA01"),
    ];
    for &(what, at, magic) in cases {
        let image = image_with(1 << 20, at, magic);
        assert_eq!(signature_in_image(&image), Some(what), "{what} at {at}");
    }
}

/// An uberblock header: ZFS's magic and an SPA version, as two 64-bit words.
fn uberblock(version: u64, big: bool) -> Vec<u8> {
    let word = |w: u64| {
        if big {
            w.to_be_bytes()
        } else {
            w.to_le_bytes()
        }
    };
    [word(0x00ba_b10c), word(version)].concat()
}

#[test]
fn a_zfs_uberblock_in_any_labels_ring_is_found_and_near_misses_are_not() {
    const K: u64 = 1024;
    // 4 MiB and a bit, so the end labels sit below a 256 KiB boundary, not at the end.
    let size = 4 * 1024 * K + 100 * K;
    let end_labels = size / (256 * K) * (256 * K) - 512 * K;
    let found = [
        // Label 0's ring, a slot past the one the old check looked at.
        (128 * K + 5 * K, 5000, false),
        // Label 1, big-endian (a pool written on SPARC or POWER).
        (256 * K + 128 * K + 100 * K, 28, true),
        // Only the last label's ring: the first three were overwritten.
        (end_labels + 256 * K + 128 * K + 127 * K, 5000, false),
    ];
    for (at, version, big) in found {
        let image = image_with(size as usize, at, &uberblock(version, big));
        assert_eq!(
            signature_in_image(&image),
            Some("ZFS pool member"),
            "{at} {version} {big}"
        );
    }
    let missed = [
        // A version no pool has, and none.
        (128 * K, 5001, false),
        (128 * K, 0, true),
        // Not at the start of a slot.
        (128 * K + 8, 5000, false),
        // Outside the rings: in label 0's name-value pairs.
        (64 * K, 5000, false),
    ];
    for (at, version, big) in missed {
        let image = image_with(size as usize, at, &uberblock(version, big));
        assert_eq!(signature_in_image(&image), None, "{at} {version} {big}");
    }
    // A device under four labels' size has no ZFS.
    let small = image_with(512 * K as usize, 128 * K, &uberblock(5000, false));
    assert_eq!(signature_in_image(&small), None);
}

#[test]
fn the_probe_reads_the_zfs_rings_between_head_and_tail() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pool.img");
    // Label 1's ring, beyond the 160 KiB head: only the probe's own ranges reach it.
    let at = 256 * 1024 + 128 * 1024 + 64 * 1024;
    std::fs::write(&path, image_with(8 << 20, at, &uberblock(5000, false))).unwrap();
    assert_eq!(read_signature(&path).unwrap(), Some("ZFS pool member"));
}

#[test]
fn cramfs_bfs_romfs_and_minix_are_found_and_near_misses_are_not() {
    for (what, at, magic) in [
        ("cramfs filesystem", 0, &b"\x45\x3d\xcd\x28"[..]),
        ("cramfs filesystem", 512, b"\x28\xcd\x3d\x45"),
        ("SCO BFS filesystem", 0, b"\xce\xfa\xad\x1b"),
        ("romfs filesystem", 0, b"-rom1fs-"),
    ] {
        assert_eq!(
            signature_in_image(&image_with(1 << 20, at, magic)),
            Some(what)
        );
        assert_eq!(
            signature_in_image(&image_with(1 << 20, at + 1, magic)),
            None
        );
    }
    // Minix v1 as mkfs.minix writes a 1 MiB image: 352 inodes, 1024 zones, one map block
    // each, the first data zone 15.
    let mut v1 = vec![0u8; 1 << 20];
    let sb = |img: &mut [u8], at: usize, b: &[u8]| {
        img[1024 + at..1024 + at + b.len()].copy_from_slice(b)
    };
    sb(&mut v1, 0, &352u16.to_le_bytes());
    sb(&mut v1, 2, &1024u16.to_le_bytes());
    sb(&mut v1, 4, &1u16.to_le_bytes());
    sb(&mut v1, 6, &1u16.to_le_bytes());
    sb(&mut v1, 8, &15u16.to_le_bytes());
    sb(&mut v1, 16, &0x138fu16.to_le_bytes());
    assert_eq!(signature_in_image(&v1), Some("Minix filesystem"));
    // The same magic with no inode map is a chance match in other data.
    let mut chance = v1.clone();
    sb(&mut chance, 4, &0u16.to_le_bytes());
    assert_eq!(signature_in_image(&chance), None);
    // Big-endian version 2, and version 3.
    let mut v2 = vec![0u8; 1 << 20];
    sb(&mut v2, 4, &1u16.to_be_bytes());
    sb(&mut v2, 6, &1u16.to_be_bytes());
    sb(&mut v2, 16, &0x2478u16.to_be_bytes());
    sb(&mut v2, 20, &1000u32.to_be_bytes());
    assert_eq!(signature_in_image(&v2), Some("Minix filesystem"));
    let mut v3 = vec![0u8; 1 << 20];
    sb(&mut v3, 6, &1u16.to_le_bytes());
    sb(&mut v3, 8, &1u16.to_le_bytes());
    sb(&mut v3, 24, &0x4d5au16.to_le_bytes());
    assert_eq!(signature_in_image(&v3), Some("Minix filesystem"));
}

#[test]
fn filesystems_made_by_mkfs_minix_cramfs_and_bfs_are_found() {
    let dir = tempfile::tempdir().unwrap();
    for (tool, args, what) in [
        ("mkfs.minix", &[][..], "Minix filesystem"),
        ("mkfs.minix", &["-3"][..], "Minix filesystem"),
        ("mkfs.bfs", &[][..], "SCO BFS filesystem"),
    ] {
        let image = dir.path().join("fs.img");
        std::fs::write(&image, vec![0u8; 4 << 20]).unwrap();
        match std::process::Command::new(tool)
            .args(args)
            .arg(&image)
            .output()
        {
            Ok(out) if out.status.success() => {}
            Ok(out) => panic!("{tool}: {}", String::from_utf8_lossy(&out.stderr)),
            Err(e) => {
                println!("skipped: {tool}: {e}");
                continue;
            }
        }
        assert_eq!(
            read_signature(&image).unwrap(),
            Some(what),
            "{tool} {args:?}"
        );
    }
    // mkfs.cramfs makes an image of a directory.
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("f"), "x").unwrap();
    let image = dir.path().join("cram.img");
    match std::process::Command::new("mkfs.cramfs")
        .arg(&tree)
        .arg(&image)
        .output()
    {
        Ok(out) if out.status.success() => {
            assert_eq!(read_signature(&image).unwrap(), Some("cramfs filesystem"));
        }
        Ok(out) => panic!("mkfs.cramfs: {}", String::from_utf8_lossy(&out.stderr)),
        Err(e) => println!("skipped: mkfs.cramfs: {e}"),
    }
}

#[test]
fn hfs_hfs_plus_hfsx_and_apfs_are_found_and_near_misses_are_not() {
    let cases: &[(&str, u64, &[u8])] = &[
        ("HFS filesystem", 1024, b"BD"),
        ("HFS+ filesystem", 1024, b"H+\x00\x04"),
        ("HFSX filesystem", 1024, b"HX\x00\x05"),
        ("APFS container", 32, b"NXSB"),
    ];
    for &(what, at, magic) in cases {
        let image = image_with(1 << 20, at, magic);
        assert_eq!(signature_in_image(&image), Some(what), "{what}");
    }
    let mut wrapper = image_with(1 << 20, 1024, b"BD");
    wrapper[1024 + 0x7C..][..2].copy_from_slice(b"H+");
    assert_eq!(
        signature_in_image(&wrapper),
        Some("HFS+ filesystem (in an HFS wrapper)")
    );
    // The wrong version for the signature, one byte off, or one byte out of place.
    let near: &[(u64, &[u8])] = &[
        (1024, b"H+\x00\x05"),
        (1024, b"HX\x00\x04"),
        (1024, b"H+\x00\x00"),
        (1024, b"BE"),
        (1025, b"BD"),
        (32, b"NXSA"),
        (33, b"NXSB"),
    ];
    for &(at, magic) in near {
        let image = image_with(1 << 20, at, magic);
        assert_eq!(signature_in_image(&image), None, "{magic:x?} at {at}");
    }
}

/// `tool`, where `PATH` (or the sbin directories root's `PATH` has) finds it.
fn installed(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
}

/// Runs `tool` with `args` in `dir` (also its `HOME`: hformat leaves a file there).
fn run_in(dir: &Path, tool: &Path, args: &[&str]) {
    let out = std::process::Command::new(tool)
        .args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{tool:?} {args:?}: {out:?}");
}

#[test]
fn hfs_made_by_hformat_is_found() {
    let Some(hformat) = installed("hformat") else {
        println!("skipped: hformat (hfsutils) not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("hfs.img");
    File::create(&image).unwrap().set_len(4 << 20).unwrap();
    run_in(dir.path(), &hformat, &["-l", "iolab", "hfs.img"]);
    let bytes = fs::read(&image).unwrap();
    assert_eq!(signature_in_image(&bytes), Some("HFS filesystem"));
    assert_eq!(read_signature(&image).unwrap(), Some("HFS filesystem"));
}

#[test]
fn apfs_made_by_mkapfs_is_found() {
    let Some(mkapfs) = installed("mkapfs") else {
        println!("skipped: mkapfs (apfsprogs) not installed");
        return;
    };
    // mkapfs refuses containers much smaller than this; the file stays sparse.
    let dir = tempfile::tempdir().unwrap();
    let image = dir.path().join("apfs.img");
    File::create(&image).unwrap().set_len(128 << 20).unwrap();
    run_in(dir.path(), &mkapfs, &["apfs.img"]);
    assert_eq!(read_signature(&image).unwrap(), Some("APFS container"));
    let mut head = vec![0u8; 1 << 20];
    File::open(&image).unwrap().read_exact(&mut head).unwrap();
    assert_eq!(signature_in_image(&head), Some("APFS container"));
}

/// A 1 MiB image with a superblock at 4 KiB holding `magic` at 24 and `sector` (the sector
/// it was written at) at 8, as bcache keeps it, and at 104, as bcachefs does, where given.
fn bcache_like(magic: &[u8], bcache_at: Option<u64>, bcachefs_at: Option<u64>) -> Vec<u8> {
    let mut image = image_with(1 << 20, 4096 + 24, magic);
    for (field, sector) in [(8, bcache_at), (104, bcachefs_at)] {
        if let Some(sector) = sector {
            image[4096 + field..][..8].copy_from_slice(&sector.to_le_bytes());
        }
    }
    image
}

#[test]
fn bcachefs_is_found_by_its_own_magic_and_by_bcaches() {
    let bcachefs = Some("bcachefs filesystem");
    let bcache = Some("bcache backing device");
    assert_eq!(
        signature_in_image(&bcache_like(&BCACHEFS_MAGIC, None, Some(8))),
        bcachefs
    );
    assert_eq!(
        signature_in_image(&bcache_like(&BCACHEFS_MAGIC, None, None)),
        bcachefs
    );
    // bcache's magic, at 8 the checksum and at 104 the sector: bcachefs from before it had
    // its own magic.
    let old = bcache_like(&BCACHE_MAGIC, Some(0x5f3a_91c2_0b7d_e604), Some(8));
    assert_eq!(signature_in_image(&old), bcachefs);
    // bcache's magic with its own sector at 8 is bcache, whatever its flags at 104 are.
    assert_eq!(
        signature_in_image(&bcache_like(&BCACHE_MAGIC, Some(8), Some(8))),
        bcache
    );
    assert_eq!(
        signature_in_image(&bcache_like(&BCACHE_MAGIC, Some(8), None)),
        bcache
    );
    // One byte off (the last, or the fifth, where bcache's differs) is neither.
    let mut near = BCACHEFS_MAGIC;
    near[15] ^= 1;
    assert_eq!(signature_in_image(&bcache_like(&near, None, Some(8))), None);
    near = BCACHEFS_MAGIC;
    near[4] = BCACHE_MAGIC[4];
    assert_eq!(signature_in_image(&bcache_like(&near, None, Some(8))), None);
    // bcachefs's magic one byte out of place.
    assert_eq!(
        signature_in_image(&image_with(1 << 20, 4096 + 25, &BCACHEFS_MAGIC)),
        None
    );
}

#[test]
fn bcache_made_by_make_bcache_is_not_taken_for_bcachefs() {
    let Some(make_bcache) = installed("make-bcache") else {
        println!("skipped: make-bcache (bcache-tools) not installed");
        return;
    };
    // A backing device, and a cache whose flags (random replacement) are 8 where bcachefs
    // keeps its sector.
    let args: [&[&str]; 2] = [
        &["-B", "bcache.img"],
        &[
            "-b",
            "64k",
            "--cache_replacement_policy=random",
            "-C",
            "bcache.img",
        ],
    ];
    for args in args {
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("bcache.img");
        File::create(&image).unwrap().set_len(16 << 20).unwrap();
        run_in(dir.path(), &make_bcache, args);
        let bytes = fs::read(&image).unwrap();
        assert_eq!(
            signature_in_image(&bytes),
            Some("bcache backing device"),
            "{args:?}"
        );
    }
}

#[test]
fn vdo_and_either_stratis_header_are_found_and_near_misses_are_not() {
    let cases: &[(&str, u64, &[u8])] = &[
        ("VDO volume", 0, b"dmvdo001"),
        ("Stratis pool member", 512 + 4, STRATIS_MAGIC),
        ("Stratis pool member", 9 * 512 + 4, STRATIS_MAGIC),
    ];
    for &(what, at, magic) in cases {
        let image = image_with(1 << 20, at, magic);
        assert_eq!(signature_in_image(&image), Some(what), "{what} at {at}");
    }
    let mut stratis = STRATIS_MAGIC.to_vec();
    stratis[15] ^= 1;
    let near: &[(u64, &[u8])] = &[
        (0, b"dmvdo00l"),
        (1, b"dmvdo001"),
        (512 + 4, &stratis),
        (9 * 512 + 4, &stratis),
        // The header's start, without its CRC before the magic.
        (512, STRATIS_MAGIC),
        (9 * 512, STRATIS_MAGIC),
    ];
    for &(at, magic) in near {
        let image = image_with(1 << 20, at, magic);
        assert_eq!(signature_in_image(&image), None, "{magic:x?} at {at}");
    }
}

#[test]
fn nilfs2_is_found_by_either_superblock_after_a_revision_number() {
    let size = 1 << 20;
    for sb in [1024, (size as u64 / 512 - 8) * 512] {
        let mut image = image_with(size, sb, &2u32.to_le_bytes());
        image[sb as usize + 6..sb as usize + 8].copy_from_slice(&[0x34, 0x34]);
        assert_eq!(
            signature_in_image(&image),
            Some("NILFS2 filesystem"),
            "{sb}"
        );
    }
    // Two bytes "44" alone, with no revision before them, are data.
    assert_eq!(signature_in_image(&image_with(size, 1030, b"44")), None);
}

#[test]
fn swap_and_hibernation_images_found_for_every_page_size() {
    for page in [4096u64, 8192, 16384, 32768, 65536] {
        for &(what, magic) in SWAP_MAGICS {
            let image = image_with(1 << 20, page - 10, magic);
            assert_eq!(signature_in_image(&image), Some(what), "{page}");
        }
    }
    let image = image_with(1 << 20, 4086, b"S1SUSPEND");
    assert_eq!(
        signature_in_image(&image),
        Some("hibernation image (in swap)")
    );
    let tuxonice = [0xed, 0xc3, 0x02, 0xe9, 0x98, 0x56, 0xe5, 0x0c];
    let image = image_with(1 << 20, 0, &tuxonice);
    assert_eq!(
        signature_in_image(&image),
        Some("TuxOnIce hibernation image")
    );
}

#[test]
fn an_lvm_label_is_found_in_any_of_the_first_four_sectors() {
    for sector in 0..4u64 {
        let image = image_with(1 << 20, sector * 512, b"LABELONE");
        assert_eq!(
            signature_in_image(&image),
            Some("LVM physical volume"),
            "{sector}"
        );
        let image = image_with(1 << 20, sector * 512 + 0x18, b"LVM2 001");
        assert_eq!(
            signature_in_image(&image),
            Some("LVM physical volume"),
            "{sector}"
        );
    }
    assert_eq!(
        signature_in_image(&image_with(1 << 20, 4 * 512, b"LABELONE")),
        None
    );
}

#[test]
fn a_luks2_second_header_is_found_where_the_first_is_wiped() {
    let size = (4 << 20) + 8192;
    for at in LUKS2_SECOND_HEADER {
        let image = image_with(size, at, b"SKUL\xba\xbe");
        assert_eq!(
            signature_in_image(&image),
            Some("LUKS2 encrypted volume (second header)"),
            "{at:#x}"
        );
    }
}

#[test]
fn a_gpt_backup_header_in_the_last_sector_is_found() {
    let size = 1 << 20;
    for sector in [512, 4096] {
        let image = image_with(size, (size - sector) as u64, b"EFI PART");
        assert_eq!(
            signature_in_image(&image),
            Some("GPT partition table (backup header)"),
            "{sector}"
        );
    }
}

#[test]
fn reading_a_device_reads_every_place_a_signature_can_be() {
    // Sparse 64 MiB image files: a LUKS2 second header at 4 MiB (beyond the first
    // 160 KiB), a GPT backup and a NILFS2 backup superblock at the end.
    let dir = tempfile::tempdir().unwrap();
    let size = 64u64 << 20;
    let write = |name: &str, at: u64, bytes: &[u8]| {
        use std::os::unix::fs::FileExt;
        let path = dir.path().join(name);
        let f = File::create(&path).unwrap();
        f.set_len(size).unwrap();
        f.write_all_at(bytes, at).unwrap();
        path
    };
    let luks = write("luks", 0x40_0000, b"SKUL\xba\xbe");
    assert_eq!(
        read_signature(&luks).unwrap(),
        Some("LUKS2 encrypted volume (second header)")
    );
    let gpt = write("gpt", size - 512, b"EFI PART");
    assert_eq!(
        read_signature(&gpt).unwrap(),
        Some("GPT partition table (backup header)")
    );
    let mut sb = [0u8; 8];
    sb[0] = 2;
    sb[6..8].copy_from_slice(&[0x34, 0x34]);
    let nilfs = write("nilfs", size - 4096, &sb);
    assert_eq!(read_signature(&nilfs).unwrap(), Some("NILFS2 filesystem"));
    let blank = write("blank", 0, &[0]);
    assert_eq!(read_signature(&blank).unwrap(), None);
}

/// A 1 MiB image whose sector 0 starts with `boot` and ends in 0x55AA, as boot sectors do.
fn boot_sector(boot: &[u8]) -> Vec<u8> {
    let mut image = image_with(1 << 20, 0, boot);
    image[510..512].copy_from_slice(&[0x55, 0xAA]);
    image
}

#[test]
fn bitlocker_boot_sectors_are_named_before_the_mbr_rule() {
    for boot in [b"\xeb\x52\x90-FVE-FS-", b"\xeb\x58\x90-FVE-FS-"] {
        assert_eq!(
            signature_in_image(&boot_sector(boot)),
            Some("BitLocker encrypted volume"),
            "{boot:x?}"
        );
    }
    // One byte off: only the boot sector's 0x55AA is left.
    let near = boot_sector(b"\xeb\x58\x90-FVE-FS_");
    assert_eq!(
        signature_in_image(&near),
        Some("MBR partition table or boot sector")
    );
    assert_eq!(
        signature_in_image(&image_with(1 << 20, 0, b"\xeb\x58\x90-FVE-FS_")),
        None
    );
}

/// A 1 MiB image whose sector 0 is a FAT boot sector: a jump, a BIOS parameter block of
/// 512-byte sectors, 4 per cluster, 1 reserved sector, 2 FATs and media 0xF8, `name` at
/// `name_at` (0x36 for FAT12/16, 0x52 for FAT32), and 0x55AA.
fn fat_boot_sector(name: &[u8], name_at: usize) -> Vec<u8> {
    let mut image = boot_sector(b"\xeb\x3c\x90mkfs.fat");
    image[11..13].copy_from_slice(&512u16.to_le_bytes());
    image[13] = 4;
    image[14..16].copy_from_slice(&1u16.to_le_bytes());
    image[16] = 2;
    image[21] = 0xF8;
    image[name_at..name_at + name.len()].copy_from_slice(name);
    image
}

/// A 1 MiB image with an MBR partition table as fdisk writes it: boot code (none here), one
/// Linux partition from sector 2048, and 0x55AA.
fn mbr_partition_table() -> Vec<u8> {
    let mut entry = [0u8; 16];
    entry[4] = 0x83;
    entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
    entry[12..16].copy_from_slice(&2048u32.to_le_bytes());
    let mut image = image_with(1 << 20, 446, &entry);
    image[510..512].copy_from_slice(&[0x55, 0xAA]);
    image
}

#[test]
fn a_fat_boot_sector_is_named_as_fat_and_a_partition_table_as_an_mbr() {
    let fat = Some("vfat (FAT12/16/32) filesystem");
    for (name, at) in [
        (&b"FAT12   "[..], 0x36),
        (b"FAT16   ", 0x36),
        (b"FAT     ", 0x36),
        (b"FAT32   ", 0x52),
    ] {
        let image = fat_boot_sector(name, at);
        assert_eq!(signature_in_image(&image), fat, "{name:?}");
        // Without its 0x55AA, named FAT still is FAT (libblkid's rule).
        let mut unsigned = image.clone();
        unsigned[510..512].fill(0);
        assert_eq!(signature_in_image(&unsigned), fat, "{name:?}");
    }
    // An old floppy's boot sector: no name, a jump and 0x55AA.
    assert_eq!(signature_in_image(&fat_boot_sector(b"", 0x36)), fat);
    // OS/2's FAT-like block before JFS or HPFS is not FAT.
    for name in [b"JFS     ", b"HPFS    "] {
        assert_eq!(
            signature_in_image(&fat_boot_sector(name, 0x36)),
            Some("MBR partition table or boot sector"),
            "{name:?}"
        );
    }
    // A parameter block that is not one: each field wrong in turn.
    let broken: [(usize, &[u8]); 6] = [
        (11, &[0x00, 0x01]), // 256-byte sectors
        (11, &[0x00, 0x06]), // 1536-byte sectors
        (13, &[3]),          // 3 sectors per cluster
        (14, &[0, 0]),       // no reserved sector
        (16, &[0]),          // no FAT
        (21, &[0xF1]),       // no media byte FAT has
    ];
    for (at, bytes) in broken {
        let mut image = fat_boot_sector(b"FAT16   ", 0x36);
        image[at..at + bytes.len()].copy_from_slice(bytes);
        assert_eq!(
            signature_in_image(&image),
            Some("MBR partition table or boot sector"),
            "{at} {bytes:x?}"
        );
    }
    // A partition table is still an MBR.
    assert_eq!(
        signature_in_image(&mbr_partition_table()),
        Some("MBR partition table or boot sector")
    );
}

#[test]
fn filesystems_made_by_mkfs_vfat_are_fat_and_a_table_made_by_sfdisk_an_mbr() {
    let Some(mkfs) = installed("mkfs.vfat") else {
        println!("skipped: mkfs.vfat (dosfstools) not installed");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    for bits in ["12", "16", "32"] {
        let name = format!("fat{bits}.img");
        let image = dir.path().join(&name);
        File::create(&image).unwrap().set_len(64 << 20).unwrap();
        run_in(dir.path(), &mkfs, &["-F", bits, &name]);
        assert_eq!(
            read_signature(&image).unwrap(),
            Some("vfat (FAT12/16/32) filesystem"),
            "FAT{bits}"
        );
    }
    let Some(sfdisk) = installed("sfdisk") else {
        println!("skipped: sfdisk (fdisk) not installed");
        return;
    };
    let image = dir.path().join("mbr.img");
    File::create(&image).unwrap().set_len(64 << 20).unwrap();
    let mut child = std::process::Command::new(sfdisk)
        .args(["--quiet", "--label", "dos"])
        .arg(&image)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"start=2048, type=83\n").unwrap();
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(
        read_signature(&image).unwrap(),
        Some("MBR partition table or boot sector")
    );
}

#[test]
fn bitlocker_to_go_is_named_by_the_fve_metadata_its_boot_sector_points_to() {
    let metadata = 0x8_0000u64; // beyond what the probe reads of the start otherwise
                                // A To Go boot sector is a FAT32 one, BIOS parameter block and all.
    let mut image = fat_boot_sector(b"FAT32   ", 0x52);
    image[..BITLOCKER_TO_GO.len()].copy_from_slice(BITLOCKER_TO_GO);
    image[440..448].copy_from_slice(&metadata.to_le_bytes());
    let mut to_go = image.clone();
    to_go[metadata as usize..][..8].copy_from_slice(FVE_SIGNATURE);
    assert_eq!(
        signature_in_image(&to_go),
        Some("BitLocker To Go encrypted volume")
    );
    // The same boot sector with no FVE metadata there (or none named) is a FAT32 one.
    let fat32 = "vfat (FAT12/16/32) filesystem";
    assert_eq!(signature_in_image(&image), Some(fat32));
    image[metadata as usize..][..8].copy_from_slice(b"-FVE-FS_");
    assert_eq!(signature_in_image(&image), Some(fat32));
    to_go[440..448].fill(0);
    assert_eq!(signature_in_image(&to_go), Some(fat32));
}

#[test]
fn reading_a_bitlocker_to_go_device_reads_its_fve_metadata_wherever_it_is() {
    // Sparse 64 MiB image files with a To Go boot sector: its metadata at 32 MiB, then
    // named past the end (a FAT32 boot sector that only looks like one: not an error).
    let dir = tempfile::tempdir().unwrap();
    let size = 64u64 << 20;
    let write = |name: &str, metadata: u64| {
        use std::os::unix::fs::FileExt;
        let path = dir.path().join(name);
        let f = File::create(&path).unwrap();
        f.set_len(size).unwrap();
        let mut boot = boot_sector(BITLOCKER_TO_GO);
        boot.truncate(512);
        boot[440..448].copy_from_slice(&metadata.to_le_bytes());
        f.write_all_at(&boot, 0).unwrap();
        if metadata < size {
            f.write_all_at(FVE_SIGNATURE, metadata).unwrap();
        }
        path
    };
    let to_go = write("to-go", 32 << 20);
    assert_eq!(
        read_signature(&to_go).unwrap(),
        Some("BitLocker To Go encrypted volume")
    );
    let past_the_end = write("past-the-end", size + 4096);
    assert_eq!(
        read_signature(&past_the_end).unwrap(),
        Some("MBR partition table or boot sector")
    );
}
