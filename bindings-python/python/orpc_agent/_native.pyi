"""Stubs of the native module (Rust, pyo3). Checked by mypy.stubtest."""

from collections.abc import Callable, Coroutine, Generator, Mapping, Sequence
from typing import Any, Generic, Literal, TypeVar, final

__all__ = [
    "telemetry_span_parent",
    "telemetry_recorded_trace",
    "telemetry_names",
    "Frame",
    "NativeRegistry",
    "Invocation",
    "InvokeOk",
    "GovernedCall",
    "_install_error_factories",
    "all_error_codes",
    "error_kind",
    "default_retryable",
    "input_hash",
    "MAX_HASH_DEPTH",
    "APPROVAL_VIEW_FAILED_MESSAGE",
    "INTERNAL_MESSAGE",
    "DONE_OK",
    "DECISION_CODE",
    "ANSWER_INPUT_VALID",
    "ANSWER_INPUT_INVALID",
    "ANSWER_INPUT_ISSUES",
    "ANSWER_INPUT_VALIDATOR_FAILED",
    "ANSWER_DEADLINE_PASSED",
    "ANSWER_POLICY_FAILED",
    "ANSWER_INPUT_EXPORTED",
    "ANSWER_INPUT_NOT_EXPORTABLE",
    "ANSWER_INPUT_NOT_REBUILT",
    "ANSWER_HANDLER_OK",
    "ANSWER_HANDLER_TIMED_OUT",
    "ANSWER_STORED_INPUT_UNUSABLE",
    "ANSWER_CANCELLED",
    "ANSWER_RETRY_ON",
    "ANSWER_SLEPT",
    "ANSWER_OUTPUT_VALID",
    "ANSWER_OUTPUT_INVALID",
    "ANSWER_REDACTED",
    "ANSWER_REDACTOR_FAILED",
    "ANSWER_OUTPUT_EXPORTED",
    "ANSWER_AUDITED",
    "APPROVAL_VIEW_AS_STORED",
    "APPROVAL_VIEW_REDACT",
    "SUSPENDED",
    "VALIDATOR_RAISED",
    "HANDLER_RAISED",
    "VALIDATE_INPUT",
    "EVALUATE_POLICY",
    "EXPORT_INPUT",
    "PERSIST_APPROVAL",
    "CONSUME_APPROVAL",
    "RUN_HANDLER",
    "ASK_RETRY_ON",
    "SLEEP",
    "VALIDATE_OUTPUT",
    "REDACT_OUTPUT",
    "EXPORT_OUTPUT",
    "AUDIT",
    "DONE",
    "StoreAnswer",
    "Pending",
    "store_step",
    "store_answered",
    "approval_page",
    "approval_page_async",
    "approval_get_async",
    "approval_get_blocking",
    "decide_async",
    "decide_blocking",
    "audit_stats",
    "audit_flush",
    "audit_flush_async",
    "MCP_APPROVAL_ID_META",
    "MCP_APPROVAL_META",
    "MCP_ERROR_META",
    "mcp_error_result",
    "mcp_approval_result",
    "mcp_ok_result",
    "model_text",
    "mcp_elicits",
    "mcp_elicitation_params",
    "mcp_elicitation_approves",
    "mcp_refused_decision_resumes",
    "mcp_elicitation_declined",
    "AGENT_TOOL_UNKNOWN_APPROVAL",
    "AGENT_TOOL_OUTPUT_NOT_JSON",
    "AGENT_TOOL_FAILED",
    "AGENT_TOOL_UNKNOWN_INTERRUPTION",
    "agent_tool_approval_key",
    "agent_tool_made_for_tool",
    "agent_tool_approval_required_text",
    "agent_tool_kept_request",
    "agent_tool_recorded_approver",
    "std_meta_decode",
    "std_meta_encode",
    "std_meta_check",
    "act_component_inspect",
    "act_component_embed",
    "act_manifest_check",
    "std_forward_wrap",
    "std_forward_unwrap",
    "capability_grant_decide",
    "std_tool_definition_meta",
]

