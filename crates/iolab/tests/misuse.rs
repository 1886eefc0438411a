//! The misuse battery (issue 35): the real `iolab` binary, asked to write where it must not,
//! refuses with exit code 2, says why, and leaves every byte of the victim as it was (its
//! SHA-256 before and after).
//!
//! Target side: devices that hold something (mounted, partitioned, a filesystem, RAID, LVM,
//! LUKS, swap or ZFS signature, holders, an exclusive opener, loop devices sharing their data),
//! files a loop device is bound to, user files, directories. Output side: every file iolab
//! writes (`--json`, `-o`, `--html`, a suite's HTML beside its JSON, `IOLAB_DB`,
//! `IOLAB_RESULTS_DIR`) when it is a device, an input or the results store under any alias, a
//! loop-backed file, a mount point, active swap, or a user file without `--overwrite`.
//!
//! Each test function builds its victims once, runs its table of cases, prints one line with how
//! many cases ran and which were skipped, and fails listing every case that failed. Cases that
//! need root, loop devices, zram or a tool print `skipped: <reason>` where the machine lacks
//! them; as root (CI) they run. Every loop device, mount, swap area and zram is torn down by a
//! drop guard, also when a case fails.

use iolab_testkit::{loop_skip_reason, mount_skip_reason, sha256, which, zram_skip_reason};
use iolab_testkit::{open_exclusive, run, LoopDevice, MachineLock, Mount, Zram};
use iolab_testkit::{AttachedLoop, BindMount, DmLinear, PartitionedLoop, SwapOn};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A model target for the output cases on `sim:`.
const SIM: &str = "sim:ssd750-400@z97";

/// A suite of one short write step on a 4 MiB span.
const SUITE: &str = "name = \"tiny\"\ntitle = \"misuse battery\"\nsource = \"tests/misuse.rs\"\n\
                     [job]\nsize = \"4m\"\nios_limit = 4\nblock_size = \"1m\"\n\
                     [[phase]]\nname = \"p\"\n[[phase.step]]\nname = \"w\"\n\
                     job = { access = \"write\" }\n";

// What the output refusals say why: the output policy's words.
/// The output is the results store.
const WHY_STORE: &str = "results store";
/// The output is one of the command's inputs.
const WHY_INPUT: &str = "same file as the input";
/// The output exists and iolab did not make it.
const WHY_NOT_OURS: &str = "not written by iolab";
/// The output is a block device.
const WHY_BLOCK: &str = "block device";
/// The output is a character device other than /dev/null.
const WHY_CHAR: &str = "character device";
/// The store is not SQLite.
const WHY_NOT_SQLITE: &str = "SQLite";
/// `IOLAB_RESULTS_DIR` is no directory.
const WHY_NOT_DIR: &str = "directory";
/// The output is a mount point.
const WHY_MOUNT: &str = "mount";
/// The output is active swap.
const WHY_SWAP: &str = "swap";

/// What a case expects.
#[derive(Clone, Copy, Debug)]
enum Expect<'a> {
    /// Exit 2, standard error naming every one of these, every victim unchanged.
    Refused(&'a [&'a str]),
    /// Exit 0 and every victim unchanged (reads are always allowed).
    Allowed,
    /// Exit 0 and the first victim changed (an output written with --overwrite), the others
    /// unchanged.
    Written,
    /// Exit 0, standard error saying every one of these (a note of what was changed to fit),
    /// every victim unchanged.
    Noted(&'a [&'a str]),
}

/// Where a case runs: its working directory, results directory and results store.
struct Ctx {
    dir: PathBuf,
    /// `IOLAB_DB` (unset when `None`).
    db: Option<PathBuf>,
}

impl Ctx {
    fn new(dir: &Path, db: Option<&str>) -> Ctx {
        Ctx {
            dir: dir.to_path_buf(),
            db: db.map(|d| dir.join(d)),
        }
    }

    /// `iolab ARGS` here: no iolab setting inherited, results and store inside `dir`.
    fn cmd(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_iolab"));
        c.args(args)
            .current_dir(&self.dir)
            .env_remove("IOLAB_DB")
            .env("IOLAB_RESULTS_DIR", self.dir.join("results"))
            .env("XDG_DATA_HOME", &self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(db) = &self.db {
            c.env("IOLAB_DB", db);
        }
        for (k, v) in env {
            c.env(k, v);
        }
        c
    }

    /// Runs a setup command that must succeed.
    fn setup(&self, args: &[&str]) {
        let out = self.cmd(args, &[]).output().expect("run iolab");
        assert_eq!(
            out.status.code(),
            Some(0),
            "setup {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// One test function's cases: counts what ran and what was skipped, collects failures.
struct Battery {
    name: &'static str,
    ran: usize,
    skipped: Vec<String>,
    failures: Vec<String>,
}

impl Battery {
    fn new(name: &'static str) -> Battery {
        Battery {
            name,
            ran: 0,
            skipped: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// A case (or a group of them) that cannot run here: says why.
    fn skip(&mut self, case: &str, why: &str) {
        println!("skipped: {case}: {why}");
        self.skipped.push(format!("{case} ({why})"));
    }

    /// Runs `iolab ARGS` (with `env`) in `ctx` and checks `expect` against `victims`.
    fn case(
        &mut self,
        name: &str,
        ctx: &Ctx,
        args: &[&str],
        env: &[(&str, &str)],
        victims: &[&Path],
        expect: Expect,
    ) {
        self.ran += 1;
        if let Err(e) = check(ctx, args, env, victims, expect) {
            println!("FAILED: {name}: {e}");
            self.failures
                .push(format!("{name}: iolab {}: {e}", args.join(" ")));
        }
    }

    fn refused(&mut self, name: &str, ctx: &Ctx, args: &[&str], victims: &[&Path], why: &[&str]) {
        self.case(name, ctx, args, &[], victims, Expect::Refused(why));
    }

    /// Prints the count and fails listing every failed case.
    fn finish(self) {
        println!(
            "{}: {} cases ran, {} skipped{}",
            self.name,
            self.ran,
            self.skipped.len(),
            if self.skipped.is_empty() {
                String::new()
            } else {
                format!(" ({})", self.skipped.join("; "))
            }
        );
        assert!(
            self.failures.is_empty(),
            "{}: {} of {} cases failed:\n{}",
            self.name,
            self.failures.len(),
            self.ran,
            self.failures.join("\n")
        );
    }
}

fn check(
    ctx: &Ctx,
    args: &[&str],
    env: &[(&str, &str)],
    victims: &[&Path],
    expect: Expect,
) -> Result<(), String> {
    let before: Vec<String> = victims
        .iter()
        .map(|v| sha256(v).map_err(|e| format!("hashing {}: {e}", v.display())))
        .collect::<Result<_, _>>()?;
    let out = ctx.cmd(args, env).output().map_err(|e| e.to_string())?;
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let all = format!("{}{err}", String::from_utf8_lossy(&out.stdout));
    let mut problems = Vec::new();
    let code = match expect {
        Expect::Refused(_) => 2,
        Expect::Allowed | Expect::Written | Expect::Noted(_) => 0,
    };
    if out.status.code() != Some(code) {
        problems.push(format!("exit {:?}, not {code}", out.status.code()));
    }
    // A refusal is said on standard error; a note may stand in the table on standard output.
    if let Expect::Refused(why) | Expect::Noted(why) = expect {
        let said = if matches!(expect, Expect::Refused(_)) {
            &err
        } else {
            &all
        };
        for w in why {
            if !said.contains(w) {
                problems.push(format!("the message does not say {w:?}"));
            }
        }
    }
    if all.contains("panicked") {
        problems.push("it panicked".into());
    }
    // Input text reaches the terminal escaped: no raw ESC from a hostile file.
    if all.contains('\u{1b}') {
        problems.push("an ESC byte reached the terminal".into());
    }
    for (i, (v, b)) in victims.iter().zip(&before).enumerate() {
        let after = sha256(v).map_err(|e| format!("hashing {} after: {e}", v.display()))?;
        let written = matches!(expect, Expect::Written) && i == 0;
        if written && after == *b {
            problems.push(format!("{} was not written", v.display()));
        } else if !written && after != *b {
            problems.push(format!(
                "{} changed (sha256 {} -> {})",
                v.display(),
                &b[..16],
                &after[..16]
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{}; output: {}",
            problems.join("; "),
            all.trim_end()
        ))
    }
}

/// `len` bytes of pseudo-random content (xorshift64*, fixed seed: the same bytes every run).
fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        v.extend_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    v.truncate(len);
    v
}

/// Writes `image` at the start of the device `dev`, through to the device.
fn fill_device(dev: &Path, image: &[u8]) -> Result<(), String> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(dev)
        .map_err(|e| format!("{}: {e}", dev.display()))?;
    f.write_all(image)
        .and_then(|_| f.sync_all())
        .map_err(|e| format!("writing {}: {e}", dev.display()))
}

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 path")
}

/// An ext4 without lazy initialisation (no background writes to change the device's bytes).
fn mkfs_ext4(dev: &Path) -> Result<String, String> {
    run(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "lazy_itable_init=0,lazy_journal_init=0",
            s(dev),
        ],
    )
}

/// Why the kernel cannot mount `fs` here, or `None`.
fn no_kernel_fs(fs: &str) -> Option<String> {
    let known = std::fs::read_to_string("/proc/filesystems").unwrap_or_default();
    (!known
        .lines()
        .any(|l| l.split_whitespace().last() == Some(fs)))
    .then(|| format!("the kernel has no {fs}"))
}

/// The first of `tools` not installed, as a skip reason.
fn missing(tools: &[&str]) -> Option<String> {
    tools
        .iter()
        .find(|t| !which(t))
        .map(|t| format!("{t} not installed"))
}

/// `iolab run TARGET`, writing 4 MiB in 1 MiB blocks.
fn write_args<'a>(target: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "run",
        target,
        "--access",
        "write",
        "--bs",
        "1m",
        "--size",
        "4m",
        "--no-probe",
    ];
    a.extend(extra);
    a
}

/// `iolab run TARGET`, reading 4 MiB in 1 MiB blocks.
fn read_args(target: &str) -> Vec<&str> {
    vec![
        "run",
        target,
        "--access",
        "read",
        "--bs",
        "1m",
        "--size",
        "4m",
        "--no-probe",
    ]
}

/// `iolab quick TARGET` at its shortest.
fn quick_args<'a>(target: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = vec![
        "quick",
        target,
        "--size",
        "4m",
        "--count",
        "1",
        "--duration",
        "0.1",
        "--warmup",
        "0",
        "--no-probe",
    ];
    a.extend(extra);
    a
}

