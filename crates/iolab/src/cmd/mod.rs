//! One module per subcommand: each owns its clap `Args` and a `run` returning the exit code.

pub mod probe;
pub mod quick;
pub mod run;
pub mod trace;