MAX_HASH_DEPTH: int
APPROVAL_VIEW_FAILED_MESSAGE: str
INTERNAL_MESSAGE: str
VALIDATE_INPUT: int
EVALUATE_POLICY: int
EXPORT_INPUT: int
PERSIST_APPROVAL: int
CONSUME_APPROVAL: int
RUN_HANDLER: int
ASK_RETRY_ON: int
SLEEP: int
VALIDATE_OUTPUT: int
REDACT_OUTPUT: int
EXPORT_OUTPUT: int
AUDIT: int
DONE: int
DONE_OK: int
DECISION_CODE: dict[str, int]
ANSWER_INPUT_VALID: int
ANSWER_INPUT_INVALID: int
ANSWER_INPUT_ISSUES: int
ANSWER_INPUT_VALIDATOR_FAILED: int
ANSWER_DEADLINE_PASSED: int
ANSWER_POLICY_FAILED: int
ANSWER_INPUT_EXPORTED: int
ANSWER_INPUT_NOT_EXPORTABLE: int
ANSWER_INPUT_NOT_REBUILT: int
ANSWER_HANDLER_OK: int
ANSWER_HANDLER_TIMED_OUT: int
ANSWER_STORED_INPUT_UNUSABLE: int
ANSWER_CANCELLED: int
ANSWER_RETRY_ON: int
ANSWER_SLEPT: int
ANSWER_OUTPUT_VALID: int
ANSWER_OUTPUT_INVALID: int
ANSWER_REDACTED: int
ANSWER_REDACTOR_FAILED: int
ANSWER_OUTPUT_EXPORTED: int
ANSWER_AUDITED: int
APPROVAL_VIEW_AS_STORED: int
APPROVAL_VIEW_REDACT: int
SUSPENDED: int
VALIDATOR_RAISED: int
HANDLER_RAISED: int

_T = TypeVar("_T")

@final
class InvokeOk(Generic[_T]):
    """The call ran; ``output`` is the (redacted) output."""

    def __new__(cls, output: _T) -> InvokeOk[_T]: ...
    @property
    def output(self) -> _T: ...
    @property
    def status(self) -> Literal["ok"]: ...

@final
class GovernedCall(Coroutine[Any, Any, Any]):
    """What ``registry.invoke`` returns: await it for ``InvokeOk`` or ``ApprovalRequired``."""

    def __await__(self) -> Generator[Any, None, Any]: ...
    def __next__(self) -> Any: ...
    def send(self, value: Any, /) -> Any: ...
    def throw(self, typ: Any, val: Any = ..., tb: Any = ..., /) -> Any: ...
    def close(self) -> None: ...

def all_error_codes() -> list[str]: ...
def error_kind(code: str) -> str | None: ...
def default_retryable(code: str) -> bool | None: ...
def input_hash(capability_id: str, input: Any) -> str: ...
def _install_error_factories(
    capability: Callable[..., BaseException], registry: Callable[..., BaseException]
) -> None: ...

@final
class Frame:
    """Who calls, from which surface, under which trace. Immutable; reuse it."""

    def __new__(
        cls,
        surface: str,
        *,
        actor: dict[str, Any] | None = None,
        traceparent: str | None = None,
        tracestate: str | None = None,
        request_id: str | None = None,
        agent_id: str | None = None,
        session_id: str | None = None,
        context: Any = None,
    ) -> Frame: ...
    @property
    def surface(self) -> str: ...
    @property
    def actor(self) -> dict[str, Any]: ...
    @property
    def actor_id(self) -> str | None: ...
    @property
    def traceparent(self) -> str | None: ...
    @property
    def tracestate(self) -> str | None: ...
    @property
    def request_id(self) -> str | None: ...
    @property
    def agent_id(self) -> str | None: ...
    @property
    def session_id(self) -> str | None: ...
    @property
    def context(self) -> Any: ...

