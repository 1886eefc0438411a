//! trimcheck and probe on loop devices this test builds and removes.
//!
//! * WORKING: ext4 on a loop device over a sparse file. The loop driver turns discards into
//!   hole punches in the backing file, so the trimmed block reads back as zeroes.
//! * NOT WORKING: the same, with `queue/discard_max_bytes` set to 0 on the loop device (the knob
//!   udev rules use to turn discards off for a misbehaving drive). The block layer then reports
//!   no discard support, FITRIM fails with EOPNOTSUPP, and the deleted block really stays on the
//!   device — the "TRIM does not reach the drive" case of a stack that drops discards (like
//!   dm-crypt without `allow_discards`). Kernel 6.x keeps that user limit after the loop device
//!   is detached and refuses to raise it again (the granularity check fails once discards are
//!   off), so cleanup removes and re-creates the loop device through `/dev/loop-control`.
//! * tmpfs: a refusal, with the reason, and nothing written.
//!
//! One test function, holding a file lock, because loop devices are a machine-wide resource that
//! other test suites use too. Everything is torn down by Drop guards, even on failure.

use iolab_probe::{probe, trimcheck, DeviceKind, TrimError, TrimOptions, Verdict};
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const LOCK: &str = "/tmp/iolab-loopdev.lock";

/// A crude cross-process lock: a file created exclusively, holding our pid; stale locks of dead
/// processes are taken over.
struct Lock;

