//! What an MCP client is told (issue 14, issue 18): the `CallToolResult` of
//! a governed call — its output ([`ok_result`]), an error, or an approval
//! request — written once, so the Node and Python adapters give a model the
//! same text, words, hints and `_meta`. The adapters only turn the output
//! into JSON (conversion) and hand the core's result to their SDK.
//!
//! The text starts with the error code (a model reads it first), then the
//! core's model-safe message, then what the model can do next. `_meta`
//! carries the same facts for a client program: under [`ERROR_META`] the
//! error's JSON (code, message, retryable, kind, details), under
//! [`APPROVAL_META`] the request and how to resume it.

use serde_json::{Map, Value, json};

use crate::approval::ApprovalRequest;
use crate::error::{CapabilityError, ErrorCode};
use crate::pipeline::gate::NOT_FOUND_MESSAGE;

/// The request `_meta` key under which a client names an approved request,
/// calling the same tool again to run it.
pub const APPROVAL_ID_META: &str = "orpc-agent/approvalId";
/// The result `_meta` key of an approval-required answer.
pub const APPROVAL_META: &str = "orpc-agent/approval";
/// The result `_meta` key of an error answer.
pub const ERROR_META: &str = "orpc-agent/error";

/// The reason shown when a request has none.
pub const DEFAULT_REASON: &str = "This call needs approval before it runs.";

/// The `CallToolResult` of a call that returned `output` (its JSON value).
/// The text is a string output as it is, anything else its compact JSON
/// text; `structuredContent` is the output when the tool publishes an
/// output schema (MCP requires it then, and the schema is an object's) and
/// the output is an object, else absent; `isError` is false.
pub fn ok_result(output: &Value, publishes_output_schema: bool) -> Value {
    let parts = ok_parts(
        output.is_string(),
        output.is_object(),
        publishes_output_schema,
    );
    let text = match output {
        Value::String(s) if parts.text_as_is => s.clone(),
        other => model_text(other),
    };
    let mut result = Map::new();
    result.insert("content".into(), json!([{"type": "text", "text": text}]));
    if parts.structured {
        // The value the text says, as a JavaScript client reads it back:
        // `10.0` is `10`, `-0.0` is `0` (what Node sends).
        result.insert("structuredContent".into(), js_numbers(output));
    }
    result.insert("isError".into(), false.into());
    Value::Object(result)
}

/// The compact JSON text a model reads of a value, written as
/// JavaScript's `JSON.stringify` writes it, so a model reads the same text
/// from every binding (Node writes it with `JSON.stringify` itself): a
/// float as `Number.prototype.toString` writes it — an integral one
/// without a fraction (`1.0` is `1`), `-0` as `0`, `1e21` as `1e+21`;
/// integers exactly; strings and structure as `serde_json` (the same
/// escapes as `JSON.stringify`).
pub fn model_text(value: &Value) -> String {
    let mut out = Vec::new();
    let mut writer = serde_json::Serializer::with_formatter(&mut out, JsNumbers);
    // Writing a `Value` to memory cannot fail.
    let _ = serde::Serialize::serialize(value, &mut writer);
    String::from_utf8(out).unwrap_or_default()
}

