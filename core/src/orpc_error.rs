//! oRPC's typed errors, both ways (issue 20 item 1).
//!
//! **Into the core.** A handler (or one of its middlewares) of an oRPC
//! procedure throws an `ORPCError` with a `code` (`NOT_FOUND`, a custom
//! `OUT_OF_STOCK`…), a `status`, a `message`, `data` and `defined` (true
//! when the procedure's `.errors({...})` declares that code, as oRPC's own
//! `validateORPCError` decides). [`handler_error`] turns it into the
//! [`CapabilityError`] the call ends in:
//!
//! - the code by [`TABLE`] (the oRPC code first; a code the table does not
//!   name goes by its status; anything else is EXECUTION_FAILED). A domain
//!   `NOT_FOUND` is EXECUTION_FAILED, never the capability-level NOT_FOUND
//!   of SI-8 ("no such tool"): the tool exists, what it looked for does not;
//! - the message: a declared error's own message (the procedure wrote it to
//!   be shown); an undeclared one's never (it may quote data, SI-10): the
//!   row's fixed text instead;
//! - `retryable` by the row (a rate limit, a timeout, an unavailable
//!   upstream), declared or not;
//! - the details: a declared error's `data` (what the procedure passes to
//!   `errors.X({data})`, checked by oRPC against the declaration's data
//!   schema when it has one), within [`crate::limits::ERROR_DETAILS`]; an
//!   undeclared one's never ([`crate::ffi::orpc_handler_error`]).
//!
//! **Out of the core.** The same procedure served by oRPC's own HTTP
//! handlers answers a thrown `CapabilityError` with the `ORPCError` of
//! [`orpc_code_of`], so its HTTP clients keep reading oRPC's codes.

use crate::error::{CapabilityError, ErrorCode};

/// One row of the mapping of oRPC's common codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// oRPC's code (`COMMON_ORPC_ERROR_DEFS` of `@orpc/client` 1.16).
    pub orpc_code: &'static str,
    /// Its default HTTP status.
    pub status: u16,
    /// The core's code the call ends in.
    pub code: ErrorCode,
    /// Whether the call is worth retrying.
    pub retryable: bool,
    /// What the model reads when the procedure did not declare the error.
    pub undeclared_message: &'static str,
}

const fn row(
    orpc_code: &'static str,
    status: u16,
    code: ErrorCode,
    retryable: bool,
    undeclared_message: &'static str,
) -> Row {
    Row {
        orpc_code,
        status,
        code,
        retryable,
        undeclared_message,
    }
}

const FAILED: &str = crate::error::FAILED_MESSAGE;