// ---------------------------------------------------------------------------------------------
// A. Target side
// ---------------------------------------------------------------------------------------------

/// An 8 MiB image: pseudo-random bytes with `magic` written at `at`.
fn forged(at: u64, magic: &[u8]) -> Vec<u8> {
    let mut image = random_bytes(8 << 20, 0x1017_ab35);
    let at = at as usize;
    image[at..at + magic.len()].copy_from_slice(magic);
    image
}

/// An MBR with one Linux partition from sector 2048 over `sectors`.
fn with_mbr(mut image: Vec<u8>, sectors: u32) -> Vec<u8> {
    let entry = &mut image[446..462];
    entry.fill(0);
    entry[4] = 0x83;
    entry[8..12].copy_from_slice(&2048u32.to_le_bytes());
    entry[12..16].copy_from_slice(&sectors.to_le_bytes());
    image[462..510].fill(0);
    image[510] = 0x55;
    image[511] = 0xAA;
    image
}

#[test]
fn target_side_signatures_refuse_writes() {
    let mut b = Battery::new("target_side_signatures_refuse_writes");
    if let Some(why) = loop_skip_reason() {
        b.skip("every signature case", &why);
        return b.finish();
    }
    let _lock = MachineLock::take();
    let tmp = tempfile::tempdir().unwrap();
    let ctx = Ctx::new(tmp.path(), Some("db.sqlite"));
    std::fs::write(ctx.path("s.toml"), SUITE).unwrap();
    ctx.setup(&["trace", "synth", "--requests", "200", "-o", "t.csv"]);

    const MD_MAGIC: &[u8] = &[0xfc, 0x4e, 0x2b, 0xa9];
    let size: u64 = 8 << 20;
    let md090 = (size & !(64 * 1024 - 1)) - 64 * 1024;
    let mut uberblock = 0x00ba_b10c_u64.to_le_bytes().to_vec();
    uberblock.extend(5000u64.to_le_bytes());
    let mut fat = b"\xeb\x58\x90MSDOS5.0".to_vec();
    fat.resize(82, 0);
    fat.extend(b"FAT32   ");
    fat.resize(510, 0);
    fat.extend([0x55, 0xAA]);
    // (case, image, what the refusal names)
    let images: Vec<(&str, Vec<u8>, &str)> = vec![
        ("ext4", forged(1080, &[0x53, 0xEF]), "ext2/3/4 filesystem"),
        ("xfs", forged(0, b"XFSB"), "XFS filesystem"),
        ("btrfs", forged(0x10040, b"_BHRfS_M"), "btrfs filesystem"),
        ("FAT boot sector (bare)", forged(0, &fat), "boot sector"),
        ("LUKS", forged(0, b"LUKS\xba\xbe"), "LUKS encrypted volume"),
        ("LVM PV", forged(512, b"LABELONE"), "LVM physical volume"),
        (
            "MD RAID 1.2",
            forged(4096, MD_MAGIC),
            "MD RAID (v1.2) member",
        ),
        (
            "MD RAID 0.90",
            forged(md090, MD_MAGIC),
            "MD RAID (v0.90) member",
        ),
        ("swap", forged(4086, b"SWAPSPACE2"), "swap"),
        (
            "ZFS label",
            forged(133 * 1024, &uberblock),
            "ZFS pool member",
        ),
        ("GPT", forged(512, b"EFI PART"), "GPT partition table"),
        (
            "GPT backup header only",
            forged(size - 512, b"EFI PART"),
            "GPT partition table (backup header)",
        ),
        ("MBR", with_mbr(forged(0, b""), 4096), "MBR partition table"),
        ("NTFS", forged(3, b"NTFS    "), "NTFS filesystem"),
        ("F2FS", forged(1024, &[0x10, 0x20, 0xF5, 0xF2]), "F2FS"),
        ("ISO 9660", forged(32769, b"CD001"), "ISO 9660"),
        ("squashfs", forged(0, b"hsqs"), "squashfs"),
    ];
    for (what, image, expect) in &images {
        let dev = match LoopDevice::new(size) {
            Ok(d) => d,
            Err(e) => {
                b.skip(what, &e);
                continue;
            }
        };
        if let Err(e) = fill_device(&dev.path, image) {
            b.skip(what, &e);
            continue;
        }
        let d = s(&dev.path);
        let name = format!("a device with a forged {what} signature: run --access write");
        b.refused(
            &name,
            &ctx,
            &write_args(d, &[]),
            &[&dev.path],
            &["refusing to write", expect],
        );
        // The other writing commands on a few of them.
        if matches!(*what, "ext4" | "LUKS" | "MBR") {
            let name = format!("{what}: quick");
            b.refused(&name, &ctx, &quick_args(d, &[]), &[&dev.path], &[expect]);
            let name = format!("{what}: suite");
            let args = ["suite", "s.toml", d, "--no-probe"];
            b.refused(&name, &ctx, &args, &[&dev.path], &[expect]);
            let name = format!("{what}: trace replay");
            let args = ["trace", "replay", "t.csv", d, "--as-fast-as-possible"];
            b.refused(&name, &ctx, &args, &[&dev.path], &[expect]);
            let name = format!("{what}: run --overwrite (a file's flag, not a device's)");
            let args = write_args(d, &["--overwrite"]);
            b.refused(&name, &ctx, &args, &[&dev.path], &[expect]);
        }
        if *what == "ext4" {
            let link = ctx.path("ext4-link");
            std::os::unix::fs::symlink(&dev.path, &link).unwrap();
            let name = "a symbolic link to a device with a signature";
            b.refused(
                name,
                &ctx,
                &write_args(s(&link), &[]),
                &[&dev.path],
                &[expect],
            );
            let name = "read-only run on a device with a signature is allowed";
            b.case(
                name,
                &ctx,
                &read_args(d),
                &[],
                &[&dev.path],
                Expect::Allowed,
            );
            let name = "quick --read-only on a device with a signature is allowed";
            let args = quick_args(d, &["--read-only"]);
            b.case(name, &ctx, &args, &[], &[&dev.path], Expect::Allowed);
        }
    }

    // Signatures made by the real tools.
    let src = tempfile::tempdir().unwrap();
    let tools: Vec<(&str, &str, u64, String, &str)> = vec![
        (
            "mkfs.ext4",
            "ext4 made by mkfs.ext4",
            32 << 20,
            "mkfs.ext4 -q -F $DEV".into(),
            "ext2/3/4 filesystem",
        ),
        (
            "mkfs.xfs",
            "xfs made by mkfs.xfs",
            320 << 20,
            "mkfs.xfs -q -f $DEV".into(),
            "XFS filesystem",
        ),
        (
            "mkfs.btrfs",
            "btrfs made by mkfs.btrfs",
            160 << 20,
            "mkfs.btrfs -q -f $DEV".into(),
            "btrfs filesystem",
        ),
        (
            "mkfs.vfat",
            "vfat made by mkfs.vfat",
            64 << 20,
            "mkfs.vfat $DEV".into(),
            "vfat (FAT12/16/32) filesystem",
        ),
        (
            "cryptsetup",
            "LUKS2 made by cryptsetup",
            32 << 20,
            "printf pw | cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 \
             --pbkdf-force-iterations 1000 $DEV -"
                .into(),
            "LUKS",
        ),
        (
            "pvcreate",
            "LVM PV made by pvcreate",
            16 << 20,
            "pvcreate -ff -y -q $DEV".into(),
            "LVM physical volume",
        ),
        (
            "mdadm",
            "MD RAID member made by mdadm",
            32 << 20,
            "mdadm --create /dev/md/iolab-misuse --run --force --level=1 --raid-devices=1 \
             --metadata=1.2 $DEV; rc=$?; mdadm --stop /dev/md/iolab-misuse; exit $rc"
                .into(),
            "MD RAID",
        ),
        (
            "mkswap",
            "swap made by mkswap",
            16 << 20,
            "mkswap $DEV".into(),
            "swap",
        ),
        (
            "sgdisk",
            "GPT made by sgdisk",
            16 << 20,
            "sgdisk -o $DEV".into(),
            "GPT partition table",
        ),
        (
            "mksquashfs",
            "squashfs made by mksquashfs",
            16 << 20,
            format!("mksquashfs {} $DEV -noappend -quiet", src.path().display()),
            "squashfs",
        ),
    ];
    for (tool, what, size, script, expect) in tools {
        if let Some(why) = missing(&[tool]) {
            b.skip(what, &why);
            continue;
        }
        // Without the kernel's MD driver mdadm fails, leaving device nodes behind.
        if tool == "mdadm" && !Path::new("/proc/mdstat").exists() {
            b.skip(what, "the kernel has no MD RAID (no /proc/mdstat)");
            continue;
        }
        let dev = match LoopDevice::new(size) {
            Ok(d) => d,
            Err(e) => {
                b.skip(what, &e);
                continue;
            }
        };
        let made = Command::new("sh")
            .args(["-c", &script])
            .env("DEV", &dev.path)
            .output();
        match made {
            Ok(o) if o.status.success() => {}
            Ok(o) => {
                b.skip(
                    what,
                    &format!("{script}: {}", String::from_utf8_lossy(&o.stderr)),
                );
                continue;
            }
            Err(e) => {
                b.skip(what, &format!("{script}: {e}"));
                continue;
            }
        }
        let name = format!("a device with a {what}");
        b.refused(
            &name,
            &ctx,
            &write_args(s(&dev.path), &[]),
            &[&dev.path],
            &[expect],
        );
    }

    // zram with an ext4 on it.
    match zram_skip_reason().or_else(|| missing(&["mkfs.ext4"])) {
        Some(why) => b.skip("zram carrying ext4", &why),
        None => match Zram::new(32 << 20) {
            Err(e) => b.skip("zram carrying ext4", &e),
            Ok(z) => {
                if let Err(e) = mkfs_ext4(&z.path) {
                    b.skip("zram carrying ext4", &e);
                } else {
                    let d = s(&z.path);
                    b.refused(
                        "zram carrying ext4",
                        &ctx,
                        &write_args(d, &[]),
                        &[&z.path],
                        &["ext2/3/4 filesystem"],
                    );
                    let name = "zram carrying ext4: read-only run is allowed";
                    b.case(name, &ctx, &read_args(d), &[], &[&z.path], Expect::Allowed);
                }
            }
        },
    }
    b.finish();
}

