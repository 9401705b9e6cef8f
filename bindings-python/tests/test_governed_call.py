"""`registry.invoke` returns a native awaitable (`_native.GovernedCall`) in
place of an `async def` coroutine: the same contract — lazy, single use,
send/throw/close, accepted by asyncio as a coroutine — and the fast path's
output validation, performed in the one crossing."""

from __future__ import annotations

import asyncio
import collections.abc
import gc
from typing import Any

import pytest
from pydantic import BaseModel

import orpc_agent
from orpc_agent import InvokeOk, capability, create_capability_registry


class Msg(BaseModel):
    n: int


class Out(BaseModel):
    n: int


def counting_registry() -> tuple[Any, list[int], list[dict[str, Any]]]:
    runs: list[int] = []
    audit: list[dict[str, Any]] = []

    @capability(id="c.count", description="Counts.", expose={"direct": True}, side_effect="write", risk="low")
    async def count(m: Msg) -> int:
        runs.append(m.n)
        return m.n

    @capability(id="c.slow", description="Suspends.", expose={"direct": True}, side_effect="write", risk="low")
    async def slow(m: Msg) -> int:
        await asyncio.sleep(0)
        runs.append(m.n)
        return m.n

    return create_capability_registry([count, slow], audit=audit.append), runs, audit


async def test_nothing_runs_until_it_is_awaited_and_a_closed_call_never_runs() -> None:
    reg, runs, audit = counting_registry()
    call = reg.invoke("c.count", {"n": 1})
    assert type(call).__name__ == "GovernedCall"
    assert runs == [] and audit == []
    call.close()
    with pytest.raises(RuntimeError, match="already awaited"):
        await call
    assert runs == [] and audit == []
    # Dropped without an await: nothing ran either.
    reg.invoke("c.count", {"n": 2})
    gc.collect()
    assert runs == [] and audit == []
    assert (await reg.invoke("c.count", {"n": 3})).output == 3  # type: ignore[union-attr]
    assert runs == [3]


async def test_it_is_a_coroutine_to_asyncio() -> None:
    reg, runs, _ = counting_registry()
    call = reg.invoke("c.count", {"n": 1})
    assert isinstance(call, collections.abc.Coroutine)
    assert asyncio.iscoroutine(call)
    assert (await asyncio.create_task(call)).output == 1  # type: ignore[arg-type]
    both = await asyncio.gather(reg.invoke("c.count", {"n": 2}), reg.invoke("c.slow", {"n": 3}))
    assert [o.output for o in both] == [2, 3]  # type: ignore[union-attr]
    assert sorted(runs) == [1, 2, 3]


def test_asyncio_run_takes_it() -> None:
    reg, runs, _ = counting_registry()
    out = asyncio.run(reg.invoke("c.slow", {"n": 4}))
    assert isinstance(out, InvokeOk) and out.output == 4 and runs == [4]


async def test_single_use_like_a_coroutine() -> None:
    reg, _, _ = counting_registry()
    for name in ("c.count", "c.slow"):
        call = reg.invoke(name, {"n": 1})
        await call
        with pytest.raises(RuntimeError, match="already awaited"):
            await call


async def test_send_and_throw_from_python() -> None:
    reg, runs, audit = counting_registry()
    # Stepped by hand, as a task steps it: the value comes in StopIteration.
    call = reg.invoke("c.count", {"n": 5})
    with pytest.raises(StopIteration) as stop:
        call.send(None)
    assert stop.value.value.output == 5
    # A non-None first send is refused, as a coroutine refuses it.
    call = reg.invoke("c.count", {"n": 6})
    with pytest.raises(TypeError, match="non-None"):
        call.send(1)
    # A throw before the first send raises where the call stands: nothing runs.
    call = reg.invoke("c.count", {"n": 7})
    with pytest.raises(ValueError, match="stop"):
        call.throw(ValueError("stop"))
    assert runs == [5]
    assert [r["outcome"] for r in audit if r["event"] == "finished"] == ["ok"]


