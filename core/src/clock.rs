//! The wall clock, as every binding that reads it in Rust gives it to the
//! pipeline. Its own module so the pipeline (the tokio driver) reads it
//! without pointing up into the binding layer (`ffi`).

/// The wall clock in unix milliseconds, as every binding that reads it in
/// Rust gives it to the pipeline. Read twice per governed call (start and
/// handler settled), so on unix it goes straight to the vDSO
/// (`clock_gettime`, ≈ 25 ns here) instead of `SystemTime` and `Duration`
/// arithmetic (≈ 36 ns). A clock before 1970 reads as 0.
pub fn unix_now_ms() -> u64 {
    #[cfg(unix)]
    {
        let ts = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
        let secs = u64::try_from(ts.tv_sec).unwrap_or(0);
        let millis = u64::try_from(ts.tv_nsec).unwrap_or(0) / 1_000_000;
        secs.saturating_mul(1000).saturating_add(millis)
    }
    #[cfg(not(unix))]
    {
        use std::time::{SystemTime, UNIX_EPOCH};
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}
