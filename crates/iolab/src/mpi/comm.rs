//! The few MPI exchanges a coordinated run needs, on `MPI_COMM_WORLD`, all from the main
//! thread: JSON messages gathered at rank 0 and broadcast from it, the verdict every rank must
//! agree on before the next step, and the clock offset of each rank to rank 0.

use anyhow::{anyhow, Result};
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Message tags.
pub mod tag {
    /// A JSON message gathered at rank 0.
    pub const GATHER: i32 = 1;
    /// Clock ping (rank → 0) and pong (0 → rank).
    pub const PING: i32 = 2;
    /// See [`PING`].
    pub const PONG: i32 = 3;
    /// A rank finished its job (rank → 0).
    pub const DONE: i32 = 4;
    /// Stop or go on (0 → rank), one per rank and job.
    pub const STOP: i32 = 5;
    /// A rank's running count (rank → 0).
    pub const PROGRESS: i32 = 6;
}

/// Ping-pong exchanges per rank; the one with the shortest round trip gives the offset.
const CLOCK_EXCHANGES: usize = 16;

/// `MPI_COMM_WORLD` and who this process is in it.
pub struct Comm {
    pub world: SimpleCommunicator,
    pub rank: u32,
    pub size: u32,
}

/// One rank's answer to "may we go on?".
#[derive(Serialize, Deserialize)]
struct Verdict {
    refusal: Option<String>,
}

/// Starts MPI (serialised threading: one thread of a rank calls MPI at a time) and returns the
/// universe, which must live as long as MPI is used (dropping it finalises MPI), with the
/// world's communicator.
pub fn start() -> Result<(mpi::environment::Universe, Comm)> {
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Serialized) else {
        return Err(anyhow!(
            "MPI could not be initialised (was it initialised already?)"
        ));
    };
    let comm = Comm::new(universe.world());
    Ok((universe, comm))
}

impl Comm {
    pub fn new(world: SimpleCommunicator) -> Comm {
        let (rank, size) = (world.rank() as u32, world.size() as u32);
        Comm { world, rank, size }
    }

    pub fn is_root(&self) -> bool {
        self.rank == 0
    }

    pub fn send_json<T: Serialize>(&self, to: u32, tag: i32, value: &T) {
        let bytes = serde_json::to_vec(value).unwrap_or_default();
        self.world
            .process_at_rank(to as i32)
            .send_with_tag(&bytes[..], tag);
    }

    pub fn receive_json<T: DeserializeOwned>(&self, from: u32, tag: i32) -> Result<T> {
        let (bytes, _) = self
            .world
            .process_at_rank(from as i32)
            .receive_vec_with_tag::<u8>(tag);
        serde_json::from_slice(&bytes).map_err(|e| anyhow!("a message from rank {from}: {e}"))
    }

    /// A message waiting from rank `from` with `tag`.
    pub fn try_receive_from(&self, from: u32, tag: i32) -> Option<Vec<u8>> {
        let p = self.world.process_at_rank(from as i32);
        p.immediate_probe_with_tag(tag)?;
        Some(p.receive_vec_with_tag::<u8>(tag).0)
    }

    /// Every rank's `mine`, in rank order, at rank 0 (`None` elsewhere).
    pub fn gather<T: Serialize + DeserializeOwned>(&self, mine: &T) -> Result<Option<Vec<T>>> {
        if !self.is_root() {
            self.send_json(0, tag::GATHER, mine);
            return Ok(None);
        }
        let own = serde_json::from_slice(&serde_json::to_vec(mine)?)?;
        let mut all = vec![own];
        for r in 1..self.size {
            all.push(self.receive_json(r, tag::GATHER)?);
        }
        Ok(Some(all))
    }

    /// This rank's end of a run whose `outcome` every rank shares (agreed or broadcast) and
    /// rank 0 says: rank 0 exits with it, the others with 0. mpirun aborts every rank the
    /// moment one exits non-zero, which can cut rank 0 off before it has said why; mpirun's
    /// own exit code is then rank 0's.
    pub fn exit_with(&self, outcome: Result<i32>) -> Result<i32> {
        exit_with(self.is_root(), outcome)
    }