async def test_a_suspended_call_is_cancelled_through_it_and_audited() -> None:
    audit: list[dict[str, Any]] = []
    cancelled = asyncio.Event()

    @capability(id="c.long", description="L.", expose={"direct": True}, side_effect="read", risk="low")
    async def long(m: Msg) -> None:
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    reg = create_capability_registry([long], audit=audit.append)
    task = asyncio.create_task(reg.invoke("c.long", {"n": 1}))  # type: ignore[arg-type]
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(cancelled.wait(), 5)
    assert audit[-1]["outcome"] == "CANCELLED"


async def test_a_mapping_frame_and_a_bad_frame() -> None:
    reg, runs, _ = counting_registry()
    assert (await reg.invoke("c.count", {"n": 1}, {"surface": "direct"})).output == 1  # type: ignore[union-attr]
    call = reg.invoke("c.count", {"n": 2}, 42)  # refused when awaited, as before
    with pytest.raises((TypeError, orpc_agent.CapabilityError)):
        await call
    # A misspelt field, or a NaN or infinite actor attribute (no JSON form),
    # is refused before the call, in the words Node and Swift use too.
    with pytest.raises(ValueError, match=r"^unknown frame field\(s\): actorId$"):
        await reg.invoke("c.count", {"n": 3}, {"surface": "direct", "actorId": "ann"})
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError) as refused:
            await reg.invoke("c.count", {"n": 3}, {"surface": "direct", "actor": {"attributes": {"s": [1, bad]}}})
        assert str(refused.value) == "input at /attributes/s/1 is NaN or infinite; only finite numbers can be hashed"
    assert runs == [1]


async def test_output_validation_in_the_fast_path() -> None:
    audit: list[dict[str, Any]] = []
    validated: list[Any] = []

    @capability(id="o.good", description="G.", expose={"direct": True}, side_effect="read", risk="low")
    async def good(m: Msg) -> Out:
        return Out(n=m.n)

    @capability(id="o.bad", description="B.", expose={"direct": True}, side_effect="read", risk="low")
    async def bad(m: Msg) -> Out:
        return {"n": "card 4111 1111 1111 1111"}  # type: ignore[return-value]

    reg = create_capability_registry([good, bad], audit=audit.append)
    out = await reg.invoke("o.good", {"n": 2})
    assert isinstance(out, InvokeOk) and out.output == Out(n=2)
    validated.append(out.output)
    with pytest.raises(orpc_agent.CapabilityError) as err:
        await reg.invoke("o.bad", {"n": 1})
    assert err.value.code == "OUTPUT_INVALID"
    assert "4111" not in str(err.value)
    finished = [r for r in audit if r["event"] == "finished"]
    assert [r["outcome"] for r in finished] == ["ok", "OUTPUT_INVALID"]


class _Interrupting:
    """An output schema whose validator is interrupted (a BaseException)."""

    def validate(self, value: Any) -> Any:
        raise KeyboardInterrupt

    def dump(self, value: Any) -> Any:
        return value

    def json_schema(self) -> dict[str, Any] | None:
        return {"type": "integer"}


async def test_an_interrupted_output_validator_is_raised_not_swallowed() -> None:
    @capability(
        id="o.int", description="I.", expose={"direct": True}, side_effect="read", risk="low", output=_Interrupting()
    )
    async def interrupted(m: Msg) -> Any:
        return m.n

    reg = create_capability_registry([interrupted])
    with pytest.raises(KeyboardInterrupt):
        await reg.invoke("o.int", {"n": 1})


async def test_made_by_invoke_only_and_named_arguments_work() -> None:
    reg, runs, _ = counting_registry()
    with pytest.raises(TypeError):
        type(reg.invoke("c.count", {"n": 1}))()
    out = await reg.invoke(id_or_tool_name="c.count", input={"n": 2}, frame=None)
    assert out.output == 2 and runs == [2]  # type: ignore[union-attr]


async def test_a_refused_first_send_leaves_the_call_startable() -> None:
    reg, runs, _ = counting_registry()
    call = reg.invoke("c.count", {"n": 1})
    with pytest.raises(TypeError):
        call.send(1)
    with pytest.raises(StopIteration) as stop:
        call.send(None)
    assert stop.value.value.output == 1 and runs == [1]