/// `value` with each float as a JavaScript reader of [`model_text`] holds
/// it: the number its `Number.prototype.toString` text reads as (`10.0` is
/// the integer `10`, `-0.0` is `0`, `2^60` as a float is
/// `1152921504606847000`), so a structured value goes over the wire in the
/// same bytes from every binding. Integers, strings and structure stay.
pub fn js_numbers(value: &Value) -> Value {
    match value {
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .and_then(|f| {
                ryu_js::Buffer::new()
                    .format(f)
                    .parse::<serde_json::Number>()
                    .ok()
            })
            .map_or_else(|| value.clone(), Value::Number),
        Value::Array(items) => Value::Array(items.iter().map(js_numbers).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), js_numbers(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `serde_json`'s compact format with JavaScript's float text.
struct JsNumbers;

impl serde_json::ser::Formatter for JsNumbers {
    fn write_f64<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        value: f64,
    ) -> std::io::Result<()> {
        writer.write_all(ryu_js::Buffer::new().format(value).as_bytes())
    }

    fn write_f32<W: ?Sized + std::io::Write>(
        &mut self,
        writer: &mut W,
        value: f32,
    ) -> std::io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }
}

/// [`ok_result`]'s decisions, for a binding that holds the output's JSON
/// itself and builds the result from it (Node, on its hot path): whether
/// the text is the string output as it is (else the compact JSON text), and
/// whether the output is also the `structuredContent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OkParts {
    pub text_as_is: bool,
    pub structured: bool,
}

/// The decisions of [`ok_result`] from what the output is.
pub const fn ok_parts(is_string: bool, is_object: bool, publishes_output_schema: bool) -> OkParts {
    OkParts {
        text_as_is: is_string,
        structured: publishes_output_schema && is_object,
    }
}

/// Whether a tool with this output schema publishes it over MCP: only an
/// object schema can describe `structuredContent`.
pub fn publishes_output_schema(output_schema: Option<&Value>) -> bool {
    output_schema.is_some_and(|s| s.get("type").and_then(Value::as_str) == Some("object"))
}

/// What a model can do next about `error`, by its code. NOT_FOUND says
/// "no such tool" only for the core's capability-level NOT_FOUND (SI-8's
/// one message); a handler's own NOT_FOUND is about what the call asked
/// for, and the tool stays worth calling with other arguments.
pub fn error_hint(error: &CapabilityError) -> Option<&'static str> {
    Some(match error.code {
        ErrorCode::NotFound if error.message == NOT_FOUND_MESSAGE => {
            "No such tool is available here; do not call it again."
        }
        ErrorCode::NotFound => {
            "The tool ran and did not find what the arguments name; check them before calling it again."
        }
        ErrorCode::InvalidInput => "Fix the arguments as described and call the tool again.",
        ErrorCode::PolicyDenied => "This call is not allowed; do not retry it unchanged.",
        ErrorCode::ApprovalPending => {
            "The approval request has not been decided yet; wait for the human decision."
        }
        ErrorCode::ApprovalRejected => "A human rejected this call; do not retry it.",
        ErrorCode::ApprovalExpired => {
            "The approval expired; call the tool again to request a new approval."
        }
        ErrorCode::ApprovalConsumed => {
            "That approval was already used; call the tool again to request a new one."
        }
        ErrorCode::ApprovalNotFound => {
            "No such approval request; call the tool again to request approval."
        }
        ErrorCode::ApprovalInvalid => {
            "The approval does not match this call; call the tool again to request approval."
        }
        ErrorCode::Timeout => "The call ran out of time.",
        ErrorCode::Cancelled => "The call was cancelled.",
        _ => return None,
    })
}

/// The `CallToolResult` of a failed call. `error` must be model-safe (the
/// core's, or a handler's own `CapabilityError`): an adapter turns anything
/// else into INTERNAL before it gets here.
pub fn error_result(error: &CapabilityError) -> Value {
    let hint = error_hint(error);
    let advice = [hint, error.retryable.then_some("It is safe to retry.")]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ");
    let message = error.message.trim_end();
    let ends = message.ends_with(['.', '!', '?']);
    let text = match (advice.is_empty(), ends) {
        (true, _) => format!("{}: {message}", error.code.as_str()),
        (false, true) => format!("{}: {message} {advice}", error.code.as_str()),
        (false, false) => format!("{}: {message}. {advice}", error.code.as_str()),
    };
    json!({
        "isError": true,
        "content": [{"type": "text", "text": text}],
        "_meta": {ERROR_META: js_numbers(&error.to_json())},
    })
}

