//! `mfq`: mean-field models of load balancing from TOML model files (the command is the
//! library crate's [`mfq_cli::run`]).

fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(mfq_cli::run(std::env::args_os()))
}
