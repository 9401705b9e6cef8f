//! Progress a handler reports from inside a call (spec/004: `std:progress`,
//! `std:progress-total`, `std:progress-token`).
//!
//! A handler reports `done` units, and optionally a `total`, through its
//! binding's handler context. The rules are checked here, once, for every
//! binding:
//!
//! - `done` strictly increases from one accepted report to the next (MCP
//!   requires a progress notification's value to increase each time);
//! - a `total`, once given, is fixed: a later report may repeat it or omit
//!   it (it is carried forward), never change it;
//! - `done ≤ total` whenever a total is known;
//! - a count (`done` or `total`) is at most 2^53 ([`MAX_COUNT`]): every
//!   language holds it exactly (a JavaScript number, a Swift `Double`, a
//!   JSON reader), so a report means the same wherever it is read.
//!
//! A rejected report is **dropped**, not fatal: the call goes on and the
//! binding's `progress()` tells the handler `false`. Progress is advisory
//! (a UI hint), so a bad report must not cost the work it describes.
//!
//! An accepted report becomes a [`ProgressEvent`]; adapters carry it as an
//! MCP `notifications/progress` (when the client sent a `progressToken`),
//! as `std:progress` / `std:progress-total` content-part metadata in CBOR
//! results ([`ProgressEvent::to_metadata`]), or to a direct caller's
//! callback.

use crate::act::deterministic::EncodeError;
use crate::act::meta_map::MetaMap;

/// `std:` key: units completed so far.
pub const STD_PROGRESS: &str = "std:progress";
/// `std:` key: total units, if known.
pub const STD_PROGRESS_TOTAL: &str = "std:progress-total";
/// `std:` key: the MCP-compatible progress token a caller supplied.
pub const STD_PROGRESS_TOKEN: &str = "std:progress-token";

/// One accepted progress report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgressEvent {
    pub done: u64,
    /// The total, carried forward once given.
    pub total: Option<u64>,
}

/// Why a report was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProgressError {
    #[error("progress must increase: {done} after {previous}")]
    NotIncreasing { previous: u64, done: u64 },
    #[error("progress {done} exceeds its total {total}")]
    AboveTotal { done: u64, total: u64 },
    #[error("the progress total is fixed at {fixed}, not {total}")]
    TotalChanged { fixed: u64, total: u64 },
    #[error("progress must be a non-negative integer")]
    NotAnInteger,
    #[error("progress counts go up to 2^53, not {count}")]
    TooLarge { count: u64 },
}

/// The largest progress count: 2^53, the last integer every host number
/// type (and an MCP client's JavaScript) holds exactly.
pub const MAX_COUNT: u64 = 1 << 53;

impl ProgressError {
    /// A small stable number for bindings (0 means accepted).
    pub const fn code(&self) -> u32 {
        match self {
            ProgressError::NotIncreasing { .. } => 1,
            ProgressError::AboveTotal { .. } => 2,
            ProgressError::TotalChanged { .. } => 3,
            ProgressError::NotAnInteger => 4,
            ProgressError::TooLarge { .. } => 5,
        }
    }
}

/// Checks `next` against the last accepted report, if any. Stateless, so a
/// binding may keep the two numbers of the last report on its side and
/// cross only with integers.
pub fn check(
    last: Option<ProgressEvent>,
    done: u64,
    total: Option<u64>,
) -> Result<ProgressEvent, ProgressError> {
    for count in std::iter::once(done).chain(total) {
        if count > MAX_COUNT {
            return Err(ProgressError::TooLarge { count });
        }
    }
    let fixed = last.and_then(|l| l.total);
    let total = match (fixed, total) {
        (Some(f), Some(t)) if f != t => {
            return Err(ProgressError::TotalChanged { fixed: f, total: t });
        }
        (Some(f), _) => Some(f),
        (None, t) => t,
    };
    if let Some(l) = last {
        if done <= l.done {
            return Err(ProgressError::NotIncreasing {
                previous: l.done,
                done,
            });
        }
    }
    if let Some(t) = total {
        if done > t {
            return Err(ProgressError::AboveTotal { done, total: t });
        }
    }
    Ok(ProgressEvent { done, total })
}

/// Converts a host number (a JavaScript number, a Python float) to a count:
/// a finite non-negative integer (`2.0` is `2`; whether it is at most
/// [`MAX_COUNT`] is [`check`]'s rule).
pub fn count_from_f64(x: f64) -> Result<u64, ProgressError> {
    // 2^64 is exact as a double; anything below it converts without loss.
    if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 18_446_744_073_709_551_616.0 {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(x as u64)
    } else {
        Err(ProgressError::NotAnInteger)
    }
}

/// The progress of one invocation: the last accepted report.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProgressChecker {
    last: Option<ProgressEvent>,
}

impl ProgressChecker {
    pub fn new() -> ProgressChecker {
        ProgressChecker::default()
    }

    /// Checks and, if accepted, records a report.
    pub fn report(
        &mut self,
        done: u64,
        total: Option<u64>,
    ) -> Result<ProgressEvent, ProgressError> {
        let event = check(self.last, done, total)?;
        self.last = Some(event);
        Ok(event)
    }

    /// The last accepted report.
    pub fn last(&self) -> Option<ProgressEvent> {
        self.last
    }
}