/// [`error_result`] from an error's parts as a binding holds them. An
/// unknown code is not the application's to invent: INTERNAL, with the
/// core's generic text.
pub fn error_result_from(
    code: &str,
    message: &str,
    retryable: bool,
    details: Option<Value>,
) -> Value {
    let error = match ErrorCode::parse(code) {
        Some(code) => {
            let e = CapabilityError::new(code, message).with_retryable(retryable);
            // Within the bounds of a handler's own details, or dropped (an
            // app's error from outside a call, a frame factory's, is shown
            // no more than one from inside it).
            match details.and_then(crate::limits::error_details) {
                Some(d) => e.with_details(d),
                None => e,
            }
        }
        None => CapabilityError::new(ErrorCode::Internal, crate::error::FAILED_MESSAGE),
    };
    error_result(&error)
}

/// The keys of `_meta` the adapters use, for a binding's constants:
/// `{approvalId, approval, error}`.
pub fn meta_keys() -> Value {
    json!({"approvalId": APPROVAL_ID_META, "approval": APPROVAL_META, "error": ERROR_META})
}

/// A request's reason (the default when it gave none) and its type as the
/// texts quote it (` (type "refund")`, or nothing when untyped).
fn reason_and_kind(request: &ApprovalRequest) -> (&str, String) {
    let reason = request
        .reason
        .as_deref()
        .filter(|r| !r.trim().is_empty())
        .unwrap_or(DEFAULT_REASON);
    let kind = request
        .approval_type
        .as_deref()
        .map(|t| format!(" (type \"{t}\")"))
        .unwrap_or_default();
    (reason, kind)
}

/// The `CallToolResult` of a call that needs approval: an error result (the
/// call did not run), saying how the client runs it once approved — the
/// same tool again with the same arguments (a repeated call finds its
/// request: `Surface::repeated_calls_find_their_request`), or with
/// `_meta {APPROVAL_ID_META: id}`.
pub fn approval_result(request: &ApprovalRequest) -> Value {
    let (reason, kind) = reason_and_kind(request);
    let text = format!(
        "APPROVAL_REQUIRED: {reason} The call did not run. Approval request {id}{kind} is \
         waiting for a human decision. Tell the user it needs approval; once approved, call \
         this tool again with the same arguments to run the approved call (or name the \
         request: _meta {{\"{APPROVAL_ID_META}\": \"{id}\"}}). Calling it again before \
         then returns this same request.",
        id = request.id,
    );
    let mut meta = Map::new();
    meta.insert("status".into(), "approval_required".into());
    meta.insert("requestId".into(), request.id.clone().into());
    meta.insert("capabilityId".into(), request.capability_id.clone().into());
    if let Some(t) = &request.approval_type {
        meta.insert("type".into(), t.clone().into());
    }
    meta.insert("reason".into(), reason.into());
    meta.insert("expiresAt".into(), request.expires_at_ms.into());
    meta.insert(
        "resumeWith".into(),
        json!({"_meta": {APPROVAL_ID_META: request.id}}),
    );
    json!({
        "isError": true,
        "content": [{"type": "text", "text": text}],
        "_meta": {APPROVAL_META: Value::Object(meta)},
    })
}

/// In-band confirmation (MCP elicitation, issue 18): whether a call whose
/// approval request has type `approval_type` is put to the person at the
/// client through `elicitation/create`. Only a type the application maps
/// to the end user (`elicit_types`, e.g. `human-confirmation`), only when
/// the client declared the elicitation capability; an untyped request
/// never is (the application did not say the end user may decide it).
pub fn elicits(approval_type: Option<&str>, elicit_types: &[String], client_elicits: bool) -> bool {
    client_elicits && approval_type.is_some_and(|t| elicit_types.iter().any(|e| e == t))
}