#[test]
fn target_side_stacks_mounts_and_holders_refuse_writes() {
    let mut b = Battery::new("target_side_stacks_mounts_and_holders_refuse_writes");
    if let Some(why) = loop_skip_reason()
        .or_else(mount_skip_reason)
        .or_else(|| no_kernel_fs("ext4"))
    {
        b.skip("every stack and mount case", &why);
        return b.finish();
    }
    let _lock = MachineLock::take();
    let tmp = tempfile::tempdir().unwrap();
    let ctx = Ctx::new(tmp.path(), Some("db.sqlite"));
    std::fs::write(ctx.path("s.toml"), SUITE).unwrap();

    // A mounted ext4 (read-only, so its bytes stay put while mounted).
    let mounted = LoopDevice::new(32 << 20).unwrap();
    mkfs_ext4(&mounted.path).unwrap();
    let mount = Mount::existing(&mounted.path, "ext4", &["ro"]).unwrap();
    let m = s(&mounted.path);
    let destroy = format!("--destroy-data={m}");
    let v: &[&Path] = &[&mounted.path];
    b.refused(
        "a mounted device",
        &ctx,
        &write_args(m, &[]),
        v,
        &["mounted"],
    );
    let name = "a mounted device with --destroy-data naming it";
    b.refused(
        name,
        &ctx,
        &write_args(m, &[&destroy]),
        v,
        &["mounted", "does not override"],
    );
    let name = "a mounted device: quick with --destroy-data";
    b.refused(name, &ctx, &quick_args(m, &[&destroy]), v, &["mounted"]);
    let name = "a mounted device: suite with --destroy-data";
    let args = ["suite", "s.toml", m, "--no-probe", &destroy];
    b.refused(name, &ctx, &args, v, &["mounted"]);
    let link = ctx.path("mounted-link");
    std::os::unix::fs::symlink(&mounted.path, &link).unwrap();
    let name = "a symbolic link to a mounted device, with --destroy-data naming the link";
    let destroy_link = format!("--destroy-data={}", link.display());
    let args = write_args(s(&link), &[&destroy_link]);
    b.refused(name, &ctx, &args, v, &["mounted"]);
    let name = "read-only run on a mounted device is allowed";
    b.case(name, &ctx, &read_args(m), &[], v, Expect::Allowed);

    // A loop device over the same backing file as the mounted one.
    match AttachedLoop::new(&[s(mounted.backing_file())]) {
        Err(e) => b.skip("a loop device over a mounted one's backing file", &e),
        Ok(second) => {
            let p = s(&second.path);
            let name = "a loop device over the same backing file as a mounted one";
            let destroy = format!("--destroy-data={p}");
            b.refused(name, &ctx, &write_args(p, &[&destroy]), v, &["mounted"]);
        }
    }
    // The backing file of a mounted loop device, as a file target, even with --overwrite.
    let backing = mounted.backing_file();
    let name = "the backing file of a mounted loop device, with --overwrite";
    let args = write_args(s(backing), &["--overwrite"]);
    b.refused(name, &ctx, &args, &[backing], &["mounted at"]);

    // A loop device bound (not mounted) to a file, even with --overwrite.
    let bound = LoopDevice::new(16 << 20).unwrap();
    fill_device(&bound.path, &random_bytes(16 << 20, 7)).unwrap();
    let bf = bound.backing_file();
    // Bound to a loop device is the reason, before the file's not being iolab's.
    let name = "a file a loop device is bound to";
    b.refused(name, &ctx, &write_args(s(bf), &[]), &[bf], &["losetup -d"]);
    let name = "a file a loop device is bound to, with --overwrite";
    let args = write_args(s(bf), &["--overwrite"]);
    b.refused(name, &ctx, &args, &[bf], &["losetup -d"]);
    let name = "a file a loop device is bound to: quick --overwrite";
    let args = quick_args(s(bf), &["--overwrite"]);
    b.refused(name, &ctx, &args, &[bf], &["losetup -d"]);

    // Holders: a loop device stacked on a loop device.
    let under = LoopDevice::new(16 << 20).unwrap();
    fill_device(&under.path, &random_bytes(16 << 20, 11)).unwrap();
    match AttachedLoop::new(&[s(&under.path)]) {
        Err(e) => b.skip("a device under a loop device", &e),
        Ok(on) => {
            let name = "a device with a loop device stacked on it";
            let on_name = on.path.file_name().unwrap().to_str().unwrap().to_string();
            b.refused(
                name,
                &ctx,
                &write_args(s(&under.path), &[]),
                &[&under.path],
                &["in use by", &on_name],
            );
        }
    }
    // Holders: device-mapper over a loop device.
    let dm_name = format!("iolab-misuse-{}", std::process::id());
    match missing(&["dmsetup"]) {
        Some(why) => b.skip("a device under device-mapper", &why),
        None => match DmLinear::new(&dm_name, &under.path, 8192).or_else(|e| {
            // The device-mapper module may not be loaded yet.
            if Path::new("/dev/mapper/control").exists() || !which("modprobe") {
                return Err(e);
            }
            run("modprobe", &["dm_mod"])?;
            DmLinear::new(&dm_name, &under.path, 8192)
        }) {
            Err(e) => b.skip("a device under device-mapper", &e),
            Ok(_dm) => {
                let name = "a device under a device-mapper target (a holder)";
                b.refused(
                    name,
                    &ctx,
                    &write_args(s(&under.path), &[]),
                    &[&under.path],
                    &["in use by", "device-mapper"],
                );
            }
        },
    }

    // Partitions: an MBR with a partition, and a loop device on that partition.
    match missing(&["addpart"]) {
        Some(why) => b.skip("a partitioned device", &why),
        None => {
            let image = with_mbr(random_bytes(16 << 20, 13), 16384);
            match PartitionedLoop::with_image(&image, &[(2048, 16384)]) {
                Err(e) => b.skip("a partitioned device", &e),
                Ok(disk) => {
                    let p1 = disk.partition(1);
                    let dv: &[&Path] = &[&disk.path];
                    let d = s(&disk.path);
                    b.refused(
                        "a device with an MBR partition table",
                        &ctx,
                        &write_args(d, &[]),
                        dv,
                        &["partition"],
                    );
                    let name = "a partitioned device: quick";
                    b.refused(name, &ctx, &quick_args(d, &[]), dv, &["partition"]);
                    let name = "read-only run on a partitioned device is allowed";
                    b.case(name, &ctx, &read_args(d), &[], dv, Expect::Allowed);
                    match AttachedLoop::new(&[s(&p1)]) {
                        Err(e) => b.skip("a partition with a loop device on it", &e),
                        Ok(on) => {
                            let on_name =
                                on.path.file_name().unwrap().to_str().unwrap().to_string();
                            let name = "a partition with a loop device on it (its holder)";
                            b.refused(
                                name,
                                &ctx,
                                &write_args(s(&p1), &[]),
                                dv,
                                &["in use by", &on_name],
                            );
                            let name = "the disk of a partition with a loop device on it";
                            b.refused(name, &ctx, &write_args(d, &[]), dv, &["partition"]);
                        }
                    }
                }
            }
        }
    }

    // Held open exclusively by another process (this test).
    let excl = LoopDevice::new(16 << 20).unwrap();
    fill_device(&excl.path, &random_bytes(16 << 20, 17)).unwrap();
    match open_exclusive(&excl.path) {
        Err(e) => b.skip("a device held open O_EXCL", &e.to_string()),
        Ok(_held) => {
            let name = "a device another process holds open O_EXCL";
            b.refused(
                name,
                &ctx,
                &write_args(s(&excl.path), &[]),
                &[&excl.path],
                &["exclusively"],
            );
        }
    }

    // Active swap on a device, even with --destroy-data.
    match missing(&["mkswap", "swapon", "swapoff"]) {
        Some(why) => b.skip("active swap on a device", &why),
        None => {
            let dev = LoopDevice::new(16 << 20).unwrap();
            match SwapOn::new(&dev.path) {
                Err(e) => b.skip("active swap on a device", &e),
                Ok(_swap) => {
                    let p = s(&dev.path);
                    let destroy = format!("--destroy-data={p}");
                    let name = "a device that is active swap, with --destroy-data";
                    b.refused(
                        name,
                        &ctx,
                        &write_args(p, &[&destroy]),
                        &[&dev.path],
                        &["active swap"],
                    );
                }
            }
        }
    }
    drop(mount);
    b.finish();
}

