//! fio's I/O priorities (`prio`, `prioclass`, `priohint`, `cmdprio_percentage`,
//! `cmdprio_class`, `cmdprio`, `cmdprio_hint`, `cmdprio_bssplit`) onto iolab's `io_priority`
//! key: the job's default priority, and shares of reads and writes, by block size, at others.
//! fio takes them on its io_uring and libaio engines; iolab's io_uring engine sets each
//! request's priority, its psync engine the thread's before each I/O whose priority differs.

use super::translate::Tr;
use super::units;
use iolab_core::prio::IoPriority;

/// Translates the priority options; `reads` and `writes` say what the job does.
pub(super) fn priority(tr: &mut Tr, reads: bool, writes: bool) {
    let mut p = IoPriority::default();
    let level = tr.number::<u8>("prio");
    let class = tr.number::<u16>("prioclass");
    let hint = tr.number::<u16>("priohint");
    if level.is_some() || class.is_some() || hint.is_some() {
        // fio's class for a level given alone is best effort; its level default is 0.
        p.class = Some(class.unwrap_or(2).to_string());
        p.level = Some(level.unwrap_or(0));
        p.hint = hint;
        tr.from(
            "io_priority",
            if class.is_some() { "prioclass" } else { "prio" },
        );
    }
    let split = tr.o.get("cmdprio_bssplit").is_some();
    let pct = tr.o.get("cmdprio_percentage").is_some();
    if split && pct {
        tr.problem(
            "cmdprio_percentage",
            "fio takes cmdprio_percentage or cmdprio_bssplit, not both",
        );
        return;
    }
    for (i, wanted) in [(0, reads), (1, writes)] {
        let shares = match (split || pct, wanted) {
            (true, true) => shares(tr, i, split),
            _ => continue,
        };
        match shares {
            Ok(s) if s.is_empty() => {}
            Ok(s) if i == 0 => p.read = Some(s),
            Ok(s) => p.write = Some(s),
            Err((key, why)) => {
                tr.problem(key, why);
                return;
            }
        }
    }
    if p == IoPriority::default() {
        for key in ["cmdprio_class", "cmdprio", "cmdprio_hint"] {
            tr.note(
                key,
                "no effect without cmdprio_percentage or cmdprio_bssplit",
            );
        }
        return;
    }
    if let Err(e) = p.priorities() {
        // Named by what is wrong: the default's class, level or hint, else the shares'.
        let default = IoPriority {
            read: None,
            write: None,
            ..p.clone()
        };
        let key = match (default.priorities().is_err(), e.split(' ').next()) {
            (true, Some("class")) => "prioclass",
            (true, Some("level")) => "prio",
            (true, _) => "priohint",
            (false, _) if split => "cmdprio_bssplit",
            (false, Some("class")) => "cmdprio_class",
            (false, Some("level")) => "cmdprio",
            (false, Some("hint")) => "cmdprio_hint",
            (false, _) => "cmdprio_percentage",
        };
        tr.problem(key, e);
        return;
    }
    tr.from(
        "io_priority",
        if split {
            "cmdprio_bssplit"
        } else {
            "cmdprio_percentage"
        },
    );
    tr.job.spec.io_priority = Some(p);
}

