//! Power coefficients of a device and the busy time they are charged on.

/// Power coefficients of an SSD or HDD.
#[derive(Clone, Debug, Default)]
pub struct Power {
    /// Idle watts.
    pub idle_w: f64,
    /// Per busy controller core.
    pub controller_w: f64,
    /// Per die reading.
    pub die_read_w: f64,
    /// Per die programming.
    pub die_program_w: f64,
    /// Per die erasing.
    pub die_erase_w: f64,
    /// Per busy channel.
    pub channel_w: f64,
    /// HDD seeking and transferring.
    pub seek_w: f64,
}

/// Busy-time counters used for power.
#[derive(Clone, Copy, Debug, Default)]
pub struct Energy {
    /// Die read time summed over dies.
    pub read_ns: u64,
    /// Die program time summed.
    pub program_ns: u64,
    /// Die erase time summed.
    pub erase_ns: u64,
}

impl Energy {
    pub(super) fn add(&mut self, o: Energy) {
        self.read_ns += o.read_ns;
        self.program_ns += o.program_ns;
        self.erase_ns += o.erase_ns;
    }

    pub(super) fn share(self, f: f64) -> Energy {
        let part = |x: u64| (x as f64 * f) as u64;
        Energy {
            read_ns: part(self.read_ns),
            program_ns: part(self.program_ns),
            erase_ns: part(self.erase_ns),
        }
    }
}