@final
class NativeRegistry:
    def __new__(
        cls,
        declarations: str,
        options: str,
        store: str,
        *,
        audit: Callable[[dict[str, Any]], Any] | None = None,
        audit_payloads: bool = False,
        clock: Callable[[], int] | None = None,
        postgres_options: str | None = None,
        audit_postgres: tuple[str, str] | None = None,
        telemetry: Callable[[dict[str, Any]], Any] | None = None,
        span_payloads: bool = False,
    ) -> NativeRegistry: ...
    def index_of(self, id: str) -> int | None: ...
    def resolve(self, id_or_tool_name: str) -> int | None: ...
    def id_at(self, index: int) -> str | None: ...
    def now_ms(self) -> int: ...
    def invoke_fast(
        self, name: str, frame: Frame, input: Any
    ) -> Any: ...  # InvokeOk, (Invocation, kind, value, extra), or None
    def set_fast_paths(
        self,
        paths: dict[
            str, tuple[int, Callable[[Any], Any] | None, Callable[..., Any] | None, Callable[[Any], Any] | None]
        ],
    ) -> None: ...
    def invoke(self, id_or_tool_name: str, input: Any = None, frame: Any = None) -> GovernedCall: ...
    def set_invoke_host(self, host: Any, default_frame: Frame) -> None: ...
    def start_name(self, name: str, frame: Frame, input: Any) -> Invocation: ...
    def resume(
        self,
        approval_id: str,
        frame: Frame,
        by_requester: bool = False,
        through_tool: str | None = None,
        cancelled: bool = False,
    ) -> Invocation: ...
    def approval_get(self, id: str) -> dict[str, Any] | None: ...
    def approval_list(self, filter: dict[str, Any]) -> list[dict[str, Any]]: ...
    def decide(
        self, id: str, approve: bool, approver: str | None = None, reason: str | None = None
    ) -> dict[str, Any]: ...
    def approval_input_view(self, request: dict[str, Any]) -> tuple[int, int, dict[str, Any] | None, int]: ...
    def inspect(self) -> dict[str, Any]: ...
    def descriptors(self, surface: str) -> list[dict[str, Any]]: ...
    def descriptors_cbor(self, surface: str) -> bytes: ...

@final
class Invocation:
    def progress(self, done: Any, total: Any = None) -> tuple[int, int | None] | None: ...
    def advance(self) -> int: ...
    def advance_at(self) -> int: ...
    @property
    def capability_index(self) -> int | None: ...
    @property
    def capability_id(self) -> str | None: ...
    @property
    def resumed(self) -> bool: ...
    @property
    def attempt(self) -> int: ...
    @property
    def deadline_at_ms(self) -> int: ...
    def remaining_s(self) -> float: ...
    def call_remaining_s(self) -> float: ...
    def sleep_s(self) -> float: ...
    def policy_at(self) -> tuple[int, int, float] | None: ...
    def frame(self) -> dict[str, Any]: ...
    def redaction_info(self) -> dict[str, Any]: ...
    def input_json(self) -> Any: ...
    def retry_error(self) -> BaseException | None: ...
    def answer(self, code: int, text: str | None = None, flag: object = None) -> int: ...
    def policy_decision(
        self, kind: int, reason: object = None, approval_type: object = None, expires_in_ms: object = None
    ) -> int: ...
    def input_exported(self, value: Any) -> int: ...
    def output_exported(self, value: Any) -> int: ...
    def handler_error(self, code: str | None, message: str, retryable: bool, details: Any = None) -> int: ...
    def abandon(self) -> int: ...
    def finish(self) -> dict[str, Any] | None: ...

# PostgreSQL (src/postgres.rs): store steps and approval calls for stores that wait.
@final
class StoreAnswer: ...

@final
class Pending:
    def wait(self) -> Any: ...

