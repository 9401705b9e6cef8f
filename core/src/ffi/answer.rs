//! Answers built from primitives: a code, at most one text and one flag,
//! the host's clock. Every binding carries its answers to the core this
//! way (one entry point each) instead of one exported function per answer,
//! so which text or flag an answer takes, and what an unreadable one
//! means, is written here once. Answers with more fields (a policy's
//! decision, a handler's error, a host-measured input) keep their own
//! builders ([`super::policy_answer`], [`Answer::HandlerError`]).
//!
//! The codes are mirrored in the generated protocol files (`cargo run -p
//! orpc-agent-core --example mirrors`: `Answer` in TypeScript, `AnswerCode`
//! in Swift); Python's module builds its `ANSWER_*` constants from
//! [`answer_code::ALL`] at import.

use serde_json::Value;

use crate::error::{CapabilityError, ErrorCode};
use crate::pipeline::{Answer, Payload};

/// The answer codes. The comment on each says what `text` and `flag`
/// carry; an answer that needs a text and has none is
/// [`Answer::Malformed`].
pub mod answer_code {
    /// `ValidateInput`: valid; the host keeps the validated value.
    pub const INPUT_VALID: u8 = 0;
    /// `ValidateInput`: invalid; `text` is the message for the model (a
    /// validator's own `CapabilityError`).
    pub const INPUT_INVALID: u8 = 1;
    /// `ValidateInput`: `text` is the validator's issues as JSON,
    /// `[{path?: [string], message: string}]` ([`super::super::input_issues_answer`]).
    pub const INPUT_ISSUES: u8 = 2;
    /// `ValidateInput`: the validator threw instead of answering.
    pub const INPUT_VALIDATOR_FAILED: u8 = 3;
    /// `ValidateInput`, `ValidateOutput`, `RedactOutput`: the hook had not
    /// answered by the call's deadline.
    pub const DEADLINE_PASSED: u8 = 4;
    /// `EvaluatePolicy`: the policy threw, timed out or answered nonsense.
    pub const POLICY_FAILED: u8 = 5;
    /// `ExportInput`: `text` is the validated input as JSON; `flag` says
    /// the text gives the host its value back (false: refused,
    /// [`crate::pipeline::Answer::input_not_rebuilt`]).
    pub const INPUT_EXPORTED: u8 = 6;
    /// `ExportInput`: converting the input threw; `text` is the library's
    /// or the app's `CapabilityError` message, or none (the core's reason).
    pub const INPUT_NOT_EXPORTABLE: u8 = 7;
    /// `ExportInput`: the input's JSON form does not rebuild it.
    pub const INPUT_NOT_REBUILT: u8 = 8;
    /// `RunHandler`: the handler returned; the host keeps the output.
    pub const HANDLER_OK: u8 = 9;
    /// `RunHandler`: the deadline timer fired first.
    pub const HANDLER_TIMED_OUT: u8 = 10;
    /// `RunHandler` of a resumed call: the stored input no longer decodes
    /// as the handler's input type.
    pub const STORED_INPUT_UNUSABLE: u8 = 11;
    /// `RunHandler`, `Sleep` or any awaited hook: the caller cancelled.
    pub const CANCELLED: u8 = 12;
    /// `AskRetryOn`: `flag` is the host's `retryOn` verdict.
    pub const RETRY_ON: u8 = 13;
    /// `Sleep`: the wait is over.
    pub const SLEPT: u8 = 14;
    /// `ValidateOutput`: valid; the host keeps the validated value.
    pub const OUTPUT_VALID: u8 = 15;
    /// `ValidateOutput`: invalid (the validator's message is not kept).
    pub const OUTPUT_INVALID: u8 = 16;
    /// `RedactOutput`: redacted; the host keeps the redacted value.
    pub const REDACTED: u8 = 17;
    /// `RedactOutput`: the redactor threw.
    pub const REDACTOR_FAILED: u8 = 18;
    /// `ExportOutput`: `text` is the redacted output as JSON, or none (it
    /// has no JSON form: recorded as `null`).
    pub const OUTPUT_EXPORTED: u8 = 19;
    /// `Audit`: delivered.
    pub const AUDITED: u8 = 20;