#[test]
fn target_side_files_and_directories() {
    let mut b = Battery::new("target_side_files_and_directories");
    let tmp = tempfile::tempdir().unwrap();
    let ctx = Ctx::new(tmp.path(), Some("db.sqlite"));
    std::fs::write(ctx.path("s.toml"), SUITE).unwrap();
    ctx.setup(&["trace", "synth", "--requests", "200", "-o", "t.csv"]);
    let user = ctx.path("user.bin");
    std::fs::write(&user, random_bytes(4 << 20, 19)).unwrap();
    let u: &[&Path] = &[&user];
    let why: &[&str] = &["not created by iolab", "--overwrite"];
    b.refused(
        "a user file: run",
        &ctx,
        &write_args("user.bin", &[]),
        u,
        why,
    );
    let abs = user.to_str().unwrap();
    b.refused(
        "a user file by its absolute path: run",
        &ctx,
        &write_args(abs, &[]),
        u,
        why,
    );
    b.refused(
        "a user file: quick",
        &ctx,
        &quick_args("user.bin", &[]),
        u,
        why,
    );
    let args = ["suite", "s.toml", "user.bin", "--no-probe"];
    b.refused("a user file: suite", &ctx, &args, u, why);
    let args = [
        "trace",
        "replay",
        "t.csv",
        "user.bin",
        "--as-fast-as-possible",
        "--no-probe",
    ];
    b.refused("a user file: trace replay", &ctx, &args, u, why);
    std::os::unix::fs::symlink(&user, ctx.path("user-link.bin")).unwrap();
    let args = write_args("user-link.bin", &[]);
    b.refused("a symbolic link to a user file", &ctx, &args, u, why);
    let name = "a user file: read-only run is allowed";
    b.case(name, &ctx, &read_args("user.bin"), &[], u, Expect::Allowed);
    let name = "a user file: quick --read-only is allowed";
    let args = quick_args("user.bin", &["--read-only"]);
    b.case(name, &ctx, &args, &[], u, Expect::Allowed);

    std::fs::create_dir(ctx.path("dir")).unwrap();
    std::fs::write(ctx.path("dir/keep"), random_bytes(1000, 23)).unwrap();
    let keep = ctx.path("dir/keep");
    let dv: &[&Path] = &[&keep];
    let why: &[&str] = &["is a directory"];
    b.refused(
        "a directory as the target: run",
        &ctx,
        &write_args("dir", &[]),
        dv,
        why,
    );
    let args = write_args("dir", &["--overwrite"]);
    b.refused(
        "a directory as the target: run --overwrite",
        &ctx,
        &args,
        dv,
        why,
    );
    b.refused(
        "a directory as the target: quick",
        &ctx,
        &quick_args("dir", &[]),
        dv,
        why,
    );
    b.finish();
}