/// The `elicitation/create` parameters of a confirmation: a message naming
/// the tool, the request and the input as the approver may see it (`view`:
/// the capability's approval-input redaction of the stored input), and an
/// empty form (the answer is the action: accept, decline or cancel).
pub fn elicitation_params(
    tool_name: &str,
    request_id: &str,
    reason: Option<&str>,
    view: &Value,
) -> Value {
    let reason = reason
        .filter(|r| !r.trim().is_empty())
        .unwrap_or(DEFAULT_REASON);
    let mut view = view.to_string();
    if let Some((cut, _)) = view.char_indices().nth(ELICITATION_VIEW_CHARS) {
        view.truncate(cut);
        view.push('…');
    }
    let message = format!(
        "Allow \"{tool_name}\" to run with {view}? {reason} (approval request {request_id}; \
         accept runs it once, decline refuses it)"
    );
    json!({"message": message, "requestedSchema": {"type": "object", "properties": {}}})
}

/// What a confirmation's answer decides: only `accept` approves; `decline`,
/// `cancel` and anything else a client sends reject (fail closed).
pub fn elicitation_approves(action: &str) -> bool {
    action == "accept"
}

/// Whether, when the core refused the decision a confirmation's answer
/// asked for (its error `code`; `approves`: the person accepted), the
/// adapter answers with the core's resume of the request through the tool
/// rather than the approval-required result. The request was decided
/// elsewhere (an identical twin call's accept, an approval UI), expired or
/// is gone: the model must read what became of it — it ran, it was
/// rejected, it expired — not "approval required, call again", which would
/// open a second request a person could approve and so run the call twice.
/// A request approved elsewhere and not yet run (`APPROVAL_INVALID`) runs
/// now, once, only if the person accepted: one who declined is never
/// answered by running it (the approval-required result, as for any other
/// refusal: the approver rule, a bad decision field, a store's failure).
pub fn refused_decision_resumes(code: &str, approves: bool) -> bool {
    match code {
        "APPROVAL_CONSUMED" | "APPROVAL_REJECTED" | "APPROVAL_EXPIRED" | "APPROVAL_NOT_FOUND" => {
            true
        }
        "APPROVAL_INVALID" => approves,
        _ => false,
    }
}

/// How much of the input view a confirmation message quotes (characters).
pub const ELICITATION_VIEW_CHARS: usize = 1000;

/// The rejection reason recorded when the person at the client declines.
pub const ELICITATION_DECLINED: &str = "Declined in the MCP client (elicitation).";

/// MCP tasks (protocol 2025-11-25, task-augmented `tools/call`): the task
/// status a finished call's result ends its task in. A result the client
/// must not take as the tool's answer (`isError`: a capability error, a
/// rejected or expired approval) fails the task; anything else completes
/// it. Either way `tasks/result` gives the result itself.
pub fn task_status(result: &Value) -> &'static str {
    if result.get("isError").and_then(Value::as_bool) == Some(true) {
        "failed"
    } else {
        "completed"
    }
}

/// The `statusMessage` of a task whose call waits for approval (status
/// `input_required`): what it waits for and what happens next. Unlike
/// `approval_result`, it does not ask the client to call again: the task
/// itself runs the call once the request is approved.
pub fn task_waiting_message(request: &ApprovalRequest) -> String {
    let (reason, kind) = reason_and_kind(request);
    format!(
        "APPROVAL_REQUIRED: {reason} Approval request {id}{kind} is waiting for a human \
         decision. This task runs the call once when it is approved and fails if it is \
         rejected or expires.",
        id = request.id,
    )
}

#[cfg(test)]
mod tests {

    #[test]
    fn model_text_writes_numbers_as_javascript_does() {
        let v = json!({"a": 1.0, "b": -0.0, "c": [1.5, 2.0, 1e21, 1e-7, 1e20, 0.1], "i": 9_007_199_254_740_993u64, "s": "é\n\u{1}"});
        assert_eq!(
            model_text(&v),
            r#"{"a":1,"b":0,"c":[1.5,2,1e+21,1e-7,100000000000000000000,0.1],"i":9007199254740993,"s":"é\n\u0001"}"#
        );
        assert_eq!(
            ok_result(&json!([1.0, -0.0]), false)["content"][0]["text"],
            "[1,0]"
        );
    }

