//! Long calls off the Python thread: the job runs on a worker of rayon's global pool while the
//! calling thread, with the GIL released, waits for it and every 50 ms looks for a signal
//! (`Python::check_signals`), so that Ctrl-C raises `KeyboardInterrupt` within a second.
//!
//! The job gets a cancel flag, set when the wait is interrupted: jobs bounded by an
//! [`mfq::Deadline`] (fixed points, refined terms, the checker, sweeps) attach it with
//! [`Deadline::with_cancel`](mfq::Deadline::with_cancel) and stop at their next check; the others
//! (transients, simulations, which take an instant or seconds) run on to their end or their own
//! `max_seconds`. Either way the result is dropped and Python gets control back at once.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// How often the waiting thread looks for a signal.
const POLL: Duration = Duration::from_millis(50);

/// Runs `job` on a worker thread and returns its result; `KeyboardInterrupt` (or whatever a
/// signal handler raises) when a signal arrives first, after setting the cancel flag passed to
/// `job`; `RuntimeError` if the job panicked (a bug: a panic never crosses into Python).
pub fn interruptible<T, F>(py: Python<'_>, job: F) -> PyResult<T>
where
    T: Send + 'static,
    F: FnOnce(Arc<AtomicBool>) -> T + Send + 'static,
{
    let (tx, rx) = sync_channel(1);
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    rayon::spawn(move || {
        let out = catch_unwind(AssertUnwindSafe(move || job(flag)));
        // the caller may have gone (interrupted): then the result is dropped
        let _ = tx.send(out);
    });
    let mut rx = rx;
    loop {
        // the receiver is Send, not Sync: it goes into the GIL-free closure and comes back
        let (got, back) = py.detach(move || (rx.recv_timeout(POLL), rx));
        rx = back;
        match got {
            Ok(Ok(value)) => return Ok(value),
            Ok(Err(panic)) => {
                let what = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
                return Err(PyRuntimeError::new_err(format!(
                    "internal error in mfq (a bug, please report it): {}",
                    what.unwrap_or_default()
                )));
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    cancel.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err("internal error in mfq: the worker stopped without a result"))
            }
        }
    }
}