// ---------------------------------------------------------------------------------------------
// B. Outputs
// ---------------------------------------------------------------------------------------------

/// A directory with a results store (`db.sqlite`, `IOLAB_DB`) holding one run on `a.bin`, that
/// run's result `r.json`, a trace `t.csv`, a suite `s.toml`, and an unrelated user file
/// `user.txt` (random bytes iolab did not make).
fn output_ctx(tmp: &Path) -> Ctx {
    let ctx = Ctx::new(tmp, Some("db.sqlite"));
    ctx.setup(&write_args("a.bin", &[]));
    ctx.setup(&write_args("a.bin", &["--json", "r.json"]));
    ctx.setup(&["trace", "synth", "--requests", "200", "-o", "t.csv"]);
    std::fs::write(ctx.path("s.toml"), SUITE).unwrap();
    std::fs::write(ctx.path("user.txt"), random_bytes(5000, 29)).unwrap();
    ctx
}

/// Every command that writes a file, with the flag naming it, writing to `out`.
fn writers(out: &str) -> Vec<(String, Vec<String>, &'static str)> {
    let v = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    vec![
        (
            "run --json".into(),
            v(&write_args("a.bin", &["--json", out])),
            "--json",
        ),
        (
            "run on sim: --json".into(),
            v(&write_args(SIM, &["--json", out])),
            "--json",
        ),
        (
            "quick --json".into(),
            v(&quick_args("a.bin", &["--json", out])),
            "--json",
        ),
        (
            "suite --json".into(),
            v(&["suite", "s.toml", "a.bin", "--no-probe", "--json", out]),
            "--json",
        ),
        (
            "trace replay --json".into(),
            v(&[
                "trace",
                "replay",
                "t.csv",
                "a.bin",
                "--as-fast-as-possible",
                "--no-probe",
                "--json",
                out,
            ]),
            "--json",
        ),
        (
            "trace replay on sim: --json".into(),
            v(&[
                "trace",
                "replay",
                "t.csv",
                SIM,
                "--as-fast-as-possible",
                "--json",
                out,
            ]),
            "--json",
        ),
        (
            "report -o".into(),
            v(&["report", "r.json", "-o", out]),
            "-o",
        ),
        (
            "results export -o".into(),
            v(&["results", "export", "1", "-o", out]),
            "-o",
        ),
        (
            "trace synth -o".into(),
            v(&["trace", "synth", "--requests", "50", "-o", out]),
            "-o",
        ),
        (
            "trace convert -o".into(),
            v(&["trace", "convert", "t.csv", "--to", "msr", "-o", out]),
            "-o",
        ),
        (
            "trace analyze --html".into(),
            v(&["trace", "analyze", "t.csv", "--html", out]),
            "--html",
        ),
    ]
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn outputs_never_land_on_the_store_inputs_or_user_files() {
    let mut b = Battery::new("outputs_never_land_on_the_store_inputs_or_user_files");
    let tmp = tempfile::tempdir().unwrap();
    let ctx = output_ctx(tmp.path());
    let db = ctx.path("db.sqlite");
    let a = ctx.path("a.bin");
    let user = ctx.path("user.txt");
    std::os::unix::fs::symlink(&db, ctx.path("db-link")).unwrap();
    std::fs::hard_link(&db, ctx.path("db-hard")).unwrap();

    // The results store, as the output of every writer, and under every alias.
    for (what, args, flag) in writers("db.sqlite") {
        let name = format!("{what} naming the results store");
        // The store is the input of an export.
        let why = if what.starts_with("results export") {
            WHY_INPUT
        } else {
            WHY_STORE
        };
        b.refused(
            &name,
            &ctx,
            &strs(&args),
            &[&db, &a],
            &[flag, "db.sqlite", why],
        );
    }
    let abs = db.to_str().unwrap().to_string();
    for alias in ["./db.sqlite", abs.as_str(), "db-link", "db-hard"] {
        let name = format!("run --json naming the results store as {alias}");
        let args = write_args("a.bin", &["--json", alias]);
        b.refused(
            &name,
            &ctx,
            &args,
            &[&db, &a],
            &["--json", alias, WHY_STORE],
        );
    }
    let store_overwrite: [(&str, Vec<&str>, &str, &str); 3] = [
        (
            "run --json --overwrite",
            write_args("a.bin", &["--json", "db.sqlite", "--overwrite"]),
            "--json",
            "db.sqlite",
        ),
        (
            "report -o --overwrite",
            vec!["report", "r.json", "-o", "./db.sqlite", "--overwrite"],
            "-o",
            "./db.sqlite",
        ),
        (
            "trace synth -o --overwrite",
            vec![
                "trace",
                "synth",
                "--requests",
                "50",
                "-o",
                "db-link",
                "--overwrite",
            ],
            "-o",
            "db-link",
        ),
    ];
    for (what, args, flag, alias) in &store_overwrite {
        let name = format!("{what} naming the results store");
        b.refused(&name, &ctx, args, &[&db, &a], &[flag, alias, WHY_STORE]);
    }

    // An input of the command, under an alias, with --overwrite too.
    let r = ctx.path("r.json");
    let t = ctx.path("t.csv");
    let st = ctx.path("s.toml");
    std::fs::hard_link(&t, ctx.path("t-hard.csv")).unwrap();
    std::os::unix::fs::symlink(&a, ctx.path("a-link.bin")).unwrap();
    let a_abs = a.to_str().unwrap().to_string();
    let inputs: Vec<(&str, Vec<&str>, &Path, &str)> = vec![
        (
            "run --json naming its own target",
            write_args("a.bin", &["--json", "./a.bin", "--overwrite"]),
            &a,
            "--json",
        ),
        (
            "report -o naming its input",
            vec!["report", "r.json", "-o", "./r.json", "--overwrite"],
            &r,
            "-o",
        ),
        (
            "trace replay --json naming its trace",
            vec![
                "trace",
                "replay",
                "t.csv",
                "a.bin",
                "--as-fast-as-possible",
                "--no-probe",
                "--json",
                "./t.csv",
                "--overwrite",
            ],
            &t,
            "--json",
        ),
        (
            "suite --json naming its suite file",
            vec![
                "suite",
                "s.toml",
                "a.bin",
                "--no-probe",
                "--json",
                "./s.toml",
                "--overwrite",
            ],
            &st,
            "--json",
        ),
        (
            "trace convert -o naming its input",
            vec!["trace", "convert", "t.csv", "--to", "msr", "-o", "t.csv"],
            &t,
            "-o",
        ),
        (
            "trace convert -o naming a hard link to its input",
            vec![
                "trace",
                "convert",
                "t.csv",
                "--to",
                "msr",
                "-o",
                "t-hard.csv",
                "--overwrite",
            ],
            &t,
            "-o",
        ),
        (
            "trace analyze --html naming its input",
            vec!["trace", "analyze", "t.csv", "--html", "./t.csv"],
            &t,
            "--html",
        ),
        (
            "run --json naming a symbolic link to its own target",
            write_args("a.bin", &["--json", "a-link.bin", "--overwrite"]),
            &a,
            "--json",
        ),
        (
            "quick --json naming its own target by its absolute path",
            quick_args("a.bin", &["--json", &a_abs]),
            &a,
            "--json",
        ),
    ];
    for (name, args, victim, flag) in &inputs {
        b.refused(name, &ctx, args, &[victim, &db], &[flag, WHY_INPUT]);
    }

    // An existing user file iolab did not create: refused without --overwrite...
    for (what, args, flag) in writers("user.txt") {
        let name = format!("{what} naming an unrelated user file");
        b.refused(
            &name,
            &ctx,
            &strs(&args),
            &[&user, &db],
            &[flag, "user.txt", WHY_NOT_OURS, "--overwrite"],
        );
    }
    // ... and written with it (a fresh copy for each writer).
    for (i, (what, _, _)) in writers("x").into_iter().enumerate() {
        let copy = format!("user-{i}.txt");
        std::fs::write(ctx.path(&copy), random_bytes(5000, 31 + i as u64)).unwrap();
        let (_, mut args, _) = writers(&copy).swap_remove(i);
        args.push("--overwrite".into());
        let name = format!("{what} --overwrite naming an unrelated user file writes it");
        let victim = ctx.path(&copy);
        let failed = b.failures.len();
        b.case(&name, &ctx, &strs(&args), &[], &[&victim], Expect::Written);
        if b.failures.len() > failed {
            continue;
        }
        // Now iolab's (marked): written again without --overwrite.
        args.pop();
        let name = format!("{what} naming an output iolab wrote replaces it without --overwrite");
        b.case(&name, &ctx, &strs(&args), &[], &[], Expect::Allowed);
    }

    // A suite's HTML report beside its JSON: an unrelated notes.html survives.
    std::fs::write(ctx.path("notes.html"), random_bytes(3000, 37)).unwrap();
    let notes = ctx.path("notes.html");
    let args = [
        "suite",
        "s.toml",
        "a.bin",
        "--no-probe",
        "--json",
        "notes.json",
    ];
    b.refused(
        "suite --json notes.json with an unrelated notes.html beside it",
        &ctx,
        &args,
        &[&notes, &db],
        &["notes.html", WHY_NOT_OURS],
    );

    // The store opens only SQLite (or a new file).
    let json_db = ctx.path("r.json");
    let args = write_args("a.bin", &[]);
    let env = [("IOLAB_DB", json_db.to_str().unwrap())];
    b.case(
        "IOLAB_DB naming a JSON file",
        &ctx,
        &args,
        &env,
        &[&json_db],
        Expect::Refused(&["IOLAB_DB", WHY_NOT_SQLITE]),
    );
    let env = [("IOLAB_DB", user.to_str().unwrap())];
    b.case(
        "IOLAB_DB naming a user file",
        &ctx,
        &args,
        &env,
        &[&user],
        Expect::Refused(&["IOLAB_DB", WHY_NOT_SQLITE]),
    );
    let results_args = ["results", "list"];
    b.case(
        "results list with IOLAB_DB naming a user file",
        &ctx,
        &results_args,
        &env,
        &[&user],
        Expect::Refused(&["IOLAB_DB", WHY_NOT_SQLITE]),
    );
    let args_db = ["results", "list", "--db", "user.txt"];
    b.case(
        "results list --db naming a user file",
        &ctx,
        &args_db,
        &[],
        &[&user],
        Expect::Refused(&["--db", WHY_NOT_SQLITE]),
    );
    let args_db = ["results", "export", "1", "--db", "r.json"];
    b.case(
        "results export --db naming a JSON result",
        &ctx,
        &args_db,
        &[],
        &[&r],
        Expect::Refused(&["--db", WHY_NOT_SQLITE]),
    );
    std::fs::create_dir(ctx.path("db-dir")).unwrap();
    let env_dir = [("IOLAB_DB", "db-dir")];
    b.case(
        "IOLAB_DB naming a directory",
        &ctx,
        &args,
        &env_dir,
        &[&db],
        Expect::Refused(&["IOLAB_DB", "directory"]),
    );
    // An empty file, or none yet, becomes a new store.
    std::fs::write(ctx.path("empty.sqlite"), b"").unwrap();
    for (what, store) in [
        ("an empty file", "empty.sqlite"),
        ("a new file", "new.sqlite"),
    ] {
        let env_new = [("IOLAB_DB", store)];
        let name = format!("IOLAB_DB naming {what} is allowed");
        b.case(&name, &ctx, &args, &env_new, &[&db], Expect::Allowed);
    }
    let env = [("IOLAB_RESULTS_DIR", user.to_str().unwrap())];
    let ctx_nodb = Ctx::new(tmp.path(), None);
    b.case(
        "IOLAB_RESULTS_DIR naming a user file",
        &ctx_nodb,
        &args,
        &env,
        &[&user],
        Expect::Refused(&["IOLAB_RESULTS_DIR", WHY_NOT_DIR]),
    );

    // A directory is no output file.
    std::fs::create_dir(ctx.path("outdir")).unwrap();
    let args = write_args("a.bin", &["--json", "outdir"]);
    b.refused(
        "run --json naming a directory",
        &ctx,
        &args,
        &[&db, &a],
        &["--json", "directory"],
    );

    // /dev/null takes any output; other character devices do not.
    let args = write_args("a.bin", &["--json", "/dev/null"]);
    b.case(
        "run --json /dev/null is allowed",
        &ctx,
        &args,
        &[],
        &[],
        Expect::Allowed,
    );
    let args = [
        "trace",
        "convert",
        "t.csv",
        "--to",
        "msr",
        "-o",
        "/dev/null",
    ];
    b.case(
        "trace convert -o /dev/null is allowed",
        &ctx,
        &args,
        &[],
        &[&t],
        Expect::Allowed,
    );
    let args = write_args("a.bin", &["--json", "/dev/zero"]);
    b.refused(
        "run --json /dev/zero (a character device)",
        &ctx,
        &args,
        &[&db],
        &["--json", "/dev/zero", WHY_CHAR],
    );
    let args = ["report", "r.json", "-o", "/dev/full"];
    b.refused(
        "report -o /dev/full (a character device)",
        &ctx,
        &args,
        &[&db, &r],
        &["-o", "/dev/full", WHY_CHAR],
    );
    // Every write went through a temporary file renamed into place; none is left behind.
    b.ran += 1;
    let left: Vec<String> = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("tmp"))
        .collect();
    if !left.is_empty() {
        b.failures
            .push(format!("temporary files left behind: {left:?}"));
    }
    b.finish();
}

