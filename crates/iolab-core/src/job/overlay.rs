//! Layers of job keys: suite defaults under a step's keys, a job file under command-line
//! flags, each later layer setting what it gives.

use super::JobSpec;

impl JobSpec {
    /// Sets every key `top` sets (the later layer wins: suite defaults under a step's keys,
    /// a job file under command-line flags). Giving one of `block_size` and `bssplit` clears
    /// the other, since a job takes only one of them.
    pub fn overlay(&mut self, top: &JobSpec) {
        macro_rules! take {
            ($($f:ident),*) => { $( if top.$f.is_some() { self.$f = top.$f.clone(); } )* };
        }
        take!(
            name,
            target,
            access,
            read_pct,
            random_pct,
            block_size,
            bssplit,
            queue_depth,
            threads
        );
        take!(offset, size, zones, duration_s, ramp_s, io_limit, ios_limit, direct, data);
        take!(pattern, sprandom, thread_offset, zoned);
        take!(
            compress_pct,
            dedupe_pct,
            rate_iops,
            rate_bytes_per_s,
            seed,
            continue_on_error,
            random_map,
            drain_end,
            verify,
            distribution,
            start_delay_s,
            rate_poisson,
            seq_skip,
            random_run,
            block_align,
            stride_io,
            stride_range,
            stride_skip,
            steady_stop,
            io_priority,
            latency_target,
            sync,
            dedupe_set
        );
        take!(
            together,
            wait_for,
            group,
            group_reporting,
            ends_others,
            think_s,
            think_blocks
        );
        take!(
            think_spin_s,
            think_after,
            flow,
            flow_id,
            flow_sleep_s,
            cpu_nodes,
            cpus,
            cpus_policy,
            mem_policy
        );
        if top.block_size.is_some() && top.bssplit.is_none() {
            self.bssplit = None;
        }
        if top.bssplit.is_some() && top.block_size.is_none() {
            self.block_size = None;
        }
    }
}