    /// Every code with its name as the generated mirrors spell it.
    pub const ALL: [(u8, &str); 21] = [
        (INPUT_VALID, "InputValid"),
        (INPUT_INVALID, "InputInvalid"),
        (INPUT_ISSUES, "InputIssues"),
        (INPUT_VALIDATOR_FAILED, "InputValidatorFailed"),
        (DEADLINE_PASSED, "DeadlinePassed"),
        (POLICY_FAILED, "PolicyFailed"),
        (INPUT_EXPORTED, "InputExported"),
        (INPUT_NOT_EXPORTABLE, "InputNotExportable"),
        (INPUT_NOT_REBUILT, "InputNotRebuilt"),
        (HANDLER_OK, "HandlerOk"),
        (HANDLER_TIMED_OUT, "HandlerTimedOut"),
        (STORED_INPUT_UNUSABLE, "StoredInputUnusable"),
        (CANCELLED, "Cancelled"),
        (RETRY_ON, "RetryOn"),
        (SLEPT, "Slept"),
        (OUTPUT_VALID, "OutputValid"),
        (OUTPUT_INVALID, "OutputInvalid"),
        (REDACTED, "Redacted"),
        (REDACTOR_FAILED, "RedactorFailed"),
        (OUTPUT_EXPORTED, "OutputExported"),
        (AUDITED, "Audited"),
    ];
}

/// The answer a host gave as `code` (an [`answer_code`]) with `text` and
/// `flag`, at `now_ms` on its clock. An unknown code, or a code without
/// the text it needs, is [`Answer::Malformed`]: it fits no step, so the
/// call ends INTERNAL and is audited like any other.
pub fn answer(code: u8, text: Option<String>, flag: bool, now_ms: u64) -> Answer {
    use answer_code::*;
    match (code, text) {
        (INPUT_VALID, _) => Answer::InputValid(Payload::Host),
        (INPUT_INVALID, Some(message)) => Answer::InputInvalid(message),
        (INPUT_ISSUES, Some(issues)) => super::input_issues_answer(&issues),
        (INPUT_VALIDATOR_FAILED, _) => Answer::InputValidatorFailed,
        (DEADLINE_PASSED, _) => Answer::DeadlinePassed { now_ms },
        (POLICY_FAILED, _) => Answer::PolicyFailed(String::new()),
        (INPUT_EXPORTED, Some(_)) if !flag => Answer::input_not_rebuilt(),
        (INPUT_EXPORTED, Some(json)) => Answer::input_exported(exported_input(&json)),
        (INPUT_NOT_EXPORTABLE, reason) => Answer::input_not_exportable(reason),
        (INPUT_NOT_REBUILT, _) => Answer::input_not_rebuilt(),
        (HANDLER_OK, _) => Answer::HandlerOk {
            output: Payload::Host,
            now_ms,
        },
        (HANDLER_TIMED_OUT, _) => Answer::HandlerTimedOut { now_ms },
        (STORED_INPUT_UNUSABLE, _) => Answer::StoredInputUnusable { now_ms },
        (CANCELLED, _) => Answer::Cancelled { now_ms },
        (RETRY_ON, _) => Answer::RetryOn(flag),
        (SLEPT, _) => Answer::Slept { now_ms },
        (OUTPUT_VALID, _) => Answer::OutputValid(Payload::Host),
        (OUTPUT_INVALID, _) => Answer::OutputInvalid(String::new()),
        (REDACTED, _) => Answer::Redacted(Payload::Host),
        (REDACTOR_FAILED, _) => Answer::RedactorFailed,
        (OUTPUT_EXPORTED, json) => {
            Answer::output_exported(json.and_then(|t| serde_json::from_str::<Value>(&t).ok()))
        }
        (AUDITED, _) => Answer::Audited,
        (code, _) => Answer::Malformed { code },
    }
}

