"""The MCP adapter with the real mcp 2.x SDK: in-memory Client and stdio."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from pydantic import BaseModel

from mcp_caps import Query, build, search
from orpc_agent import CapabilityError, Frame, capability, create_capability_registry
from orpc_agent.mcp import APPROVAL_ID_META, APPROVAL_META, ERROR_META, create_mcp_server

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def test_tools_list_comes_from_descriptors_with_annotations() -> None:
    async with Client(create_mcp_server(build())) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"docs_search", "docs_publish", "purge", "docs_ext"}  # docs.secret is not on mcp
    s = tools["docs_search"].annotations
    assert (s.read_only_hint, s.destructive_hint, s.idempotent_hint, s.open_world_hint) == (True, False, True, False)
    p = tools["purge"].annotations
    assert (p.read_only_hint, p.destructive_hint, p.title) == (False, True, "Purge")
    e = tools["docs_ext"].annotations
    assert (e.open_world_hint, e.idempotent_hint) == (True, True)
    assert tools["docs_search"].input_schema["required"] == ["q"]
    assert tools["docs_search"].output_schema["properties"]["hits"]["type"] == "array"
    assert tools["docs_ext"].output_schema is None  # a list is not an MCP structured output


async def test_call_runs_the_pipeline_on_the_mcp_surface_with_trace_meta() -> None:
    audit: list[dict[str, Any]] = []
    server = create_mcp_server(build(audit.append), frame=lambda ctx: Frame("direct", actor={"id": "ana"}))
    async with Client(server) as client:
        r = await client.call_tool("docs_search", {"q": "abc"}, meta={"traceparent": TRACEPARENT})
    assert r.is_error is False
    assert r.structured_content == {"hits": ["ABC"], "trace": TRACEPARENT}
    # The core's text (`mcp::ok_result`, byte for byte as Node's): compact JSON.
    assert r.content[0].text == '{"hits":["ABC"],"trace":"' + TRACEPARENT + '"}'  # type: ignore[union-attr]
    last = audit[-1]
    # The adapter fixes the surface (SI-2) even if the host's frame says otherwise.
    assert (last["surface"], last["actorId"], last["traceparent"]) == ("mcp", "ana", TRACEPARENT)


async def test_the_app_s_trace_wins_whole_and_no_json_rpc_id_becomes_the_request_id() -> None:
    """Node's rule: the request's ``_meta`` trace only when the app's frame
    names none (never one trace's parent with another's state), and the
    JSON-RPC id (unique per connection only) is not the frame's request id."""
    audit: list[dict[str, Any]] = []
    app_parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    def frame(ctx: Any) -> Frame:
        return Frame("mcp", actor={"id": "ana"}, traceparent=app_parent, tracestate="app=1")

    async with Client(create_mcp_server(build(audit.append), frame=frame)) as client:
        await client.call_tool("docs_search", {"q": "abc"}, meta={"traceparent": TRACEPARENT})
    async with Client(create_mcp_server(build(audit.append))) as client:
        await client.call_tool("docs_search", {"q": "abc"}, meta={"traceparent": TRACEPARENT, "tracestate": "c=2"})
    finished = [r for r in audit if r["event"] == "finished"]
    got = [(r["traceparent"], r.get("tracestate"), r["requestId"]) for r in finished]
    assert got == [(app_parent, "app=1", None), (TRACEPARENT, "c=2", None)], got


async def test_errors_and_approvals_become_actionable_results() -> None:
    async with Client(create_mcp_server(build())) as client:
        bad = await client.call_tool("docs_search", {"q": 3})
        denied = await client.call_tool("purge", {"q": "x"})
        pending = await client.call_tool("docs_publish", {"q": "x"})
        hidden = await client.call_tool("docs_secret", {"q": "x"})
    assert bad.is_error and bad.meta[ERROR_META]["code"] == "INVALID_INPUT"  # type: ignore[index]
    assert "q:" in bad.content[0].text  # type: ignore[union-attr]
    assert denied.is_error and denied.meta[ERROR_META]["code"] == "POLICY_DENIED"  # type: ignore[index]
    assert "archive instead" in denied.content[0].text  # type: ignore[union-attr]
    assert pending.is_error and pending.meta[APPROVAL_META]["status"] == "approval_required"  # type: ignore[index]
    assert pending.meta[APPROVAL_META]["type"] == "editor"  # type: ignore[index]
    assert hidden.is_error  # unknown to this server: the SDK's own error


async def test_approval_round_trip_through_mcp() -> None:
    registry = build()
    async with Client(create_mcp_server(registry)) as client:
        pending = await client.call_tool("docs_publish", {"q": "hello"})
        request_id = pending.meta[APPROVAL_META]["requestId"]  # type: ignore[index]
        registry.approvals.approve(request_id, approver="editor-eve")
        done = await registry.resume(request_id)
    assert done.output == {"published": "hello"}  # type: ignore[union-attr]