/// The shares of direction `i` (0 reads, 1 writes) in iolab's form, or the option at fault.
fn shares(tr: &mut Tr, i: usize, split: bool) -> Result<String, (&'static str, String)> {
    let side = |tr: &Tr, key: &str| -> Option<String> {
        let v = tr.o.value(key)?;
        let (r, w) = units::read_write(v);
        // A single value applies to reads and writes.
        let picked = if i == 0 { r } else { w.or(r) };
        picked.map(str::to_string)
    };
    let class = side(tr, "cmdprio_class").unwrap_or_else(|| "1".into());
    let level = side(tr, "cmdprio").unwrap_or_else(|| "0".into());
    let hint = side(tr, "cmdprio_hint").unwrap_or_else(|| "0".into());
    if !split {
        let pct = side(tr, "cmdprio_percentage").unwrap_or_default();
        return match pct.trim().parse::<f64>() {
            Ok(0.0) => Ok(String::new()),
            Ok(p) if (0.0..=100.0).contains(&p) => Ok(format!("*/{p}/{class}/{level}/{hint}")),
            _ => Err(("cmdprio_percentage", format!("'{pct}' is not a percentage"))),
        };
    }
    let text = side(tr, "cmdprio_bssplit").unwrap_or_default();
    let mut out = Vec::new();
    for entry in text.split(':').map(str::trim).filter(|e| !e.is_empty()) {
        let f: Vec<&str> = entry.split('/').collect();
        let bs = units::size(f[0], tr.o.kb_base).map_err(|e| ("cmdprio_bssplit", e))?;
        let pct = f.get(1).copied().unwrap_or("");
        if pct.trim().parse::<f64>().is_ok_and(|p| p == 0.0) {
            continue;
        }
        let full = match f.len() {
            2 => format!("{bs}/{pct}/{class}/{level}/{hint}"),
            4 | 5 => format!("{bs}/{}", f[1..].join("/")),
            _ => {
                return Err((
                    "cmdprio_bssplit",
                    format!(
                        "'{entry}' is not BS/PCT, BS/PCT/CLASS/LEVEL or BS/PCT/CLASS/LEVEL/HINT"
                    ),
                ))
            }
        };
        out.push(full);
    }
    Ok(out.join(":"))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{problems, translate};
    use iolab_core::job::Direction;
    use iolab_core::prio::ioprio;

    #[test]
    fn fio_cmdprio_percentage_and_default_class() {
        let j = &translate(
            "[r]\nrw=randread\nbs=128k\nsize=1m\nprioclass=3\ncmdprio_percentage=20\n\
             cmdprio_class=1\n",
        )[0];
        assert_eq!(problems(j), "");
        let p = j.spec.io_priority.as_ref().unwrap().priorities().unwrap();
        assert_eq!(p.default, ioprio("idle", 0, 0).unwrap());
        assert_eq!(
            p.pick(Direction::Read, 131072, 0.1),
            ioprio("rt", 0, 0).unwrap()
        );
        assert_eq!(p.pick(Direction::Read, 131072, 0.3), p.default);
        assert!(p.write.is_empty(), "a read job has no write shares");
        j.spec.validate().unwrap();
    }

    #[test]
    fn fio_cmdprio_bssplit_in_its_three_forms() {
        let j = &translate(
            "[m]\nrw=randrw\nbssplit=64k/40:1024k/60,1024k/100\n\
             cmdprio_bssplit=64k/25/1/1:64k/75/3/2:1024k/0,1024k/0\nprioclass=2\nprio=7\n",
        )[0];
        assert_eq!(problems(j), "");
        let p = j.spec.io_priority.as_ref().unwrap().priorities().unwrap();
        assert_eq!(
            p.pick(Direction::Read, 65536, 0.2),
            ioprio("rt", 1, 0).unwrap()
        );
        assert_eq!(
            p.pick(Direction::Read, 65536, 0.5),
            ioprio("idle", 2, 0).unwrap()
        );
        assert_eq!(
            p.pick(Direction::Read, 1 << 20, 0.0),
            ioprio("be", 7, 0).unwrap()
        );
        assert_eq!(
            p.pick(Direction::Write, 1 << 20, 0.0),
            ioprio("be", 7, 0).unwrap()
        );
        // BS/PCT takes cmdprio_class and cmdprio; hints ride along.
        let j = &translate(
            "[m]\nrw=randread\nbssplit=64k/40:1024k/60\ncmdprio_bssplit=64k/100:1024k/0\n\
             cmdprio_class=1\ncmdprio=0\n",
        )[0];
        let p = j.spec.io_priority.as_ref().unwrap().priorities().unwrap();
        assert_eq!(
            p.pick(Direction::Read, 65536, 0.99),
            ioprio("rt", 0, 0).unwrap()
        );
        assert_eq!(p.default, 0, "no default priority: the thread's own");
        let j = &translate("[h]\nrw=randread\nbs=1m\ncmdprio_bssplit=1M/10/2/0/1:1M/30/2/0/2\n")[0];
        let p = j.spec.io_priority.as_ref().unwrap().priorities().unwrap();
        assert_eq!(
            p.pick(Direction::Read, 1 << 20, 0.35),
            ioprio("be", 0, 2).unwrap()
        );
    }

    #[test]
    fn bad_priorities_are_refused_by_name() {
        let j = &translate("[r]\nsize=1m\ncmdprio_percentage=20\ncmdprio_class=5\n")[0];
        assert!(
            problems(j).starts_with("cmdprio_class=5: class '5'"),
            "{}",
            problems(j)
        );
        let j = &translate("[r]\nsize=1m\ncmdprio_percentage=20\ncmdprio_bssplit=4k/10\n")[0];
        assert!(problems(j).contains("not both"), "{}", problems(j));
        let j = &translate("[r]\nsize=1m\nprio=9\n")[0];
        assert!(
            problems(j).starts_with("prio=9: level 9"),
            "{}",
            problems(j)
        );
    }
}