#[test]
fn outputs_never_land_on_devices_loop_backed_files_mount_points_or_swap() {
    let mut b =
        Battery::new("outputs_never_land_on_devices_loop_backed_files_mount_points_or_swap");
    if let Some(why) = loop_skip_reason()
        .or_else(mount_skip_reason)
        .or_else(|| no_kernel_fs("ext4"))
    {
        b.skip("every device output case", &why);
        return b.finish();
    }
    let _lock = MachineLock::take();
    let tmp = tempfile::tempdir().unwrap();
    let ctx = output_ctx(tmp.path());
    let db = ctx.path("db.sqlite");

    // A mounted ext4 on a loop device, as an output and as the store.
    let dev = LoopDevice::new(32 << 20).unwrap();
    mkfs_ext4(&dev.path).unwrap();
    let mount = Mount::existing(&dev.path, "ext4", &["ro"]).unwrap();
    let d = s(&dev.path);
    for (what, args, flag) in writers(d) {
        let name = format!("{what} naming a mounted ext4's block device");
        b.refused(
            &name,
            &ctx,
            &strs(&args),
            &[&dev.path, &db],
            &[flag, d, WHY_BLOCK],
        );
    }
    let args = write_args("a.bin", &["--json", d, "--overwrite"]);
    b.refused(
        "run --json a block device, with --overwrite",
        &ctx,
        &args,
        &[&dev.path, &db],
        &["--json", d, WHY_BLOCK],
    );
    let link = ctx.path("dev-link");
    std::os::unix::fs::symlink(&dev.path, &link).unwrap();
    let args = write_args("a.bin", &["--json", "dev-link"]);
    b.refused(
        "run --json a symbolic link to a block device",
        &ctx,
        &args,
        &[&dev.path, &db],
        &["--json", WHY_BLOCK],
    );
    let args = write_args("a.bin", &[]);
    let env = [("IOLAB_DB", d)];
    b.case(
        "IOLAB_DB naming a mounted ext4's block device",
        &ctx,
        &args,
        &env,
        &[&dev.path],
        Expect::Refused(&["IOLAB_DB", d, WHY_BLOCK]),
    );
    b.case(
        "results list with IOLAB_DB naming a mounted ext4's block device",
        &ctx,
        &["results", "list"],
        &env,
        &[&dev.path],
        Expect::Refused(&["IOLAB_DB", d, WHY_BLOCK]),
    );
    let env = [("IOLAB_DB", "dev-link")];
    b.case(
        "IOLAB_DB naming a symbolic link to a block device",
        &ctx,
        &args,
        &env,
        &[&dev.path],
        Expect::Refused(&["IOLAB_DB", WHY_BLOCK]),
    );
    let env = [("IOLAB_RESULTS_DIR", d)];
    let ctx_nodb = Ctx::new(tmp.path(), None);
    b.case(
        "IOLAB_RESULTS_DIR naming a block device",
        &ctx_nodb,
        &args,
        &env,
        &[&dev.path],
        Expect::Refused(&["IOLAB_RESULTS_DIR", WHY_NOT_DIR]),
    );

    // The backing file of the mounted loop device, and of a bound (unmounted) one.
    let backing = dev.backing_file();
    let bf = s(backing);
    for (what, args, flag) in writers(bf) {
        let name = format!("{what} naming the backing file of a mounted loop device");
        b.refused(
            &name,
            &ctx,
            &strs(&args),
            &[backing, &db],
            &[flag, &dev.name()],
        );
    }
    let args = write_args("a.bin", &["--json", bf, "--overwrite"]);
    b.refused(
        "run --json --overwrite naming a mounted loop device's backing file",
        &ctx,
        &args,
        &[backing, &db],
        &["--json", &dev.name()],
    );
    let bound = LoopDevice::new(8 << 20).unwrap();
    fill_device(&bound.path, &random_bytes(8 << 20, 41)).unwrap();
    let bb = bound.backing_file();
    let args = ["report", "r.json", "-o", s(bb), "--overwrite"];
    b.refused(
        "report -o --overwrite naming a loop-bound file",
        &ctx,
        &args,
        &[bb, &db],
        &["-o", &bound.name()],
    );
    let args = write_args("a.bin", &[]);
    let env = [("IOLAB_DB", s(bb))];
    b.case(
        "IOLAB_DB naming a loop-bound file",
        &ctx,
        &args,
        &env,
        &[bb],
        Expect::Refused(&["IOLAB_DB", &bound.name()]),
    );

    // A mount point: a file bind-mounted over another.
    let over = ctx.path("mnt.json");
    let src = ctx.path("mnt-src.json");
    std::fs::write(&over, random_bytes(2000, 43)).unwrap();
    std::fs::write(&src, random_bytes(2000, 47)).unwrap();
    match BindMount::new(&src, &over) {
        Err(e) => b.skip("a bind-mounted file as an output", &e),
        Ok(_bind) => {
            for (what, args) in [
                (
                    "run --json --overwrite",
                    write_args("a.bin", &["--json", "mnt.json", "--overwrite"]),
                ),
                (
                    "results export -o --overwrite",
                    vec!["results", "export", "1", "-o", "mnt.json", "--overwrite"],
                ),
            ] {
                let name = format!("{what} naming a mount point (a bind-mounted file)");
                b.refused(&name, &ctx, &args, &[&src, &db], &["mnt.json", WHY_MOUNT]);
            }
        }
    }

    // An active swap file (on an ext4 of its own: not every filesystem takes swap files).
    match missing(&["mkswap", "swapon", "swapoff"]) {
        Some(why) => b.skip("an active swap file as an output", &why),
        None => {
            let sdev = LoopDevice::new(64 << 20).unwrap();
            let fs = Mount::ext4(&sdev.path).unwrap();
            let swapfile = fs.dir.join("sw.img");
            std::fs::write(&swapfile, vec![0u8; 8 << 20]).unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&swapfile, std::fs::Permissions::from_mode(0o600)).unwrap();
            match SwapOn::new(&swapfile) {
                Err(e) => b.skip("an active swap file as an output", &e),
                Ok(_swap) => {
                    let sf = s(&swapfile);
                    for (what, args) in [
                        (
                            "run --json --overwrite",
                            write_args("a.bin", &["--json", sf, "--overwrite"]),
                        ),
                        (
                            "trace convert -o --overwrite",
                            vec![
                                "trace",
                                "convert",
                                "t.csv",
                                "--to",
                                "msr",
                                "-o",
                                sf,
                                "--overwrite",
                            ],
                        ),
                    ] {
                        let name = format!("{what} naming an active swap file");
                        b.refused(&name, &ctx, &args, &[&swapfile, &db], &[WHY_SWAP]);
                    }
                    // The target side: the same file as the run's target.
                    let name = "an active swap file as the target, with --overwrite";
                    let args = write_args(sf, &["--overwrite"]);
                    b.refused(name, &ctx, &args, &[&swapfile, &db], &[WHY_SWAP]);
                }
            }
        }
    }
    drop(mount);
    b.finish();
}

