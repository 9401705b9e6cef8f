//! `CapabilityError`: the one error type an invocation can end in.
//!
//! Codes are stable strings (`NOT_FOUND`, `POLICY_DENIED`, …) that every
//! binding exposes unchanged (`.code` in JS and Python, an enum case in
//! Swift). Each code maps to one `std:` error kind of spec/004 so a tool
//! host can report it without knowing this library. Bindings compare their
//! own list against [`ErrorCode::ALL`] in a drift test.

use std::fmt;

/// A stable error code. The wire spelling is `SCREAMING_SNAKE_CASE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// Stage 1/2: no such capability, or not exposed on this surface (SI-8).
    NotFound,
    /// Stage 4: the input failed validation.
    InvalidInput,
    /// Stage 5/6: a policy denied the call (or failed, which denies).
    PolicyDenied,
    /// Stage 8: the call needs an approval first. Adapters that cannot
    /// represent a pending outcome report it with this code.
    ApprovalRequired,
    /// Stage 7: no approval request with that id.
    ApprovalNotFound,
    /// Stage 7: the request is still pending: nobody has approved it yet.
    ApprovalPending,
    /// Stage 7: the request was rejected by an approver.
    ApprovalRejected,
    /// Stage 7: the request expired before it was consumed.
    ApprovalExpired,
    /// Stage 7: the request was already consumed (approvals are single-use).
    ApprovalConsumed,
    /// Stage 7: the request does not match this call (input hash, capability).
    ApprovalInvalid,
    /// Stage 11: the deadline passed.
    Timeout,
    /// Stage 11: the caller cancelled.
    Cancelled,
    /// Stage 11/13: the handler or the redactor failed.
    ExecutionFailed,
    /// Stage 12: the handler's output failed validation.
    OutputInvalid,
    /// A documented limit (size, depth, pending approvals) was exceeded.
    LimitExceeded,
    /// A session id the component does not recognise.
    SessionNotFound,
    /// A credential the capability needs is absent.
    CredentialRequired,
    /// The host answered out of turn, or another internal fault.
    Internal,
}

/// The `std:` error kinds of spec/004 (`error.kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    NotFound,
    InvalidArgs,
    Timeout,
    CapabilityDenied,
    SessionNotFound,
    CredentialRequired,
    Internal,
}