impl Lock {
    fn take() -> Lock {
        let deadline = Instant::now() + Duration::from_secs(600);
        loop {
            match OpenOptions::new().write(true).create_new(true).open(LOCK) {
                Ok(mut f) => {
                    let _ = write!(f, "{}", std::process::id());
                    return Lock;
                }
                Err(_) => {
                    let holder = fs::read_to_string(LOCK).unwrap_or_default();
                    let alive = holder
                        .trim()
                        .parse::<u32>()
                        .is_ok_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
                    if !alive && !holder.is_empty() {
                        let _ = fs::remove_file(LOCK);
                        continue;
                    }
                    assert!(
                        Instant::now() < deadline,
                        "loop-device lock {LOCK} held too long"
                    );
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(LOCK);
    }
}

fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(format!(
            "{cmd} {args:?}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// A mounted filesystem (ext4 on a fresh loop device, or a tmpfs); unmounted and detached on drop.
struct Mounted {
    _dir: tempfile::TempDir,
    mnt: PathBuf,
    loopdev: Option<String>,
    mounted: bool,
    discard_off: bool,
}

impl Mounted {
    fn ext4(size_mib: u64, discard_off: bool) -> Result<Mounted, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let img = dir.path().join("disk.img");
        let f = fs::File::create(&img).map_err(|e| e.to_string())?;
        f.set_len(size_mib << 20).map_err(|e| e.to_string())?;
        let mnt = dir.path().join("mnt");
        fs::create_dir(&mnt).map_err(|e| e.to_string())?;
        let mut m = Mounted {
            _dir: dir,
            mnt,
            loopdev: None,
            mounted: false,
            discard_off,
        };
        let dev = run("losetup", &["-f", "--show", img.to_str().unwrap()])?;
        m.loopdev = Some(dev.clone());
        if discard_off {
            set_discard_limit(&dev, "0")?;
        }
        run("mkfs.ext4", &["-q", "-F", &dev])?;
        run("mount", &[&dev, m.mnt.to_str().unwrap()])?;
        m.mounted = true;
        Ok(m)
    }

    fn tmpfs() -> Result<Mounted, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mnt = dir.path().join("mnt");
        fs::create_dir(&mnt).map_err(|e| e.to_string())?;
        let mut m = Mounted {
            _dir: dir,
            mnt,
            loopdev: None,
            mounted: false,
            discard_off: false,
        };
        run(
            "mount",
            &[
                "-t",
                "tmpfs",
                "-o",
                "size=16m",
                "iolab-test",
                m.mnt.to_str().unwrap(),
            ],
        )?;
        m.mounted = true;
        Ok(m)
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if self.mounted {
            for _ in 0..10 {
                if run("umount", &[self.mnt.to_str().unwrap()]).is_ok() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        if let Some(dev) = &self.loopdev {
            if let Err(e) = run("losetup", &["-d", dev]) {
                eprintln!("cleanup: {e}");
            } else if self.discard_off {
                if let Err(e) = recreate_loop(dev) {
                    eprintln!("cleanup: could not re-create {dev} (discards stay off on it): {e}");
                }
            }
        }
    }
}

fn set_discard_limit(dev: &str, bytes: &str) -> Result<(), String> {
    let name = dev.trim_start_matches("/dev/");
    fs::write(format!("/sys/block/{name}/queue/discard_max_bytes"), bytes)
        .map_err(|e| format!("setting discard_max_bytes={bytes} on {dev}: {e}"))
}

/// Removes the detached loop device and adds it back, so the next user gets fresh queue limits.
fn recreate_loop(dev: &str) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    const LOOP_CTL_ADD: libc::c_ulong = 0x4C80;
    const LOOP_CTL_REMOVE: libc::c_ulong = 0x4C81;
    let n: libc::c_ulong = dev
        .trim_start_matches("/dev/loop")
        .parse()
        .map_err(|_| std::io::Error::other(format!("{dev} is not a loop device name")))?;
    let ctl = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/loop-control")?;
    for req in [LOOP_CTL_REMOVE, LOOP_CTL_ADD] {
        // SAFETY: loop-control ioctls take the device number by value; `ctl` is open for the
        // call. REMOVE fails with EBUSY (harmlessly) if someone has bound the device meanwhile.
        if unsafe { libc::ioctl(ctl.as_raw_fd(), req as _, n) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn skip_reason() -> Option<String> {
    if !fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(1) == Some("0"))
    {
        return Some("not root".into());
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control".into());
    }
    for tool in ["losetup", "mkfs.ext4", "mount", "umount"] {
        if run("sh", &["-c", &format!("command -v {tool}")]).is_err() {
            return Some(format!("{tool} not installed"));
        }
    }
    None
}

#[test]
fn loop_devices_probe_and_trimcheck() {
    if let Some(why) = skip_reason() {
        println!("skipped: {why}");
        return;
    }
    let _lock = Lock::take();
    let opts = TrimOptions::default();

    // Probe and WORKING.
    let m = Mounted::ext4(256, false).expect("ext4 on a loop device");
    let dev = m.loopdev.clone().unwrap();
    let p = probe(Path::new(&dev)).unwrap();
    println!("{}", p.render_text());
    let d = p.disk.as_ref().unwrap();
    assert_eq!(d.kind, DeviceKind::Loop);
    assert_eq!(format!("/dev/{}", d.name), dev);
    assert_eq!(d.capacity_bytes, Some(256 << 20));
    assert!(d
        .virt
        .as_ref()
        .unwrap()
        .backing_file
        .as_deref()
        .unwrap()
        .ends_with("disk.img"));
    assert_eq!(d.discard.supported, Some(true));
    assert!(p.ceiling.is_none() && p.pci_path.is_empty());
    assert_eq!(p.filesystem.as_ref().unwrap().fs_type, "ext4");
    let pf = probe(&m.mnt).unwrap();
    assert_eq!(
        pf.filesystem.as_ref().unwrap().mount_point,
        m.mnt.canonicalize().unwrap()
    );
    assert_eq!(pf.disk.as_ref().unwrap().name, d.name);
    println!("summary: {}", pf.summary());

    let r = trimcheck(&m.mnt, &opts).expect("trimcheck runs on ext4/loop");
    println!("{r:#?}");
    assert_eq!(r.verdict, Verdict::Working, "{}", r.reason);
    assert_eq!(r.device, PathBuf::from(&dev));
    assert!(r.fitrim_trimmed_bytes.unwrap_or(0) > 0);
    assert!(fs::read_dir(&m.mnt).unwrap().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .starts_with(".iolab-trimcheck")));
    drop(m);

    // NOT WORKING: discards dropped by the device's queue.
    let m = Mounted::ext4(256, true).expect("ext4 on a loop device without discard");
    let p = probe(&m.mnt).unwrap();
    assert_eq!(p.disk.as_ref().unwrap().discard.supported, Some(false));
    let r = trimcheck(
        &m.mnt,
        &TrimOptions {
            wait: Some(Duration::from_secs(1)),
            ..opts.clone()
        },
    )
    .expect("trimcheck runs");
    println!("{r:#?}");
    assert_eq!(r.verdict, Verdict::NotWorking, "{}", r.reason);
    assert!(r.fitrim_error.is_some());
    assert_eq!(r.readings.len(), 2, "waited and read again");
    assert!(r.notes.iter().any(|n| n.contains("no discard support")));
    drop(m);

    // tmpfs: refused before anything is written.
    let m = Mounted::tmpfs().expect("a tmpfs");
    match trimcheck(&m.mnt, &opts) {
        Err(TrimError::Unsupported { reason, .. }) => {
            println!("tmpfs refusal: {reason}");
            assert!(reason.contains("memory-backed"), "{reason}");
        }
        other => panic!("expected a refusal on tmpfs, got {other:?}"),
    }
    assert_eq!(fs::read_dir(&m.mnt).unwrap().count(), 0);
}