/// The validated input from the JSON text a host exported it as, or why
/// it has none, in the words of a refused export ("The input cannot be
/// bound to an approval: …"): text nested past serde's own limit (which
/// is past the input limits' depth too) says so; any other text that does
/// not parse has no JSON form. One reading for every binding's export.
pub fn exported_input(text: &str) -> Result<Value, CapabilityError> {
    serde_json::from_str(text).map_err(|e| {
        let reason = if e.to_string().contains("recursion limit") {
            format!(
                "it nests deeper than {} levels.",
                crate::limits::MAX_INPUT_DEPTH
            )
        } else {
            crate::pipeline::step::NO_JSON_FORM.to_owned()
        };
        CapabilityError::new(ErrorCode::InvalidInput, reason)
    })
}

/// [`Answer::HandlerError`] as a host reports a failed handler: `code` is
/// the handler's own `CapabilityError` code, or none for a plain thrown
/// error (EXECUTION_FAILED with a generic message; `message` is only the
/// operator's). An unknown code counts as a plain error. `details_json` is
/// the error's `details` as JSON text (none when it has none or no JSON
/// form): kept with a code and within [`crate::limits::ERROR_DETAILS`],
/// else dropped.
pub fn handler_error(
    code: Option<&str>,
    message: String,
    retryable: bool,
    details_json: Option<&str>,
    now_ms: u64,
) -> Answer {
    let details = details_json.and_then(crate::limits::error_details_text);
    handler_error_with(code, message, retryable, details, now_ms)
}

/// [`handler_error`] for a host that converts the details to a JSON value
/// itself.
pub fn handler_error_with(
    code: Option<&str>,
    message: String,
    retryable: bool,
    details: Option<Value>,
    now_ms: u64,
) -> Answer {
    Answer::HandlerError {
        code: code.and_then(ErrorCode::parse),
        message,
        retryable,
        // Kept or dropped by the invocation (never for a plain throw).
        details: details.map(Box::new),
        now_ms,
    }
}