    #[test]
    fn structured_content_and_error_details_hold_the_numbers_the_text_says() {
        let output =
            json!({"z": -0.0, "t": 10.0, "big": 1_152_921_504_606_846_976.0_f64, "f": 0.5, "i": 3});
        let result = ok_result(&output, true);
        assert_eq!(
            serde_json::to_string(&result["structuredContent"]).unwrap_or_default(),
            r#"{"z":0,"t":10,"big":1152921504606847000,"f":0.5,"i":3}"#
        );
        let error = CapabilityError::new(ErrorCode::NotFound, "gone")
            .with_details(json!({"x": -0.0, "y": 10.0}));
        assert_eq!(
            serde_json::to_string(&error_result(&error)["_meta"][ERROR_META]["details"])
                .unwrap_or_default(),
            r#"{"x":0,"y":10}"#
        );
    }

    use super::*;
    use crate::frame::Actor;
    use crate::meta::Surface;

    fn text_of(result: &Value) -> &str {
        result["content"][0]["text"].as_str().unwrap_or_default()
    }

    #[test]
    fn a_decision_refused_because_the_request_was_decided_or_is_gone_answers_with_the_resume() {
        use crate::approval::{ApprovalStatus, StoreError};
        let id = || "apr_1".to_owned();
        let decided = |status| StoreError::AlreadyDecided { id: id(), status };
        for approves in [true, false] {
            for resumes in [
                decided(ApprovalStatus::Consumed),
                decided(ApprovalStatus::Rejected),
                StoreError::Expired { id: id() },
                StoreError::NotFound(id()),
            ] {
                let code = resumes.code();
                assert!(
                    refused_decision_resumes(code.as_str(), approves),
                    "{resumes}"
                );
            }
            for pending in [
                StoreError::ApproverIsActor { id: id() },
                StoreError::ApproverRequired { id: id() },
                StoreError::BadDecision("the reason contains a NUL character".into()),
                StoreError::Invalid("x".into()),
            ] {
                let code = pending.code();
                assert!(
                    !refused_decision_resumes(code.as_str(), approves),
                    "{pending}"
                );
            }
        }
        // Approved elsewhere, not yet run: it runs in this call only if the
        // person accepted; a decline never runs it.
        let approved = decided(ApprovalStatus::Approved).code();
        assert!(refused_decision_resumes(approved.as_str(), true));
        assert!(!refused_decision_resumes(approved.as_str(), false));
    }

    #[test]
    fn confirmations_only_for_mapped_types_and_only_accept_approves() {
        let types = vec!["human-confirmation".to_owned()];
        assert!(elicits(Some("human-confirmation"), &types, true));
        assert!(!elicits(Some("human-confirmation"), &types, false));
        assert!(!elicits(Some("manager"), &types, true));
        assert!(!elicits(None, &types, true));
        assert!(elicitation_approves("accept"));
        for other in ["decline", "cancel", "ACCEPT", ""] {
            assert!(!elicitation_approves(other), "{other}");
        }
        let p = elicitation_params("orders_refund", "apr_1", None, &json!({"amount": 5}));
        assert_eq!(
            p["requestedSchema"],
            json!({"type": "object", "properties": {}})
        );
        let m = p["message"].as_str().unwrap();
        assert!(
            m.starts_with("Allow \"orders_refund\" to run with {\"amount\":5}?")
                && !m.contains("  "),
            "{m}"
        );
        assert!(m.contains("apr_1"), "{m}");
        let long = elicitation_params("t", "apr_2", None, &json!("x".repeat(5000)));
        let m = long["message"].as_str().unwrap();
        assert!(m.len() < 1200 && m.contains('…'), "{m}");
    }

