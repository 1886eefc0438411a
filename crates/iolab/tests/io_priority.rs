//! I/O priorities reach the kernel: each io_uring request carries its own (a class the kernel
//! does not know is refused for that request alone), and the psync engine sets its thread's
//! before an I/O whose priority differs from the last.

use iolab_core::job::{Direction, JobSpec};
use iolab_core::prio::ioprio;
use iolab_engine::open::{prepare_target, EngineChoice, WritePolicy};
use iolab_engine::target::{Completion, IoReq, Target};

fn read(tag: u32, ioprio: u16) -> IoReq {
    IoReq {
        tag,
        dir: Direction::Read,
        offset: u64::from(tag) * 4096,
        len: 4096,
        ioprio,
    }
}

fn reap(t: &mut dyn Target, n: usize) -> Vec<Completion> {
    let mut out = Vec::new();
    while out.len() < n {
        t.reap(1, None, &mut out).unwrap();
    }
    out.sort_by_key(|c| c.tag);
    out
}

#[test]
fn each_request_goes_at_its_own_priority() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.iolab-tmp");
    let idle = ioprio("idle", 0, 0).unwrap();
    let be3 = ioprio("be", 3, 0).unwrap();
    // Class 7 does not exist: only a request that carries it is refused.
    let unknown = 7 << 13;
    for engine in [EngineChoice::Uring, EngineChoice::Psync] {
        let mut job = JobSpec::from_toml("size = \"1m\"\nqueue_depth = 4", "p.toml")
            .unwrap()
            .validate()
            .unwrap();
        let prepared =
            prepare_target(&path, &mut job, &WritePolicy::default(), engine, None).unwrap();
        let mut t = prepared.open_worker(&job, engine, 1).unwrap();
        // The thread's own priority is left alone where requests carry none.
        let before = iolab_engine::sys::thread_ioprio().unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                t.prepare(4, 4096).unwrap();
                t.submit(&[read(0, 0)]).unwrap();
                assert_eq!(reap(&mut t, 1)[0].result, 4096, "{engine:?}");
                assert_eq!(iolab_engine::sys::thread_ioprio().unwrap(), before);
                match engine {
                    EngineChoice::Uring => {
                        t.submit(&[read(0, idle), read(1, unknown), read(2, be3)])
                            .unwrap();
                        let done = reap(&mut t, 3);
                        let results: Vec<i64> = done.iter().map(|c| c.result).collect();
                        assert_eq!(results, [4096, -22, 4096]);
                    }
                    _ => {
                        t.submit(&[read(0, be3)]).unwrap();
                        assert_eq!(reap(&mut t, 1)[0].result, 4096);
                        assert_eq!(iolab_engine::sys::thread_ioprio().unwrap(), be3);
                        t.submit(&[read(1, idle)]).unwrap();
                        reap(&mut t, 1);
                        assert_eq!(iolab_engine::sys::thread_ioprio().unwrap(), idle);
                        let e = t.submit(&[read(2, unknown)]).unwrap_err();
                        assert_eq!(e.raw_os_error(), Some(22));
                    }
                }
            });
        });
    }
}