/// oRPC's common error codes and what each becomes.
pub const TABLE: [Row; 19] = [
    row(
        "BAD_REQUEST",
        400,
        ErrorCode::InvalidInput,
        false,
        "The capability rejected the arguments.",
    ),
    row(
        "UNAUTHORIZED",
        401,
        ErrorCode::CredentialRequired,
        false,
        "The capability needs a credential the call did not carry.",
    ),
    row(
        "FORBIDDEN",
        403,
        ErrorCode::PolicyDenied,
        false,
        "The capability does not allow this call.",
    ),
    row(
        "NOT_FOUND",
        404,
        ErrorCode::ExecutionFailed,
        false,
        "The capability did not find what the call asked for.",
    ),
    row(
        "METHOD_NOT_SUPPORTED",
        405,
        ErrorCode::ExecutionFailed,
        false,
        FAILED,
    ),
    row(
        "NOT_ACCEPTABLE",
        406,
        ErrorCode::ExecutionFailed,
        false,
        FAILED,
    ),
    row(
        "TIMEOUT",
        408,
        ErrorCode::Timeout,
        true,
        "The capability timed out while running.",
    ),
    row(
        "CONFLICT",
        409,
        ErrorCode::ExecutionFailed,
        false,
        "The call conflicts with the current state.",
    ),
    row(
        "PRECONDITION_FAILED",
        412,
        ErrorCode::ExecutionFailed,
        false,
        "A precondition of the call does not hold.",
    ),
    row(
        "PAYLOAD_TOO_LARGE",
        413,
        ErrorCode::LimitExceeded,
        false,
        "The request is larger than the capability accepts.",
    ),
    row(
        "UNSUPPORTED_MEDIA_TYPE",
        415,
        ErrorCode::InvalidInput,
        false,
        "The capability rejected the arguments.",
    ),
    row(
        "UNPROCESSABLE_CONTENT",
        422,
        ErrorCode::InvalidInput,
        false,
        "The capability rejected the arguments.",
    ),
    row(
        "TOO_MANY_REQUESTS",
        429,
        ErrorCode::LimitExceeded,
        true,
        "The capability is rate limited; try again later.",
    ),
    row(
        "CLIENT_CLOSED_REQUEST",
        499,
        ErrorCode::ExecutionFailed,
        false,
        FAILED,
    ),
    row(
        "INTERNAL_SERVER_ERROR",
        500,
        ErrorCode::ExecutionFailed,
        false,
        FAILED,
    ),
    row(
        "NOT_IMPLEMENTED",
        501,
        ErrorCode::ExecutionFailed,
        false,
        FAILED,
    ),
    row(
        "BAD_GATEWAY",
        502,
        ErrorCode::ExecutionFailed,
        true,
        "A service the capability needs failed.",
    ),
    row(
        "SERVICE_UNAVAILABLE",
        503,
        ErrorCode::ExecutionFailed,
        true,
        "The capability is unavailable at the moment.",
    ),
    row(
        "GATEWAY_TIMEOUT",
        504,
        ErrorCode::Timeout,
        true,
        "A service the capability needs timed out.",
    ),
];

/// Any other code with no row for its status either.
const OTHER: Row = row("", 500, ErrorCode::ExecutionFailed, false, FAILED);

/// The row of an oRPC error: by code, else by status (a custom
/// `OUT_OF_STOCK` with status 409 reads as CONFLICT), else [`OTHER`].
pub fn row_of(orpc_code: &str, status: Option<u16>) -> Row {
    TABLE
        .iter()
        .find(|r| r.orpc_code == orpc_code)
        .or_else(|| status.and_then(|s| TABLE.iter().find(|r| r.status == s)))
        .copied()
        .unwrap_or(OTHER)
}

/// The error a call ends in when its handler threw this oRPC error.
/// `message` is shown only when `defined` (and not blank), and so is
/// `data`, as the error's details (bounded by the invocation, like any
/// handler error's details).
pub fn handler_error(
    orpc_code: &str,
    status: Option<u16>,
    defined: bool,
    message: &str,
    data: Option<serde_json::Value>,
) -> CapabilityError {
    let r = row_of(orpc_code, status);
    let text = if defined && !message.trim().is_empty() {
        message
    } else {
        r.undeclared_message
    };
    let e = CapabilityError::new(r.code, text).with_retryable(r.retryable);
    match data.filter(|_| defined) {
        Some(d) => e.with_details(d),
        None => e,
    }
}

