//! Stage 11's retry rules (SI-11), as pure functions the machine calls.
//!
//! A failed attempt is retried only when all hold: the capability is
//! retry-eligible (none/read with a retry config, or `idempotent: true` with
//! one — decided at registry build), the error is `retryable`, fewer than
//! `maxAttempts` retries were made, the host's `retryOn` (if declared)
//! agrees, and the backoff sleep would end before the deadline.

use crate::registry::Capability;

/// The wait before retry number `retry` (1 for the first retry):
/// `backoff_ms * 2^(retry-1)`, saturating.
pub fn backoff_delay_ms(backoff_ms: u64, retry: u32) -> u64 {
    let shift = retry.saturating_sub(1).min(63);
    backoff_ms.saturating_mul(1u64 << shift)
}

/// Retries still allowed after `attempts` attempts, before asking the error
/// and the host: eligibility and the `maxAttempts` budget.
pub(crate) fn may_retry(cap: &Capability, attempts: u32, error_retryable: bool) -> bool {
    let max = cap.meta.retry.as_ref().map_or(0, |r| r.max_attempts);
    cap.retry_eligible && error_retryable && attempts.saturating_sub(1) < max
}

/// Whether the capability declares a host `retryOn` predicate.
pub(crate) fn has_retry_on(cap: &Capability) -> bool {
    cap.meta.retry.as_ref().is_some_and(|r| r.retry_on)
}

/// The backoff before the next attempt, or `None` when the sleep would end
/// at or after the deadline (a retry then could not finish in time).
pub(crate) fn next_delay(
    cap: &Capability,
    attempts: u32,
    now_ms: u64,
    deadline_at_ms: u64,
) -> Option<u64> {
    let delay = backoff_delay_ms(cap.backoff_ms, attempts);
    (now_ms.saturating_add(delay) < deadline_at_ms).then_some(delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_from_the_base() {
        assert_eq!(backoff_delay_ms(250, 1), 250);
        assert_eq!(backoff_delay_ms(250, 2), 500);
        assert_eq!(backoff_delay_ms(250, 3), 1000);
        assert_eq!(backoff_delay_ms(0, 5), 0);
        assert_eq!(backoff_delay_ms(u64::MAX, 3), u64::MAX);
        assert_eq!(backoff_delay_ms(1, 200), 1u64 << 63);
    }
}