    #[test]
    fn a_task_fails_on_an_error_result_and_completes_otherwise() {
        assert_eq!(
            task_status(&json!({"isError": true, "content": []})),
            "failed"
        );
        assert_eq!(
            task_status(&json!({"isError": false, "content": []})),
            "completed"
        );
        assert_eq!(task_status(&json!({"content": []})), "completed");
    }

    #[test]
    fn only_the_cores_not_found_says_there_is_no_such_tool() {
        let missing = error_result(&crate::pipeline::gate::not_found("orders_x"));
        assert!(text_of(&missing).contains("No such tool"), "{missing}");
        let domain = error_result(&CapabilityError::new(ErrorCode::NotFound, "No order o-9."));
        assert!(!text_of(&domain).contains("No such tool"), "{domain}");
        assert!(
            text_of(&domain).starts_with("NOT_FOUND: No order o-9. The tool ran"),
            "{domain}"
        );
    }

    #[test]
    fn an_error_names_its_code_message_and_what_to_do_next() {
        let e = CapabilityError::new(ErrorCode::PolicyDenied, "Not during the freeze");
        let r = error_result(&e);
        assert_eq!(
            r["content"][0]["text"],
            "POLICY_DENIED: Not during the freeze. This call is not allowed; do not retry it unchanged."
        );
        assert_eq!(r["_meta"][ERROR_META]["code"], "POLICY_DENIED");
        assert_eq!(r["isError"], true);
        let e =
            CapabilityError::new(ErrorCode::Internal, "The store is busy.").with_retryable(true);
        assert_eq!(
            error_result(&e)["content"][0]["text"],
            "INTERNAL: The store is busy. It is safe to retry."
        );
        let e = CapabilityError::new(
            ErrorCode::ExecutionFailed,
            "The capability failed while running.",
        );
        assert_eq!(
            error_result(&e)["content"][0]["text"],
            "EXECUTION_FAILED: The capability failed while running."
        );
    }

    #[test]
    fn an_output_is_its_text_and_structured_only_with_an_object_schema() {
        assert_eq!(
            ok_result(&json!({"id": 1, "note": "ü"}), true),
            json!({"content": [{"type": "text", "text": "{\"id\":1,\"note\":\"ü\"}"}],
                   "structuredContent": {"id": 1, "note": "ü"}, "isError": false})
        );
        assert_eq!(
            ok_result(&json!({"id": 1}), false),
            json!({"content": [{"type": "text", "text": "{\"id\":1}"}], "isError": false})
        );
        assert_eq!(
            ok_result(&json!("plain"), true)["content"][0]["text"],
            "plain"
        );
        assert_eq!(
            ok_result(&json!([1, 2]), true).get("structuredContent"),
            None
        );
        assert_eq!(ok_result(&Value::Null, false)["content"][0]["text"], "null");
        assert!(publishes_output_schema(Some(&json!({"type": "object"}))));
        assert!(!publishes_output_schema(Some(&json!({"type": "array"}))));
        assert!(!publishes_output_schema(None));
    }

    #[test]
    fn an_approval_says_how_to_resume() {
        let r = ApprovalRequest::new(
            "pay.send",
            json!({}),
            "0".repeat(64),
            Surface::Mcp,
            Actor::default(),
            Some("manager".into()),
            None,
            1_000,
            60_000,
        );
        let out = approval_result(&r);
        let meta = &out["_meta"][APPROVAL_META];
        assert_eq!(meta["requestId"], r.id.as_str());
        assert_eq!(meta["resumeWith"]["_meta"][APPROVAL_ID_META], r.id.as_str());
        assert_eq!(meta["expiresAt"], 61_000);
        assert_eq!(meta["reason"], DEFAULT_REASON);
        let text = out["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.starts_with("APPROVAL_REQUIRED: "), "{text}");
        assert!(text.contains("(type \"manager\")"), "{text}");
        assert!(!out.to_string().contains(&"0".repeat(64)), "no input hash");
    }
}