def test_a_call_left_suspended_when_its_loop_closes_is_collected_and_audited() -> None:
    audit: list[dict[str, Any]] = []

    @capability(id="c.hang", description="H.", expose={"direct": True}, side_effect="read", risk="low")
    async def hang(m: Msg) -> None:
        await asyncio.Event().wait()

    reg = create_capability_registry([hang], audit=audit.append)
    loop = asyncio.new_event_loop()
    task = loop.create_task(reg.invoke("c.hang", {"n": 1}))  # type: ignore[arg-type]
    loop.run_until_complete(asyncio.sleep(0.01))
    assert not task.done()
    loop.close()
    del task, loop
    gc.collect()
    assert [r["outcome"] for r in audit if r["event"] == "finished"] == ["INTERNAL"]


def test_a_registry_its_own_handler_refers_to_is_collected() -> None:
    # registry → native registry → fast path → handler → registry: a cycle
    # through native objects only the garbage collector can free, and only
    # if each native object reports what it holds.
    import weakref

    def make() -> weakref.ref[Any]:
        holder: dict[str, Any] = {}

        @capability(
            id="c.self", description="Refers to its registry.", expose={"direct": True}, side_effect="read", risk="low"
        )
        async def refers(m: Msg) -> int:
            return m.n if holder["registry"] is not None else 0

        reg = create_capability_registry([refers])
        holder["registry"] = reg
        return weakref.ref(reg)

    gc.disable()
    try:
        alive = make()
        assert alive() is not None, "only the collector can free it"
        gc.collect()
        assert alive() is None
    finally:
        gc.enable()


async def test_the_first_send_keeps_nothing_of_the_input_once_it_returns() -> None:
    # The fast path runs without pyo3's attach (`guarded_first`): a Python
    # error it made and dropped would wait in pyo3's pool, holding what it
    # refers to. Measuring a string with a lone surrogate raises (and clears)
    # a UnicodeEncodeError that refers to the string.
    import weakref

    class Text(str):
        pass

    @capability(id="c.text", description="Counts.", expose={"direct": True}, side_effect="read", risk="low")
    async def count(x: dict[str, Any]) -> int:
        return len(x)

    reg = create_capability_registry([count])
    text = Text("\ud800")
    alive = weakref.ref(text)
    outcome = await reg.invoke("c.text", {"k": text})
    del text
    # Before anything enters pyo3 again (reading `outcome.output` would, and
    # that releases the pool).
    assert alive() is None
    assert isinstance(outcome, InvokeOk) and outcome.output == 1


async def test_a_clock_that_raises_leaves_nothing_behind_its_call() -> None:
    # The clock is read inside the first send; its error is dropped there
    # (the system clock answers instead) and must not wait in pyo3's pool
    # with its traceback and what it refers to.
    import weakref

    class Marker:
        pass

    refs: list[weakref.ref[Marker]] = []

    def clock() -> int:
        marker = Marker()
        refs.append(weakref.ref(marker))
        raise RuntimeError(marker)

    @capability(id="c.clocked", description="Counts.", expose={"direct": True}, side_effect="read", risk="low")
    async def count(x: dict[str, Any]) -> int:
        return len(x)

    reg = create_capability_registry([count], clock=clock)
    outcome = await reg.invoke("c.clocked", {"k": 1})
    # Before anything enters pyo3 again (reading `outcome.output` would).
    assert refs and all(r() is None for r in refs)
    assert isinstance(outcome, InvokeOk) and outcome.output == 1


def test_an_async_audit_subscriber_is_refused_at_build() -> None:
    """Records are delivered synchronously: a coroutine would never run and
    every record would be lost without a word."""

    @capability(id="c.one", description="One.", expose={"direct": True}, side_effect="read", risk="low")
    def one() -> int:
        return 1

    async def subscriber(record: Any) -> None:
        return None

    class AsyncCallable:
        async def __call__(self, record: Any) -> None:
            return None

    for audit in (subscriber, AsyncCallable(), {"postgres": "postgres://x/y", "subscriber": subscriber}):
        with pytest.raises(TypeError, match="audit subscriber must be a plain function"):
            create_capability_registry([one], audit=audit)