async def test_a_client_sending_only_name_and_arguments_runs_its_approved_call_by_calling_again() -> None:
    """Issue 18: real clients send no ``_meta``. Calling again while the
    request waits returns it; once approved, the same call runs it once;
    after that the same call is a new request."""
    registry = build()
    async with Client(create_mcp_server(registry)) as client:
        first = await client.call_tool("docs_publish", {"q": "hi"})
        request_id = first.meta[APPROVAL_META]["requestId"]  # type: ignore[index]
        waiting = await client.call_tool("docs_publish", {"q": "hi"})
        assert waiting.meta[APPROVAL_META]["requestId"] == request_id  # type: ignore[index]
        other = await client.call_tool("docs_publish", {"q": "other"})
        assert other.meta[APPROVAL_META]["requestId"] != request_id  # type: ignore[index]
        registry.approvals.approve(request_id, approver="editor-eve")
        done = await client.call_tool("docs_publish", {"q": "hi"})
        assert done.is_error is False, done
        assert done.structured_content == {"published": "hi"}
        stored = registry.approvals.get(request_id)
        assert stored is not None and stored.status == "consumed"
        after = await client.call_tool("docs_publish", {"q": "hi"})
        assert after.meta[APPROVAL_META]["requestId"] != request_id  # type: ignore[index]


released: list[str] = []


@capability(
    id="docs.release",
    description="Release a doc.",
    expose={"mcp": True, "direct": True},
    side_effect="write",
    risk="high",
    approval={"required": True},
)
async def release(q: Query) -> dict[str, str]:
    released.append(q.q)
    return {"released": q.q}


def _as(registry: Any, actor_id: str) -> Any:
    return create_mcp_server(registry, frame=lambda ctx: Frame("mcp", actor={"id": actor_id}))


def _code(result: Any) -> str:
    assert result.is_error, result
    return result.meta[ERROR_META]["code"]  # type: ignore[no-any-return]


async def test_a_client_resumes_its_approved_request_by_calling_the_tool_again_with_its_id() -> None:
    # Issue 14 item 11: the request id in `_meta["orpc-agent/approvalId"]`
    # resumes only this tool's request, made on MCP by this caller's actor.
    registry = create_capability_registry([search, release])
    released.clear()
    async with Client(_as(registry, "ana")) as ana, Client(_as(registry, "bob")) as bob:
        pending = await ana.call_tool("docs_release", {"q": "v1"})
        assert pending.is_error
        request_id = pending.meta[APPROVAL_META]["requestId"]  # type: ignore[index]
        resume = {APPROVAL_ID_META: request_id}
        # Pending: not yet runnable, even by its requester.
        assert _code(await ana.call_tool("docs_release", {"q": "v1"}, meta=resume)) == "APPROVAL_PENDING"
        registry.approvals.approve(request_id, approver="eve")
        # Another actor, through the same tool; the requester, through another tool.
        assert _code(await bob.call_tool("docs_release", {"q": "v1"}, meta=resume)) == "APPROVAL_NOT_FOUND"
        assert _code(await ana.call_tool("docs_search", {"q": "v1"}, meta=resume)) == "APPROVAL_NOT_FOUND"
        assert registry.approvals.get(request_id).status == "approved"  # type: ignore[union-attr]
        assert released == []
        # The requester, through its tool: the approved input runs, once (the arguments are not used).
        done = await ana.call_tool("docs_release", {"q": "other"}, meta=resume)
        assert done.is_error is False
        assert done.structured_content == {"released": "v1"}
        assert released == ["v1"]
        assert _code(await ana.call_tool("docs_release", {"q": "v1"}, meta=resume)) == "APPROVAL_CONSUMED"
        assert (
            _code(await ana.call_tool("docs_release", {"q": "v1"}, meta={APPROVAL_ID_META: "apr_nope"}))
            == "APPROVAL_NOT_FOUND"
        )
    assert released == ["v1"]


async def test_a_request_made_on_another_surface_is_not_resumable_over_mcp() -> None:
    registry = create_capability_registry([search, release])
    released.clear()
    made = await registry.invoke("docs.release", {"q": "v2"}, Frame("direct", actor={"id": "ana"}))
    request_id = made.request.id  # type: ignore[union-attr]
    registry.approvals.approve(request_id, approver="eve")
    async with Client(_as(registry, "ana")) as ana:
        r = await ana.call_tool("docs_release", {"q": "v2"}, meta={APPROVAL_ID_META: request_id})
    assert _code(r) == "APPROVAL_NOT_FOUND"
    assert registry.approvals.get(request_id).status == "approved"  # type: ignore[union-attr]
    assert released == []
    # Nothing was consumed: the app's own resume still runs it, once.
    done = await registry.resume(request_id)
    assert done.output == {"released": "v2"} and released == ["v2"]  # type: ignore[union-attr]


