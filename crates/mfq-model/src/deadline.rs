//! One wall-clock limit for a whole job: an instant, the limit as the user gave it (for
//! messages), and an optional cancel flag that another thread (a Ctrl-C handler, a Python
//! binding) may set.
//!
//! Every phase of a job takes the same [`Deadline`] (model construction, the fixed point, the
//! transient, the checker, the simulation, each point of a sweep) and checks
//! [`expired`](Deadline::expired) as it goes; messages state [`limit`](Deadline::limit), the
//! seconds given, never the seconds that were left when a phase started.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A wall-clock deadline with an optional cancel flag; [`Deadline::none`] (the default) never
/// expires. Cheap to clone (the flag is shared).
#[derive(Debug, Clone, Default)]
pub struct Deadline {
    /// When it expires (`None`: no time limit).
    at: Option<Instant>,
    /// The limit as given, in seconds (`--max-seconds`), for messages.
    limit: Option<f64>,
    /// Set by another thread to stop the job now.
    cancel: Option<Arc<AtomicBool>>,
}

/// Equal when they expire at the same instant, state the same limit and share the same flag.
impl PartialEq for Deadline {
    fn eq(&self, other: &Self) -> bool {
        let same_flag = match (&self.cancel, &other.cancel) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        self.at == other.at && self.limit == other.limit && same_flag
    }
}

/// Written as the limit given, in seconds (`null` without one).
impl serde::Serialize for Deadline {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.limit.serialize(serializer)
    }
}

impl Deadline {
    /// No time limit and no cancel flag.
    pub fn none() -> Self {
        Deadline::default()
    }

    /// `seconds` of wall-clock time from now. A limit too far away to represent (`1e20`) is no
    /// limit (its [`limit`](Self::limit) is still reported); `seconds` not finite or `<= 0`
    /// expires at once (callers check the value first: [`Deadline::checked_after`]).
    pub fn after(seconds: f64) -> Self {
        let at = if seconds.is_finite() && seconds > 0.0 {
            Duration::try_from_secs_f64(seconds).ok().and_then(|d| Instant::now().checked_add(d))
        } else {
            Some(Instant::now())
        };
        Deadline { at, limit: Some(seconds), cancel: None }
    }

    /// [`Deadline::after`] for a limit given by the user: `None` is no limit.
    ///
    /// # Errors
    /// `Err(message)` naming `field` when `seconds` is not finite or `<= 0`.
    pub fn checked_after(field: &str, seconds: Option<f64>) -> Result<Self, String> {
        match seconds {
            None => Ok(Deadline::none()),
            Some(s) if s.is_finite() && s > 0.0 => Ok(Deadline::after(s)),
            Some(s) => Err(format!("{field} = {s} is not allowed: a finite number of seconds > 0")),
        }
    }

    /// The same deadline with the cancel flag `flag`: the job stops when it is set.
    pub fn with_cancel(mut self, flag: Arc<AtomicBool>) -> Self {
        self.cancel = Some(flag);
        self
    }

    /// Whether the time is up or the job was cancelled.
    pub fn expired(&self) -> bool {
        self.cancelled() || self.at.is_some_and(|d| Instant::now() >= d)
    }

    /// Whether the cancel flag is set.
    pub fn cancelled(&self) -> bool {
        self.cancel.as_ref().is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// The limit as given, in seconds (`None` without a limit).
    pub fn limit(&self) -> Option<f64> {
        self.limit
    }

    /// The instant it expires (`None` without a limit, or one too far away to represent).
    pub fn instant(&self) -> Option<Instant> {
        self.at
    }

    /// Whether nothing can stop the job: no time limit and no cancellation flag.
    pub fn is_unbounded(&self) -> bool {
        self.at.is_none() && self.cancel.is_none()
    }

    /// Seconds left (at least a nanosecond, so that a solver given them stops at once);
    /// `None` without a limit.
    pub fn remaining(&self) -> Option<f64> {
        self.at.map(|d| d.saturating_duration_since(Instant::now()).as_secs_f64().max(1e-9))
    }

    /// Why a phase stopped, for messages: `the wall-clock limit --max-seconds 5` or
    /// `cancellation`. The limit is shown as [`crate::short_number`] shows numbers (`1e-300`,
    /// not 300 digits: docs/errors.md).
    pub fn reason(&self) -> String {
        if self.cancelled() {
            "cancellation (interrupted)".to_string()
        } else {
            match self.limit {
                Some(s) => format!("the wall-clock limit --max-seconds {}", crate::short_number(s)),
                None => "the wall-clock limit".to_string(),
            }
        }
    }
}

/// Why [`Deadline::wait_for`] has no result of its job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abandoned {
    /// The deadline passed (or the cancel flag was set) first: the job runs on to its end on
    /// its thread, and its result is dropped.
    Expired,
    /// The job's thread ended without a result (it panicked).
    Panicked,
    /// No thread could be started (the job did not run).
    NoThread,
}