    /// Rank 0's `value` on every rank (the others pass `None`).
    pub fn broadcast<T: Serialize + DeserializeOwned>(&self, value: Option<&T>) -> Result<T> {
        let root = self.world.process_at_rank(0);
        let mut bytes = match value.filter(|_| self.is_root()) {
            Some(v) => serde_json::to_vec(v)?,
            None => Vec::new(),
        };
        let mut len = bytes.len() as u64;
        root.broadcast_into(&mut len);
        bytes.resize(len as usize, 0);
        root.broadcast_into(&mut bytes[..]);
        Ok(serde_json::from_slice(&bytes)?)
    }

    /// Goes on only if every rank's `step` succeeded: a refusal on any rank stops all, and
    /// every rank gets the same error naming the ranks (and their hosts) that refused.
    pub fn agree<T>(&self, hosts: &[String], step: Result<T>) -> Result<T> {
        let verdict = Verdict {
            refusal: step.as_ref().err().map(|e| format!("{e:#}")),
        };
        let all = self.gather(&verdict)?;
        let summary: Option<String> = all.and_then(|all| refusals(hosts, &all));
        let summary: Option<String> = self.broadcast(Some(&summary))?;
        match summary {
            Some(why) => Err(anyhow!(why)),
            None => step,
        }
    }

    /// Rank 0's clock minus this rank's, ns, and the round trip of the exchange it comes from
    /// (rank 0: 0 and 0). Each rank in turn exchanges [`CLOCK_EXCHANGES`] pings with rank 0.
    pub fn clock_offset(&self) -> (i64, u64) {
        let mut best = (0i64, u64::MAX);
        for r in 1..self.size {
            if self.is_root() {
                for _ in 0..CLOCK_EXCHANGES {
                    let (_, _): (Vec<u8>, _) = self
                        .world
                        .process_at_rank(r as i32)
                        .receive_vec_with_tag::<u8>(tag::PING);
                    let now = iolab_engine::runner::unix_now_ns();
                    self.world
                        .process_at_rank(r as i32)
                        .send_with_tag(&now, tag::PONG);
                }
            } else if self.rank == r {
                let root = self.world.process_at_rank(0);
                for _ in 0..CLOCK_EXCHANGES {
                    let sent = iolab_engine::runner::unix_now_ns();
                    root.send_with_tag(&[0u8][..], tag::PING);
                    let (theirs, _) = root.receive_with_tag::<u64>(tag::PONG);
                    let back = iolab_engine::runner::unix_now_ns();
                    let rtt = back.saturating_sub(sent);
                    if rtt < best.1 {
                        let mid = sent as i128 + i128::from(rtt / 2);
                        best = ((theirs as i128 - mid) as i64, rtt);
                    }
                }
            }
        }
        if self.is_root() {
            (0, 0)
        } else {
            best
        }
    }

    /// Waits a little between polls of a watch loop.
    pub fn pause() {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The refusals among `all` (in rank order), named by rank and host; the reason alone when
/// every rank refused for the same one (a bad flag, say).
fn refusals(hosts: &[String], all: &[Verdict]) -> Option<String> {
    let refused: Vec<(usize, &str)> = all
        .iter()
        .enumerate()
        .filter_map(|(r, v)| Some((r, v.refusal.as_deref()?)))
        .collect();
    let (_, first) = refused.first()?;
    if refused.len() == all.len() && refused.iter().all(|(_, why)| why == first) {
        return Some(first.to_string());
    }
    let host = |r: usize| hosts.get(r).map_or("?", String::as_str);
    let lines: Vec<String> = refused
        .iter()
        .map(|(r, why)| format!("rank {r} on {}: {why}", host(*r)))
        .collect();
    Some(format!(
        "{} of {} ranks refused, so none ran: {}",
        refused.len(),
        all.len(),
        lines.join("; ")
    ))
}

/// [`Comm::exit_with`] for a caller that has handed its `Comm` on (`root`: this is rank 0).
pub fn exit_with(root: bool, outcome: Result<i32>) -> Result<i32> {
    if root {
        outcome
    } else {
        Ok(0)
    }
}
