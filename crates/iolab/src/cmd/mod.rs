//! One module per subcommand: each owns its clap `Args` and a `run` returning the exit code.

pub mod docs;
pub mod probe;
pub mod quick;
pub mod replay;
pub mod report;
pub mod results;
pub mod run;
pub mod sim;
pub mod suite;
pub mod trace;
pub mod verify;