impl Deadline {
    /// `job` on a helper thread named `name`, waited for while this thread looks at the
    /// deadline every 10 ms: for work that cannot look at it itself (a sparse LU, a TOML
    /// parse), so that a caller stops within 10 ms of the deadline instead of at the work's
    /// end. A job abandoned so keeps its thread (and its memory) until it ends.
    ///
    /// # Errors
    /// [`Abandoned`]: the deadline passed first, the thread panicked, or none could be started.
    pub fn wait_for<T: Send + 'static>(&self, name: &str, job: impl FnOnce() -> T + Send + 'static) -> Result<T, Abandoned> {
        use std::sync::mpsc::{channel, RecvTimeoutError};
        let (tx, rx) = channel();
        // the receiver may be gone (the deadline passed): the result is then dropped
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let _ = tx.send(job());
            })
            .map_err(|_| Abandoned::NoThread)?;
        loop {
            match rx.recv_timeout(Duration::from_millis(10)) {
                Ok(result) => return Ok(result),
                Err(RecvTimeoutError::Timeout) if self.expired() => return Err(Abandoned::Expired),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(Abandoned::Panicked),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A job waited for gives its result; one longer than the deadline is abandoned within
    /// a few polls of it; a panicking one is said.
    #[test]
    fn a_job_waited_for_stops_at_the_deadline() {
        assert_eq!(Deadline::none().wait_for("t", || 7), Ok(7));
        let d = Deadline::after(0.05);
        let started = Instant::now();
        let r = d.wait_for("t", || std::thread::sleep(Duration::from_secs(2)));
        assert_eq!(r, Err(Abandoned::Expired));
        assert!(started.elapsed() < Duration::from_millis(1000), "{:?}", started.elapsed());
        assert_eq!(Deadline::none().wait_for("t", || -> u8 { panic!("in the job") }), Err(Abandoned::Panicked));
    }

    #[test]
    fn deadlines_expire_and_keep_the_limit_given() {
        assert!(!Deadline::none().expired() && Deadline::none().limit().is_none());
        let d = Deadline::after(100.0);
        assert!(!d.expired() && d.limit() == Some(100.0) && d.remaining().unwrap() > 99.0);
        let soon = Deadline::after(1e-6);
        assert!(soon.instant().is_some());
        std::thread::sleep(Duration::from_millis(2));
        assert!(soon.expired() && soon.limit() == Some(1e-6));
        // too far away to represent: no limit, but the limit given is kept for messages
        let far = Deadline::after(1e20);
        assert!(!far.expired() && far.instant().is_none() && far.limit() == Some(1e20));
        assert!(Deadline::checked_after("max_seconds", Some(-1.0)).unwrap_err().contains("max_seconds = -1"));
        assert!(Deadline::checked_after("max_seconds", Some(f64::NAN)).is_err());
        assert!(Deadline::checked_after("max_seconds", None).unwrap().instant().is_none());
    }

    #[test]
    fn the_cancel_flag_stops_it() {
        let flag = Arc::new(AtomicBool::new(false));
        let d = Deadline::none().with_cancel(flag.clone());
        assert!(!d.expired());
        flag.store(true, Ordering::Relaxed);
        assert!(d.expired() && d.cancelled() && d.reason().contains("cancel"));
        assert_eq!(Deadline::after(5.0).reason(), "the wall-clock limit --max-seconds 5");
    }
}
