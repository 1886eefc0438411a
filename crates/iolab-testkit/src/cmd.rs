//! Running external tools.

use std::path::Path;
use std::process::Command;

/// Runs a command; `Ok(stdout trimmed)` on success, else `Err("cmd [args]: stderr")`.
pub fn run(cmd: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("{cmd} {args:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
        let err = if err.is_empty() {
            format!("exited with {}", out.status)
        } else {
            err
        };
        Err(format!("{cmd} {args:?}: {err}"))
    }
}

/// Whether `tool` is an executable on `PATH` (or in `/sbin`, `/usr/sbin`, which a non-login
/// root shell may lack on its `PATH`).
pub fn which(tool: &str) -> bool {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/sbin", "/usr/sbin", "/bin", "/usr/bin"].map(Into::into))
        .any(|dir| is_executable(&dir.join(tool)))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether this process runs as root (effective uid 0).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The first of `tools` not installed, as a skip reason.
pub(crate) fn missing_tool(tools: &[&str]) -> Option<String> {
    tools
        .iter()
        .find(|t| !which(t))
        .map(|t| format!("{t} not installed"))
}

/// Opens the block device `dev` exclusively (`O_EXCL`), as a mounted filesystem or a RAID
/// holds its members: until the file is dropped, other exclusive opens fail with `EBUSY`.
pub fn open_exclusive(dev: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL)
        .open(dev)
}
