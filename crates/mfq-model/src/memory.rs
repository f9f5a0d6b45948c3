//! One memory limit for every dense or direct step of a job: the refined terms' dense matrices
//! (`mfq_fixpoint::refined::memory`) and the exact chain's sparse LU (`mfq_sim::exact`) are
//! both refused before allocating when their estimated peak passes [`memory_limit`].
//!
//! The limit is the value of the environment variable [`MEMORY_LIMIT_VAR`] when it is set
//! (read by [`parse_memory_limit`]), else half the physical memory (on Linux the smaller of the
//! machine's RAM from `sysinfo(2)` and the memory cgroup's `memory.max`), else
//! [`FALLBACK_LIMIT`] where the physical memory cannot be read.

use std::fmt;

/// The environment variable that sets the memory limit: a number of bytes, or a number with a
/// suffix `K`, `M`, `G`, `T` (powers of 1024; `B` or `iB` may follow: `16G`, `16GB` and
/// `16GiB` are all `16 x 2^30` bytes).
pub const MEMORY_LIMIT_VAR: &str = "MFQ_MEMORY_LIMIT";

/// What [`MEMORY_LIMIT_VAR`] may hold, as messages state it.
pub const MEMORY_LIMIT_ALLOWED: &str =
    "a number of bytes >= 1, or a number with a suffix K, M, G or T (powers of 1024; B or iB may follow), e.g. 16G or 512M";

/// The limit where the physical memory cannot be read (not Linux): 8 GiB.
pub const FALLBACK_LIMIT: u64 = 8 << 30;

/// The memory limit in force: bytes, and where it comes from (for messages: `set by
/// MFQ_MEMORY_LIMIT`, `half the physical memory of 25.3 GB`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryLimit {
    /// The limit, bytes.
    pub bytes: u64,
    /// Where it comes from, a phrase for messages.
    pub source: String,
}

/// [`MEMORY_LIMIT_VAR`] is set to something that is not a size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadMemoryLimit {
    /// The value as set (quoted in the message).
    pub value: String,
}

impl BadMemoryLimit {
    /// The value as messages quote it (`"lots"`).
    pub fn quoted(&self) -> String {
        format!("{:?}", self.value)
    }
}

impl fmt::Display for BadMemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{MEMORY_LIMIT_VAR} = {} is not allowed: {MEMORY_LIMIT_ALLOWED}", self.quoted())
    }
}

impl std::error::Error for BadMemoryLimit {}

/// Reads a size as [`MEMORY_LIMIT_VAR`] takes it (parse-size in binary units: `1000`, `16G`,
/// `16GiB`, `1.5k` = 1536, `2 TB` = `2 x 2^40`, `1e9`), surrounding blanks ignored.
///
/// # Errors
/// [`BadMemoryLimit`] for anything else: empty, no number, negative, `0`, past `u64::MAX`.
pub fn parse_memory_limit(text: &str) -> Result<u64, BadMemoryLimit> {
    let parsed = parse_size::Config::new().with_binary().parse_size(text.trim());
    match parsed {
        Ok(bytes) if bytes >= 1 => Ok(bytes),
        _ => Err(BadMemoryLimit { value: text.to_string() }),
    }
}

/// The physical memory in bytes (Linux: the RAM the kernel reports, or the memory cgroup's
/// `memory.max` when smaller); `None` elsewhere.
#[cfg(any(target_os = "linux", target_os = "android"))]
#[allow(clippy::useless_conversion)] // `totalram` is a C `unsigned long`: 32 bits on 32-bit targets
pub fn physical_memory() -> Option<u64> {
    let info = rustix::system::sysinfo();
    let ram = u64::try_from(info.totalram).ok()?.checked_mul(u64::from(info.mem_unit.max(1)))?;
    // cgroup v2 (a container's limit): a number of bytes or "max"
    let cgroup = std::fs::read_to_string("/sys/fs/cgroup/memory.max").ok().and_then(|s| s.trim().parse::<u64>().ok());
    Some(cgroup.map_or(ram, |c| c.min(ram))).filter(|&b| b > 0)
}

/// The physical memory in bytes: `None` (not read on this platform).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn physical_memory() -> Option<u64> {
    None
}

/// The memory limit of the job's dense and direct steps: [`MEMORY_LIMIT_VAR`] when set, else
/// half the [`physical_memory`], else [`FALLBACK_LIMIT`].
///
/// # Errors
/// [`BadMemoryLimit`] when [`MEMORY_LIMIT_VAR`] is set but not a size.
pub fn memory_limit() -> Result<MemoryLimit, BadMemoryLimit> {
    if let Some(text) = std::env::var_os(MEMORY_LIMIT_VAR) {
        let text = text.to_string_lossy();
        return Ok(MemoryLimit { bytes: parse_memory_limit(&text)?, source: format!("set by {MEMORY_LIMIT_VAR}") });
    }
    Ok(match physical_memory() {
        Some(b) => MemoryLimit { bytes: b / 2, source: format!("half the physical memory of {}", human(b as f64)) },
        None => MemoryLimit { bytes: FALLBACK_LIMIT, source: format!("the physical memory could not be read; {MEMORY_LIMIT_VAR} sets it") },
    })
}

/// `bytes` in decimal units (`6.1 GB`; past 1000 TB in exponent form, `4.0e16 bytes`).
pub fn human(bytes: f64) -> String {
    if bytes >= 1e15 {
        return format!("{bytes:.1e} bytes");
    }
    let units = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)];
    match units.iter().find(|(_, s)| bytes >= *s) {
        Some((u, s)) => format!("{:.1} {u}", bytes / s),
        None => format!("{bytes:.0} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The forms docs/refined.md and docs/exact.md promise, against sizes counted by hand
    /// (powers of 1024), and bad values named with the variable and what is allowed.
    #[test]
    fn sizes_are_read_with_their_units() {
        for (text, bytes) in [
            ("1000", 1000u64),
            ("16G", 16 << 30),
            ("16g", 16 << 30),
            ("16GB", 16 << 30),
            ("16GiB", 16 << 30),
            ("512M", 512 << 20),
            ("1.5k", 1536),
            (" 2 TB", 2 << 40),
            ("1T", 1 << 40),
            ("1e9", 1_000_000_000),
        ] {
            assert_eq!(parse_memory_limit(text), Ok(bytes), "{text:?}");
        }
        for bad in ["", "G", "-1", "0", "nan", "1e30T", "lots", "16 X"] {
            let e = parse_memory_limit(bad).unwrap_err().to_string();
            let want = format!("MFQ_MEMORY_LIMIT = {bad:?} is not allowed: a number of bytes");
            assert!(e.starts_with(&want) && e.contains("16G"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn sizes_are_written_in_decimal_units() {
        assert_eq!(human(4.00011e16), "4.0e16 bytes");
        assert_eq!(human(1.1e12), "1.1 TB");
        assert_eq!(human(9072.0), "9.1 kB");
        assert_eq!(human(999.0), "999 bytes");
    }
}