async def test_over_stdio() -> None:
    here = Path(__file__).resolve().parent
    params = StdioServerParameters(command=sys.executable, args=[str(here / "mcp_caps.py")], cwd=str(here))
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        r = await client.call_tool("docs_search", {"q": "io"}, meta={"traceparent": TRACEPARENT})
        denied = await client.call_tool("purge", {"q": "x"})
    assert "docs_search" in names
    assert r.structured_content == {"hits": ["IO"], "trace": TRACEPARENT}
    assert denied.is_error


async def test_contextual_capabilities_are_left_out_of_the_unbound_list_as_in_node() -> None:
    @capability(
        id="ui.apply",
        description="Apply the open form.",
        expose={"mcp": True},
        side_effect="write",
        risk="low",
        discovery="contextual",
    )
    async def apply(q: Query) -> str:
        return "applied"

    registry = create_capability_registry([search, apply])
    async with Client(create_mcp_server(registry)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert "ui_apply" not in names and "docs_search" in names
    async with Client(create_mcp_server(registry, include_contextual=True)) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "ui_apply" in names
        done = await client.call_tool("ui_apply", {"q": "x"})
    assert done.content[0].text == "applied"  # type: ignore[union-attr]


async def test_a_frame_factory_that_refuses_answers_in_its_own_words() -> None:
    # CREDENTIAL_REQUIRED from the app's factory (sign in first) is the
    # result, as in Node's adapter; any other exception is INTERNAL.
    def signed_out(_: Any) -> Frame:
        raise CapabilityError("CREDENTIAL_REQUIRED", "Sign in to search the docs.")

    def broken(_: Any) -> Frame:
        raise RuntimeError("token store at 10.0.0.5 unreachable")

    async with Client(create_mcp_server(build(), frame=signed_out)) as client:
        refused = await client.call_tool("docs_search", {"q": "abc"})
    assert refused.is_error and refused.meta[ERROR_META]["code"] == "CREDENTIAL_REQUIRED"  # type: ignore[index]
    assert "Sign in" in refused.content[0].text  # type: ignore[union-attr]
    async with Client(create_mcp_server(build(), frame=broken)) as client:
        failed = await client.call_tool("docs_search", {"q": "abc"})
    assert failed.is_error and failed.meta[ERROR_META]["code"] == "INTERNAL"  # type: ignore[index]
    assert "10.0.0.5" not in str(failed)


class Totals(BaseModel):
    z: float
    t: float
    big: float


@capability(id="n.totals", description="Totals.", expose={"mcp": True}, side_effect="read", risk="low")
async def totals(q: Query) -> Totals:
    return Totals(z=-0.0, t=10.0, big=2.0**60)


@capability(id="n.fails", description="Fails.", expose={"mcp": True}, side_effect="read", risk="low")
async def fails(q: Query) -> None:
    raise CapabilityError("NOT_FOUND", "No such order.", details={"x": -0.0, "y": 10.0})


async def test_structured_content_and_error_details_carry_the_numbers_the_text_says_as_node_sends_them() -> None:
    """``structuredContent`` and an error's ``_meta`` details go over the
    wire in Node's bytes (the core's ``mcp::js_numbers``): ``10.0`` as
    ``10``, ``-0.0`` as ``0``, never Python's float spellings."""
    async with Client(create_mcp_server(create_capability_registry([totals, fails]))) as client:
        ok = await client.call_tool("n_totals", {"q": "a"})
        failed = await client.call_tool("n_fails", {"q": "a"})
    assert ok.content[0].text == '{"z":0,"t":10,"big":1152921504606847000}'  # type: ignore[union-attr]
    sc = ok.structured_content
    assert sc == {"z": 0, "t": 10, "big": 1152921504606847000}
    assert [type(sc[k]) for k in ("z", "t", "big")] == [int, int, int], "read back from the wire as JSON integers"
    details = (failed.meta or {})[ERROR_META]["details"]
    assert details == {"x": 0, "y": 10} and [type(v) for v in details.values()] == [int, int]


async def test_meta_text_with_no_utf8_form_is_dropped_from_the_trace_and_names_no_approval_as_in_node() -> None:
    audit: list[dict[str, Any]] = []
    server = create_mcp_server(build(audit.append), frame=lambda ctx: Frame("mcp", actor={"id": "ana"}))
    async with Client(server) as client:
        ran = await client.call_tool(
            "docs_search", {"q": "abc"}, meta={"traceparent": "00-\ud800", "tracestate": "a=\udc00"}
        )
        named = await client.call_tool("docs_publish", {"q": "abc"}, meta={APPROVAL_ID_META: "apr_\ud800"})
    assert ran.is_error is False
    assert audit[-1]["traceparent"] is None
    assert named.is_error and named.meta[ERROR_META]["code"] == "APPROVAL_NOT_FOUND"  # type: ignore[index]
