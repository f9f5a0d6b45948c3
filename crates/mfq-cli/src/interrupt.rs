//! The process's Ctrl-C flag, shared by the commands whose jobs check a
//! [`Deadline`](mfq_model::Deadline) (`sweep`, `exact`, `simulate`, `compare`): the first Ctrl-C
//! sets it, the job stops at its next check and the command prints and writes what it has
//! finished (exit code 4); a second Ctrl-C exits at once (code 130). Other commands keep the
//! default Ctrl-C (the process ends).

use crate::commands::deadline_of;
use crate::{Failure, ModelArgs};
use mfq_model::Deadline;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The flag, with the handler installed on first use.
pub(crate) fn interrupt_flag() -> Arc<AtomicBool> {
    static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();
    FLAG.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(false));
        let f = flag.clone();
        // (fails only when another handler is installed: then Ctrl-C ends the process as before)
        let _ = ctrlc::set_handler(move || {
            if f.swap(true, Ordering::SeqCst) {
                std::process::exit(130);
            }
            eprintln!("\nmfq: interrupted: stopping and keeping what is finished (Ctrl-C again to exit at once)");
        });
        flag
    })
    .clone()
}

/// The command's deadline ([`deadline_of`]) with the Ctrl-C flag as its cancel flag.
///
/// # Errors
/// As [`deadline_of`].
pub(crate) fn interruptible_deadline(args: &ModelArgs) -> Result<Deadline, Failure> {
    Ok(deadline_of(args)?.with_cancel(interrupt_flag()))
}
