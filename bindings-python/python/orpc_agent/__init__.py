"""orpc_agent — governed capabilities for Python agents.

A Rust core decides (exposure, policies, approvals, deadlines, retries,
redaction order, audit); this package converts values, runs your handlers,
policies and redactors on asyncio when the core asks, and presents the API::

    from pydantic import BaseModel
    from orpc_agent import capability, create_capability_registry

    class Query(BaseModel):
        email: str

    @capability(id="orders.search", description="Search orders by email.",
                expose={"direct": True, "mcp": True}, side_effect="read", risk="low")
    async def search(q: Query) -> list[str]:
        return ["o-1"]

    registry = create_capability_registry([search])
    outcome = await registry.invoke("orders.search", {"email": "a@b.c"})
"""

from __future__ import annotations

from . import errors as errors
from ._native import Frame, all_error_codes, input_hash
from .capability import CapabilitySpec, HostPolicy, capability, define_capability, host_policy
from .errors import (
    ERROR_CLASSES,
    ApprovalConsumedError,
    ApprovalExpiredError,
    ApprovalInvalidError,
    ApprovalNotFoundError,
    ApprovalPendingError,
    ApprovalRejectedError,
    ApprovalRequiredError,
    CancelledCapabilityError,
    CapabilityError,
    CredentialRequiredError,
    ExecutionFailedError,
    InternalError,
    InvalidInputError,
    LimitExceededError,
    NotFoundError,
    OutputInvalidError,
    PolicyDeniedError,
    RegistryValidationError,
    SessionNotFoundError,
    TimeoutCapabilityError,
)
from .postgres import ApprovalPage, PostgresAuditSink
from .progress import ProgressEvent, on_progress
from .registry import Approvals, CapabilityRegistry, create_capability_registry
from .schema import InputIssues, JsonSchema, PydanticSchema, Schema
from .std_meta import (
    CapabilityGrantDecision,
    StdMetaProblem,
    check_manifest,
    check_std_meta,
    decide_capability_grant,
    decode_std_meta,
    embed_component,
    encode_std_meta,
    inspect_component,
    tool_definition_meta,
    unwrap_std_forward,
    wrap_std_forward,
)
from .telemetry import Telemetry
from .types import (
    Abstain,
    Allow,
    ApprovalRequest,
    ApprovalRequired,
    Decision,
    Deny,
    HandlerContext,
    InvokeOk,
    Outcome,
    PolicyRequest,
    RedactionInfo,
    RequireApproval,
)

__all__ = [
    "Abstain",
    "Allow",
    "ApprovalPage",
    "ApprovalConsumedError",
    "ApprovalExpiredError",
    "ApprovalInvalidError",
    "ApprovalNotFoundError",
    "ApprovalPendingError",
    "ApprovalRejectedError",
    "ApprovalRequest",
    "ApprovalRequired",
    "ApprovalRequiredError",
    "Approvals",
    "CancelledCapabilityError",
    "CapabilityError",
    "CapabilityGrantDecision",
    "CapabilityRegistry",
    "PostgresAuditSink",
    "CapabilitySpec",
    "CredentialRequiredError",
    "Decision",
    "Deny",
    "ERROR_CLASSES",
    "ExecutionFailedError",
    "Frame",
    "HandlerContext",
    "HostPolicy",
    "InternalError",
    "InvalidInputError",
    "InvokeOk",
    "InputIssues",
    "JsonSchema",
    "LimitExceededError",
    "NotFoundError",
    "Outcome",
    "OutputInvalidError",
    "PolicyDeniedError",
    "PolicyRequest",
    "ProgressEvent",
    "PydanticSchema",
    "RedactionInfo",
    "RegistryValidationError",
    "RequireApproval",
    "Schema",
    "SessionNotFoundError",
    "StdMetaProblem",
    "Telemetry",
    "TimeoutCapabilityError",
    "all_error_codes",
    "capability",
    "check_manifest",
    "check_std_meta",
    "create_capability_registry",
    "decide_capability_grant",
    "decode_std_meta",
    "define_capability",
    "embed_component",
    "encode_std_meta",
    "errors",
    "host_policy",
    "input_hash",
    "inspect_component",
    "on_progress",
    "tool_definition_meta",
    "unwrap_std_forward",
    "wrap_std_forward",
]