def store_step(inv: Invocation) -> Pending: ...
def store_answered(inv: Invocation, answer: StoreAnswer) -> int: ...
def approval_page(reg: NativeRegistry, filter: Any) -> tuple[list[dict[str, Any]], str | None]: ...
def approval_page_async(reg: NativeRegistry, filter: Any) -> Pending: ...
def approval_get_async(reg: NativeRegistry, id: str) -> Pending: ...
def approval_get_blocking(reg: NativeRegistry, id: str) -> dict[str, Any] | None: ...
def decide_async(
    reg: NativeRegistry, id: str, approve: bool, approver: str | None = None, reason: str | None = None
) -> Pending: ...
def decide_blocking(
    reg: NativeRegistry, id: str, approve: bool, approver: str | None = None, reason: str | None = None
) -> dict[str, Any]: ...
def audit_stats(reg: NativeRegistry) -> tuple[int, int, int] | None: ...
def audit_flush(reg: NativeRegistry) -> None: ...
def audit_flush_async(reg: NativeRegistry) -> Pending: ...

MCP_APPROVAL_ID_META: str
MCP_APPROVAL_META: str
MCP_ERROR_META: str

def mcp_error_result(code: str, message: str, retryable: bool, details: Any = None) -> dict[str, Any]: ...
def mcp_approval_result(request: Mapping[str, Any]) -> dict[str, Any]: ...
def mcp_ok_result(output: Any, publishes_output_schema: bool) -> dict[str, Any]: ...
def model_text(output: Any) -> str: ...
def telemetry_span_parent(traceparent: str, tracestate: str | None = None) -> dict[str, Any] | None: ...
def telemetry_recorded_trace(
    frame_traceparent: str | None,
    frame_tracestate: str | None,
    trace_id: str,
    span_id: str,
    trace_flags: int,
    span_tracestate: str | None,
) -> tuple[str, str | None]: ...
def telemetry_names() -> dict[str, str]: ...
def mcp_elicits(approval_type: str | None, elicit_types: list[str], client_elicits: bool) -> bool: ...
def mcp_elicitation_params(tool_name: str, request_id: str, reason: str | None, view: Any) -> dict[str, Any]: ...
def mcp_elicitation_approves(action: str) -> bool: ...
def mcp_refused_decision_resumes(code: str, approves: bool) -> bool: ...
def mcp_elicitation_declined() -> str: ...

AGENT_TOOL_UNKNOWN_APPROVAL: str
AGENT_TOOL_OUTPUT_NOT_JSON: str
AGENT_TOOL_FAILED: str
AGENT_TOOL_UNKNOWN_INTERRUPTION: str

def agent_tool_approval_key(
    actor_id: str | None, session_id: str | None, tool_call_id: str, tool: str, arguments_json: str
) -> str | None: ...
def agent_tool_made_for_tool(request: Mapping[str, Any], frame: Frame, capability_id: str) -> bool: ...
def agent_tool_approval_required_text(request_id: str, reason: str | None = None) -> str: ...
def agent_tool_recorded_approver(configured: str | None, actor_id: str | None) -> str | None: ...
def agent_tool_kept_request(
    kept: bool, status: str | None, same_capability: bool
) -> Literal["holds", "decided", "afresh"]: ...
def std_meta_decode(data: bytes) -> dict[str, Any]: ...
def std_meta_encode(meta: Mapping[str, Any]) -> bytes: ...
def std_meta_check(data: bytes, position: str, strict: bool = False) -> list[dict[str, str]]: ...
def act_component_inspect(wasm: bytes) -> dict[str, Any]: ...
def act_component_embed(manifest: str, wasm: bytes, manifest_name: str = "act.toml") -> bytes: ...
def act_manifest_check(manifest: str, manifest_name: str = "act.toml") -> dict[str, Any]: ...
def std_forward_wrap(hops: Sequence[Mapping[str, Any]]) -> dict[str, Any]: ...
def std_forward_unwrap(meta: Mapping[str, Any]) -> dict[str, Any]: ...
def capability_grant_decide(
    declared: Mapping[str, Any], grants: Mapping[str, Any], request: Mapping[str, Any]
) -> dict[str, Any]: ...
def std_tool_definition_meta(capability_id: str, meta: Mapping[str, Any]) -> dict[str, Any]: ...