/// [`Answer::HandlerError`] for an oRPC `ORPCError` a handler threw: its
/// fields as the host read them (`defined` as oRPC's `validateORPCError`
/// decided, `data_json` its `data` as JSON text). The core's table
/// ([`crate::orpc_error::handler_error`]) decides the code, `retryable`
/// and whether the message and the `data` (as details) are shown.
pub fn orpc_handler_error(
    orpc_code: &str,
    status: Option<u16>,
    defined: bool,
    message: &str,
    data_json: Option<&str>,
    now_ms: u64,
) -> Answer {
    let data = data_json.and_then(crate::limits::error_details_text);
    let e = crate::orpc_error::handler_error(orpc_code, status, defined, message, data);
    Answer::HandlerError {
        code: Some(e.code),
        message: e.message,
        retryable: e.retryable,
        details: e.details.map(Box::new),
        now_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::answer_code::*;
    use super::*;

    fn name(code: u8, text: Option<&str>, flag: bool) -> &'static str {
        answer(code, text.map(str::to_owned), flag, 5).name()
    }

    #[test]
    fn every_code_builds_the_answer_it_names() {
        for (code, expected) in ALL {
            let built = name(code, Some("[]"), true);
            let expected = match expected {
                // Both are ways of refusing the input's JSON form.
                "InputNotRebuilt" => "InputNotExportable",
                other => other,
            };
            assert_eq!(built, expected, "code {code}");
        }
    }

    #[test]
    fn codes_are_dense_and_in_order() {
        for (i, (code, _)) in ALL.iter().enumerate() {
            assert_eq!(usize::from(*code), i);
        }
    }

    #[test]
    fn an_unknown_code_or_a_missing_text_is_malformed() {
        assert!(matches!(
            answer(21, None, false, 0),
            Answer::Malformed { code: 21 }
        ));
        assert!(matches!(
            answer(255, Some("x".into()), true, 0),
            Answer::Malformed { code: 255 }
        ));
        for code in [INPUT_INVALID, INPUT_ISSUES, INPUT_EXPORTED] {
            assert!(
                matches!(answer(code, None, true, 0), Answer::Malformed { .. }),
                "{code}"
            );
        }
    }

    #[test]
    fn texts_and_flags_reach_the_answer() {
        assert!(matches!(
            answer(INPUT_INVALID, Some("bad".into()), false, 0),
            Answer::InputInvalid(m) if m == "bad"
        ));
        assert!(matches!(
            answer(RETRY_ON, None, true, 0),
            Answer::RetryOn(true)
        ));
        assert!(matches!(
            answer(RETRY_ON, None, false, 0),
            Answer::RetryOn(false)
        ));
        assert!(matches!(
            answer(HANDLER_OK, None, false, 42),
            Answer::HandlerOk {
                output: Payload::Host,
                now_ms: 42
            }
        ));
        // Exported input: parsed when it rebuilds; text that is not JSON,
        // or that does not rebuild, is no JSON form to bind.
        assert!(matches!(
            answer(INPUT_EXPORTED, Some("{\"a\":1}".into()), true, 0),
            Answer::InputExported(v) if v["a"] == 1
        ));
        assert!(matches!(
            answer(INPUT_EXPORTED, Some("{".into()), true, 0),
            Answer::InputNotExportable(m) if m == crate::pipeline::step::NO_JSON_FORM
        ));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(
            answer(INPUT_EXPORTED, Some(deep), true, 0),
            Answer::InputNotExportable(m) if m == "it nests deeper than 64 levels."
        ));
        assert!(matches!(
            answer(INPUT_EXPORTED, Some("{}".into()), false, 0),
            Answer::InputNotExportable(_)
        ));
        // An output with no (readable) JSON form is recorded as null.
        for text in [None, Some("{")] {
            assert!(matches!(
                answer(OUTPUT_EXPORTED, text.map(str::to_owned), false, 0),
                Answer::OutputExported(Value::Null)
            ));
        }
        // Issues of the wrong shape: a validator that failed.
        assert!(matches!(
            answer(INPUT_ISSUES, Some("{}".into()), false, 0),
            Answer::InputValidatorFailed
        ));
    }

    #[test]
    fn a_handler_error_with_an_unknown_code_is_a_plain_error() {
        let Answer::HandlerError { code, .. } =
            handler_error(Some("NOPE"), "x".into(), true, None, 0)
        else {
            panic!("not a handler error");
        };
        assert_eq!(code, None);
        let Answer::HandlerError { code, .. } =
            handler_error(Some("TIMEOUT"), "x".into(), true, None, 0)
        else {
            panic!("not a handler error");
        };
        assert_eq!(code, Some(ErrorCode::Timeout));
    }

    fn details_of(a: Answer) -> Option<Value> {
        let Answer::HandlerError { details, .. } = a else {
            panic!("not a handler error");
        };
        details.map(|d| *d)
    }

    #[test]
    fn a_handler_error_carries_its_details_as_json_within_the_size_limit() {
        let d = Some(r#"{"retryAfterMs":500}"#);
        let kept = details_of(handler_error(
            Some("LIMIT_EXCEEDED"),
            "x".into(),
            true,
            d,
            0,
        ));
        assert_eq!(kept, Some(serde_json::json!({"retryAfterMs": 500})));
        // A plain throw's details are dropped by the invocation, the one
        // place that rule is written (pipeline_machine.rs,
        // `a_plain_error_never_shows_details`).
        // Not JSON, or over the size limit: dropped before parsing.
        assert_eq!(
            details_of(handler_error(
                Some("TIMEOUT"),
                "x".into(),
                true,
                Some("{"),
                0
            )),
            None
        );
        let big = format!("\"{}\"", "a".repeat(crate::limits::ERROR_DETAILS.max_bytes));
        assert_eq!(
            details_of(handler_error(
                Some("TIMEOUT"),
                "x".into(),
                true,
                Some(&big),
                0
            )),
            None
        );
    }

    #[test]
    fn only_a_declared_orpc_error_shows_its_data() {
        let data = Some(r#"{"orderId":"o-7"}"#);
        let shown = details_of(orpc_handler_error(
            "CONFLICT",
            Some(409),
            true,
            "Paid.",
            data,
            0,
        ));
        assert_eq!(shown, Some(serde_json::json!({"orderId": "o-7"})));
        let hidden = details_of(orpc_handler_error(
            "CONFLICT",
            Some(409),
            false,
            "Paid.",
            data,
            0,
        ));
        assert_eq!(hidden, None);
    }
}
