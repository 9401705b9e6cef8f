"""What the OpenAI Agents SDK adapter reads of the SDK's and the model's
values: a descriptor's input schema as the ``FunctionTool``'s parameters
(strict when the SDK can make it strict), the tool call id of an
interruption, and the model's arguments as JSON.

Conversions only: separate from ``GovernedTools`` (``_openai_tools``), so
that its module reads as the calls and the interruptions it answers.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from agents import ToolApprovalItem
from agents.strict_schema import ensure_strict_json_schema

from ._agent_tools import OUTPUT_NOT_JSON, error_text, operator_log, output_text, output_value
from ._app_errors import APP_FAILURES
from .errors import InternalError


def _params_schema(descriptor: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """The descriptor's input schema, and whether it is strict: converted by
    the SDK's ``ensure_strict_json_schema`` refusing open objects, as the
    SDK converts MCP tools' schemas; if that fails, the schema as it is."""
    schema = copy.deepcopy(descriptor["inputSchema"])
    empty = schema == {}
    if "properties" not in schema:
        schema["properties"] = {}
    try:
        return ensure_strict_json_schema(copy.deepcopy(schema), _reject_open_objects=not empty), True
    except Exception:
        return schema, False


def _call_id_of(item: ToolApprovalItem) -> str | None:
    raw = item.raw_item
    value = raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)
    return value if isinstance(value, str) else None


class _Parsed:
    """A parsed JSON value (any, ``None`` included)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _parsed_arguments(item: ToolApprovalItem) -> _Parsed | None:
    """An interruption's arguments parsed as the SDK parses them for
    ``needs_approval`` (``json.loads`` of the call's text); ``None`` when
    they are no JSON."""
    raw = item.raw_item
    text = raw.get("arguments") if isinstance(raw, dict) else getattr(raw, "arguments", None)
    if not isinstance(text, str):
        return None
    try:
        return _Parsed(json.loads(text))
    except ValueError:
        return None


def _arguments(arguments: str) -> Any:
    """The model's arguments as JSON; text that is not JSON is handed to
    the core as it is (its validator refuses it: INVALID_INPUT)."""
    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _text(capability_id: str, output: Any) -> str:
    """The output as the model reads it; one with no JSON form is INTERNAL, and the operator is told why."""
    try:
        return output_text(output_value(output))
    except APP_FAILURES as e:  # a serializer that raises (its own CancelledError too), NaN/∞, a cycle
        operator_log(capability_id, "the output's JSON form", e)
        return error_text(InternalError(OUTPUT_NOT_JSON))