impl ErrorKind {
    /// Every kind, in spec order.
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::NotFound,
        ErrorKind::InvalidArgs,
        ErrorKind::Timeout,
        ErrorKind::CapabilityDenied,
        ErrorKind::SessionNotFound,
        ErrorKind::CredentialRequired,
        ErrorKind::Internal,
    ];

    /// The wire spelling, e.g. `std:not-found`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "std:not-found",
            ErrorKind::InvalidArgs => "std:invalid-args",
            ErrorKind::Timeout => "std:timeout",
            ErrorKind::CapabilityDenied => "std:capability-denied",
            ErrorKind::SessionNotFound => "std:session-not-found",
            ErrorKind::CredentialRequired => "std:credential-required",
            ErrorKind::Internal => "std:internal",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl ErrorCode {
    /// Every code, in a stable order. Bindings assert equality with this list.
    pub const ALL: [ErrorCode; 18] = [
        ErrorCode::NotFound,
        ErrorCode::InvalidInput,
        ErrorCode::PolicyDenied,
        ErrorCode::ApprovalRequired,
        ErrorCode::ApprovalNotFound,
        ErrorCode::ApprovalPending,
        ErrorCode::ApprovalRejected,
        ErrorCode::ApprovalExpired,
        ErrorCode::ApprovalConsumed,
        ErrorCode::ApprovalInvalid,
        ErrorCode::Timeout,
        ErrorCode::Cancelled,
        ErrorCode::ExecutionFailed,
        ErrorCode::OutputInvalid,
        ErrorCode::LimitExceeded,
        ErrorCode::SessionNotFound,
        ErrorCode::CredentialRequired,
        ErrorCode::Internal,
    ];

    /// The wire spelling, e.g. `POLICY_DENIED`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::NotFound => "NOT_FOUND",
            ErrorCode::InvalidInput => "INVALID_INPUT",
            ErrorCode::PolicyDenied => "POLICY_DENIED",
            ErrorCode::ApprovalRequired => "APPROVAL_REQUIRED",
            ErrorCode::ApprovalNotFound => "APPROVAL_NOT_FOUND",
            ErrorCode::ApprovalPending => "APPROVAL_PENDING",
            ErrorCode::ApprovalRejected => "APPROVAL_REJECTED",
            ErrorCode::ApprovalExpired => "APPROVAL_EXPIRED",
            ErrorCode::ApprovalConsumed => "APPROVAL_CONSUMED",
            ErrorCode::ApprovalInvalid => "APPROVAL_INVALID",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::Cancelled => "CANCELLED",
            ErrorCode::ExecutionFailed => "EXECUTION_FAILED",
            ErrorCode::OutputInvalid => "OUTPUT_INVALID",
            ErrorCode::LimitExceeded => "LIMIT_EXCEEDED",
            ErrorCode::SessionNotFound => "SESSION_NOT_FOUND",
            ErrorCode::CredentialRequired => "CREDENTIAL_REQUIRED",
            ErrorCode::Internal => "INTERNAL",
        }
    }

    /// Parses the wire spelling.
    pub fn parse(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// The `std:` error kind this code is reported as.
    pub const fn kind(self) -> ErrorKind {
        match self {
            ErrorCode::NotFound => ErrorKind::NotFound,
            ErrorCode::InvalidInput | ErrorCode::LimitExceeded => ErrorKind::InvalidArgs,
            ErrorCode::Timeout => ErrorKind::Timeout,
            ErrorCode::PolicyDenied
            | ErrorCode::ApprovalRequired
            | ErrorCode::ApprovalNotFound
            | ErrorCode::ApprovalPending
            | ErrorCode::ApprovalRejected
            | ErrorCode::ApprovalExpired
            | ErrorCode::ApprovalConsumed
            | ErrorCode::ApprovalInvalid => ErrorKind::CapabilityDenied,
            ErrorCode::SessionNotFound => ErrorKind::SessionNotFound,
            ErrorCode::CredentialRequired => ErrorKind::CredentialRequired,
            ErrorCode::Cancelled
            | ErrorCode::ExecutionFailed
            | ErrorCode::OutputInvalid
            | ErrorCode::Internal => ErrorKind::Internal,
        }
    }

    /// Whether an error with this code is worth retrying when nothing more
    /// specific is known. Only `TIMEOUT` of a single attempt and
    /// `EXECUTION_FAILED` marked retryable by the handler are retried; the
    /// handler's own errors carry their own flag.
    pub const fn default_retryable(self) -> bool {
        matches!(self, ErrorCode::Timeout)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// INTERNAL's message when the error's own text is withheld (a caught
/// panic, a conversion that quoted data, an impossible state): the same
/// words in every binding.
pub const INTERNAL_MESSAGE: &str = "An internal error stopped the call.";

/// EXECUTION_FAILED's message for a handler's plain error, and INTERNAL's
/// when an adapter met anything but a capability error: the failure's own
/// text is never shown.
pub const FAILED_MESSAGE: &str = "The capability failed while running.";

/// The error an invocation ends in. The message is written for a model to
/// act on; it never carries unredacted data or a stack (SI-10).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct CapabilityError {
    pub code: ErrorCode,
    pub message: String,
    pub retryable: bool,
    /// Extra structured facts safe to show (never payloads).
    pub details: Option<serde_json::Value>,
}

impl CapabilityError {
    /// An error with the code's default `retryable`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        CapabilityError {
            code,
            message: message.into(),
            retryable: code.default_retryable(),
            details: None,
        }
    }

    /// Sets `retryable`.
    pub fn with_retryable(mut self, retryable: bool) -> Self {
        self.retryable = retryable;
        self
    }

    /// Attaches details.
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// The `std:` kind of this error.
    pub fn kind(&self) -> ErrorKind {
        self.code.kind()
    }

    /// JSON form used by bindings and vectors:
    /// `{code, message, retryable, kind, details?}`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("code".into(), self.code.as_str().into());
        m.insert("message".into(), self.message.clone().into());
        m.insert("retryable".into(), self.retryable.into());
        m.insert("kind".into(), self.kind().as_str().into());
        if let Some(d) = &self.details {
            m.insert("details".into(), d.clone());
        }
        serde_json::Value::Object(m)
    }
}

/// All codes as wire strings, for the bindings' drift tests.
pub fn all_error_codes() -> Vec<&'static str> {
    ErrorCode::ALL.iter().map(|c| c.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for c in ErrorCode::ALL {
            assert!(seen.insert(c.as_str()), "duplicate {c}");
            assert_eq!(ErrorCode::parse(c.as_str()), Some(c));
        }
        assert_eq!(ErrorCode::parse("nope"), None);
    }

    #[test]
    fn every_kind_is_reachable_from_some_code() {
        for k in ErrorKind::ALL {
            assert!(
                ErrorCode::ALL.iter().any(|c| c.kind() == k),
                "{k} unreachable"
            );
            assert_eq!(ErrorKind::parse(k.as_str()), Some(k));
        }
    }

    #[test]
    fn design_mappings() {
        assert_eq!(ErrorCode::NotFound.kind().as_str(), "std:not-found");
        assert_eq!(ErrorCode::InvalidInput.kind().as_str(), "std:invalid-args");
        assert_eq!(ErrorCode::Timeout.kind().as_str(), "std:timeout");
        assert_eq!(
            ErrorCode::PolicyDenied.kind().as_str(),
            "std:capability-denied"
        );
        assert_eq!(ErrorCode::ExecutionFailed.kind().as_str(), "std:internal");
        let e = CapabilityError::new(ErrorCode::PolicyDenied, "no");
        assert_eq!(e.to_string(), "POLICY_DENIED: no");
        assert!(!e.retryable);
        assert_eq!(e.to_json()["kind"], "std:capability-denied");
    }
}