/// Hostile and misleading trace input: refused naming the file (and line) and what to do, or
/// replayed with a note of every adjustment, never silently misread; the trace itself is
/// never written.
#[test]
fn trace_input_cannot_be_misread() {
    let tmp = tempfile::tempdir().unwrap();
    let ctx = Ctx::new(tmp.path(), Some("db.sqlite"));
    let mut b = Battery::new("trace_input_cannot_be_misread");
    let write = |name: &str, bytes: &[u8]| {
        std::fs::write(ctx.path(name), bytes).unwrap();
        ctx.path(name)
    };
    let msr = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/traces/msr_hm_0_first1000.csv"),
    )
    .unwrap();
    let plain = write("hm.csv", &msr);

    let bad = write("bad.csv", b"garbage line\nmore junk\n");
    b.refused(
        "--skip-bad on a file with no valid line",
        &ctx,
        &[
            "trace",
            "analyze",
            "bad.csv",
            "--format",
            "msr",
            "--skip-bad",
        ],
        &[&bad],
        &["bad.csv", "no valid msr record"],
    );
    let huge = write(
        "huge.csv",
        b"128166385295514663,hm,0,Read,0,18446744073709551615,2833\n",
    );
    b.refused(
        "a size of 2^64-1",
        &ctx,
        &["trace", "analyze", "huge.csv"],
        &[&huge],
        &["huge.csv:1", "longer than any block request"],
    );
    b.refused(
        "an endless line (analyze --format msr /dev/zero)",
        &ctx,
        &["trace", "analyze", "--format", "msr", "/dev/zero"],
        &[],
        &["line longer than 16 MiB"],
    );
    let classic = write("classic.trace", b"0.345000 0 1000 8 1\n12.5 0 2000 8 0\n");
    b.refused(
        "DiskSim ASCII, whose time unit is not told by its shape",
        &ctx,
        &["trace", "analyze", "classic.trace"],
        &[&classic],
        &["--format disksim (ms) or --format mqsim (ns)"],
    );
    let esc = write(
        "esc.csv",
        b"128166385295514663,h\x1b[31mred\x1b]0;owned\x07,0,Bogus,0,4096,2833\n",
    );
    b.refused(
        "control bytes quoted from the input",
        &ctx,
        &["trace", "analyze", "esc.csv"],
        &[&esc],
        &["esc.csv", "\\x1b[31m"],
    );
    let zip = write("t.zip", b"PK\x03\x04rest of a zip archive");
    b.refused(
        "an archive, not a compressed stream",
        &ctx,
        &["trace", "analyze", "t.zip"],
        &[&zip],
        &["t.zip", "zip"],
    );

    // Compressed traces read as the plain one; cut short, each says so.
    for (tool, ext, flags) in [
        ("gzip", "gz", &["-c"][..]),
        ("bzip2", "bz2", &["-c"][..]),
        ("xz", "xz", &["-c"][..]),
        ("zstd", "zst", &["-q", "-c"][..]),
    ] {
        if let Some(why) = missing(&[tool]) {
            b.skip(&format!("{tool}-compressed traces"), &why);
            continue;
        }
        let out = Command::new(tool).args(flags).arg(&plain).output().unwrap();
        assert!(out.status.success(), "{tool}: {out:?}");
        let whole = write(&format!("hm.csv.{ext}"), &out.stdout);
        let name = format!("hm.csv.{ext}");
        b.case(
            &format!("a {tool}-compressed trace"),
            &ctx,
            &["trace", "analyze", &name],
            &[],
            &[&whole],
            Expect::Noted(&[]),
        );
        let cut = write(
            &format!("cut.csv.{ext}"),
            &out.stdout[..out.stdout.len() / 2],
        );
        let cut_name = format!("cut.csv.{ext}");
        b.refused(
            &format!("a truncated {tool}-compressed trace"),
            &ctx,
            &["trace", "analyze", &cut_name],
            &[&cut],
            &[&cut_name, "truncated", tool],
        );
    }

    // Replay: what does not fit is refused, what is adjusted is said.
    let big = write(
        "big.csv",
        b"128166385295514663,hm,0,Read,0,536870912,2833\n",
    );
    b.refused(
        "a request larger than the target",
        &ctx,
        &["trace", "replay", "big.csv", "t.bin", "--size", "256m"],
        &[&big],
        &["big.csv:1", "larger than the target"],
    );
    let far = write(
        "far.csv",
        b"128166385295514663,hm,0,Read,10737418240,4096,2833\n\
          128166385295524663,hm,0,Read,0,4096,2833\n",
    );
    b.case(
        "offsets beyond the target",
        &ctx,
        &["trace", "replay", "far.csv", "t.bin", "--size", "256m"],
        &[],
        &[&far],
        Expect::Noted(&["the trace reaches 10.0 GiB and the target holds 256 MiB"]),
    );
    // Tencent CBS: whole-second timestamps, and four volumes onto one target.
    let mut cbs = String::new();
    for i in 0..40u64 {
        cbs += &format!("{},{},8,0,{}\n", 1_538_323_200 + i / 10, i * 64, i % 4);
    }
    let cbs = write("cbs.csv", cbs.as_bytes());
    b.case(
        "coarse timestamps and merged volumes",
        &ctx,
        &["trace", "replay", "cbs.csv", SIM],
        &[],
        &[&cbs],
        Expect::Noted(&[
            "timestamps are in steps of 1 s",
            "4 volumes (devices) were replayed onto this one target",
        ]),
    );
    b.finish();
}