/// The oRPC code and status an HTTP client of the same procedure gets for
/// a `CapabilityError` its handler threw.
pub fn orpc_code_of(code: ErrorCode, retryable: bool) -> (&'static str, u16) {
    match code {
        ErrorCode::NotFound | ErrorCode::SessionNotFound | ErrorCode::ApprovalNotFound => {
            ("NOT_FOUND", 404)
        }
        ErrorCode::InvalidInput => ("BAD_REQUEST", 400),
        ErrorCode::PolicyDenied
        | ErrorCode::ApprovalRequired
        | ErrorCode::ApprovalPending
        | ErrorCode::ApprovalRejected
        | ErrorCode::ApprovalExpired
        | ErrorCode::ApprovalConsumed
        | ErrorCode::ApprovalInvalid => ("FORBIDDEN", 403),
        ErrorCode::CredentialRequired => ("UNAUTHORIZED", 401),
        ErrorCode::Timeout => ("TIMEOUT", 408),
        ErrorCode::Cancelled => ("CLIENT_CLOSED_REQUEST", 499),
        ErrorCode::LimitExceeded if retryable => ("TOO_MANY_REQUESTS", 429),
        ErrorCode::LimitExceeded => ("PAYLOAD_TOO_LARGE", 413),
        ErrorCode::ExecutionFailed if retryable => ("SERVICE_UNAVAILABLE", 503),
        ErrorCode::ExecutionFailed | ErrorCode::OutputInvalid | ErrorCode::Internal => {
            ("INTERNAL_SERVER_ERROR", 500)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_statuses_are_unique() {
        let mut codes = std::collections::HashSet::new();
        let mut statuses = std::collections::HashSet::new();
        for r in TABLE {
            assert!(codes.insert(r.orpc_code), "{}", r.orpc_code);
            assert!(statuses.insert(r.status), "{}", r.status);
        }
    }

    #[test]
    fn a_domain_not_found_is_never_no_such_tool() {
        for defined in [true, false] {
            let e = handler_error("NOT_FOUND", Some(404), defined, "Order 7 not found", None);
            assert_eq!(e.code, ErrorCode::ExecutionFailed);
            let e = handler_error("GONE", Some(404), defined, "gone", None);
            assert_eq!(e.code, ErrorCode::ExecutionFailed);
        }
        assert!(TABLE.iter().all(|r| r.code != ErrorCode::NotFound));
    }

    #[test]
    fn the_message_is_shown_only_when_declared() {
        let e = handler_error(
            "CONFLICT",
            Some(409),
            true,
            "Order 7 is already paid.",
            None,
        );
        assert_eq!(e.message, "Order 7 is already paid.");
        let e = handler_error("CONFLICT", Some(409), false, "secret 1234", None);
        assert_eq!(e.message, "The call conflicts with the current state.");
        let e = handler_error("CONFLICT", Some(409), true, "  ", None);
        assert_eq!(e.message, "The call conflicts with the current state.");
    }

    #[test]
    fn rows() {
        let at = |c: &str, s| {
            let e = handler_error(c, s, false, "x", None);
            (e.code, e.retryable)
        };
        assert_eq!(
            at("UNAUTHORIZED", Some(401)),
            (ErrorCode::CredentialRequired, false)
        );
        assert_eq!(at("FORBIDDEN", Some(403)), (ErrorCode::PolicyDenied, false));
        assert_eq!(
            at("BAD_REQUEST", Some(400)),
            (ErrorCode::InvalidInput, false)
        );
        assert_eq!(
            at("TOO_MANY_REQUESTS", Some(429)),
            (ErrorCode::LimitExceeded, true)
        );
        assert_eq!(at("TIMEOUT", Some(408)), (ErrorCode::Timeout, true));
        // By status when the code is the application's own.
        assert_eq!(at("QUOTA", Some(429)), (ErrorCode::LimitExceeded, true));
        assert_eq!(at("QUOTA", None), (ErrorCode::ExecutionFailed, false));
        assert_eq!(at("QUOTA", Some(418)), (ErrorCode::ExecutionFailed, false));
    }

    #[test]
    fn round_trip_through_http_keeps_the_code() {
        for code in [
            ErrorCode::InvalidInput,
            ErrorCode::PolicyDenied,
            ErrorCode::CredentialRequired,
            ErrorCode::Timeout,
            ErrorCode::LimitExceeded,
            ErrorCode::ExecutionFailed,
        ] {
            for retryable in [false, true] {
                let (c, s) = orpc_code_of(code, retryable);
                let back = row_of(c, Some(s));
                assert_eq!(back.status, s);
                assert_eq!(back.code, code, "{c}");
            }
        }
    }
}