impl ProgressEvent {
    /// Writes the event as content-part metadata (`std:progress`,
    /// `std:progress-total`).
    pub fn to_metadata(&self, meta: &mut MetaMap) {
        meta.insert(STD_PROGRESS, ciborium::Value::Integer(self.done.into()));
        match self.total {
            Some(t) => meta.insert(STD_PROGRESS_TOTAL, ciborium::Value::Integer(t.into())),
            None => meta.remove(STD_PROGRESS_TOTAL),
        };
    }

    /// The event as a deterministic CBOR metadata map.
    pub fn to_cbor(&self) -> Result<Vec<u8>, EncodeError> {
        let mut meta = MetaMap::new();
        self.to_metadata(&mut meta);
        meta.encode()
    }

    /// The MCP `notifications/progress` params for `token`.
    pub fn mcp_params(&self, token: serde_json::Value) -> serde_json::Value {
        let mut params = serde_json::json!({"progressToken": token, "progress": self.done});
        if let Some(t) = self.total {
            params["total"] = t.into();
        }
        params
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn increasing_reports_are_accepted_and_total_carries_forward() {
        let mut p = ProgressChecker::new();
        assert_eq!(
            p.report(0, Some(3)),
            Ok(ProgressEvent {
                done: 0,
                total: Some(3)
            })
        );
        assert_eq!(
            p.report(1, None),
            Ok(ProgressEvent {
                done: 1,
                total: Some(3)
            })
        );
        assert_eq!(
            p.report(3, Some(3)),
            Ok(ProgressEvent {
                done: 3,
                total: Some(3)
            })
        );
    }

    #[test]
    fn a_report_that_does_not_increase_is_dropped() {
        let mut p = ProgressChecker::new();
        p.report(5, None).unwrap();
        assert_eq!(p.report(5, None).unwrap_err().code(), 1);
        assert_eq!(
            p.report(4, None).unwrap_err(),
            ProgressError::NotIncreasing {
                previous: 5,
                done: 4
            }
        );
        // The dropped reports changed nothing.
        assert_eq!(
            p.last(),
            Some(ProgressEvent {
                done: 5,
                total: None
            })
        );
        assert!(p.report(6, None).is_ok());
    }

    #[test]
    fn done_may_not_exceed_total() {
        let mut p = ProgressChecker::new();
        assert_eq!(p.report(4, Some(3)).unwrap_err().code(), 2);
        p.report(1, Some(3)).unwrap();
        assert_eq!(
            p.report(4, None).unwrap_err(),
            ProgressError::AboveTotal { done: 4, total: 3 }
        );
    }

    #[test]
    fn the_total_is_fixed_once_given() {
        let mut p = ProgressChecker::new();
        p.report(1, None).unwrap();
        // A first total may come later.
        assert_eq!(p.report(2, Some(10)).unwrap().total, Some(10));
        assert_eq!(
            p.report(3, Some(11)).unwrap_err(),
            ProgressError::TotalChanged {
                fixed: 10,
                total: 11
            }
        );
    }

    #[test]
    fn host_numbers_must_be_counts() {
        assert_eq!(count_from_f64(3.0), Ok(3));
        assert_eq!(count_from_f64(9_007_199_254_740_994.0), Ok(MAX_COUNT + 2));
        for bad in [
            -1.0,
            1.5,
            f64::NAN,
            f64::INFINITY,
            1e300,
            18_446_744_073_709_551_616.0,
        ] {
            assert_eq!(count_from_f64(bad), Err(ProgressError::NotAnInteger));
        }
    }

    #[test]
    fn counts_go_up_to_two_to_the_53() {
        assert!(check(None, MAX_COUNT, Some(MAX_COUNT)).is_ok());
        let beyond = ProgressError::TooLarge {
            count: MAX_COUNT + 1,
        };
        assert_eq!(check(None, MAX_COUNT + 1, None), Err(beyond));
        assert_eq!(check(None, 1, Some(MAX_COUNT + 1)), Err(beyond));
        assert_eq!(beyond.code(), 5);
    }

    #[test]
    fn metadata_and_mcp_params() {
        let e = ProgressEvent {
            done: 2,
            total: Some(5),
        };
        let mut meta = MetaMap::new();
        e.to_metadata(&mut meta);
        assert_eq!(
            meta.get(STD_PROGRESS),
            Some(&ciborium::Value::Integer(2.into()))
        );
        assert_eq!(
            meta.get(STD_PROGRESS_TOTAL),
            Some(&ciborium::Value::Integer(5.into()))
        );
        let bytes = e.to_cbor().unwrap();
        let back = MetaMap::decode(&bytes).unwrap();
        assert_eq!(
            back.get(STD_PROGRESS_TOTAL),
            Some(&ciborium::Value::Integer(5.into()))
        );
        assert_eq!(
            e.mcp_params(serde_json::json!("tok")),
            serde_json::json!({"progressToken": "tok", "progress": 2, "total": 5})
        );
        let open = ProgressEvent {
            done: 1,
            total: None,
        }
        .mcp_params(serde_json::json!(7));
        assert!(open.get("total").is_none());
    }

    #[test]
    fn keys_are_the_registered_std_keys() {
        for k in [STD_PROGRESS, STD_PROGRESS_TOTAL, STD_PROGRESS_TOKEN] {
            assert!(crate::act::keys::lookup(k).is_some(), "{k}");
        }
    }
}
