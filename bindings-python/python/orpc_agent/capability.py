"""``@capability``: declare a function as a governed capability.

The decorator only *records* the declaration: it maps Python's snake_case
onto the core's camelCase ``AgentMeta`` and replaces host functions
(redactors, ``retry_on``, host policies) by the declared-present markers the
core expects. Validation of the metadata happens once, in the core, when
``create_capability_registry`` builds the registry (SI-4).

``CapabilitySpec``, ``HostPolicy``, ``host_policy`` and ``hook_takes_info``
live in ``_capability_spec`` and are re-exported here.
"""

from __future__ import annotations

import collections.abc
import inspect
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from ._capability_spec import CapabilitySpec, HostPolicy, hook_takes_info, host_policy
from ._declaration_keys import camel_keys
from .schema import as_schema

__all__ = [
    "capability",
    "define_capability",
    "host_policy",
    "CapabilitySpec",
    "HostPolicy",
    "camel_keys",
    "hook_takes_info",
]

F = TypeVar("F", bound=Callable[..., Any])

_ATTR = "__orpc_capability__"


def _first_param_and_return(fn: Callable[..., Any]) -> tuple[Any, Any, int]:
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    try:
        hints = typing.get_type_hints(fn)
    except Exception:
        hints = {}
    first = hints.get(params[0].name) if params else None
    ret = hints.get("return", inspect.Signature.empty)
    return first, ret, len(params)


def _policy_list(
    items: Sequence[Any] | None,
) -> tuple[list[dict[str, Any]], dict[int, Callable[..., Any]]]:
    """Declarative policies (dicts) stay as JSON; host ones become markers."""
    wire: list[dict[str, Any]] = []
    impls: dict[int, Callable[..., Any]] = {}
    for i, item in enumerate(items or ()):
        if isinstance(item, HostPolicy):
            wire.append(item.marker())
            impls[i] = item.fn
        elif callable(item):
            hp = host_policy(item)
            wire.append(hp.marker())
            impls[i] = hp.fn
        else:
            wire.append(camel_keys(item))
    return wire, impls


def define_capability(
    handler: Callable[..., Any],
    *,
    id: str,
    description: str | None = None,
    expose: Mapping[str, bool] | None = None,
    side_effect: str | None = None,
    risk: str | None = None,
    tags: Sequence[str] | None = None,
    timeout_ms: int | None = None,
    retry: Mapping[str, Any] | None = None,
    idempotent: bool | None = None,
    approval: Mapping[str, Any] | None = None,
    redact_output: Callable[..., Any] | None = None,
    redact_approval_input: Callable[..., Any] | None = None,
    policies: Sequence[Any] | None = None,
    adapters: Mapping[str, Any] | None = None,
    discovery: str | None = None,
    input: Any = None,
    output: Any = None,
    meta: Mapping[str, Any] | None = None,
    host_policies: Mapping[str, Callable[..., Any]] | None = None,
) -> CapabilitySpec:
    """The declaration ``@capability`` records, for a function you don't decorate.

    ``input``/``output`` override the annotations (a pydantic type, a JSON
    Schema dict, or a ``Schema``). ``meta`` is raw ``AgentMeta`` JSON
    (camelCase, as in declaration files), taken verbatim; keyword arguments
    are merged over it.
    """
    first, ret, nparams = _first_param_and_return(handler)
    # Through decorators (`functools.wraps`) to the function they wrap.
    is_stream = inspect.isasyncgenfunction(inspect.unwrap(handler))
    if is_stream:
        ret = _streamed_item(ret)
    in_schema = as_schema(input if input is not None else first)
    no_output = ret is inspect.Signature.empty or ret is Any or ret is None or ret is type(None)
    out_schema = as_schema(output if output is not None else (None if no_output else ret))

    if meta is not None and not isinstance(meta, Mapping):
        # Not an object: handed to the core verbatim, which reports it.
        return CapabilitySpec(
            id=id,
            handler=handler,
            meta=meta,
            input=in_schema,
            output=out_schema,
            is_async=inspect.iscoroutinefunction(handler),
            wants_context=nparams >= 2,
            is_stream=is_stream,
        )
    m: dict[str, Any] = dict(meta or {})
    given = {
        "description": description,
        # Surface names: the core reads them (and refuses one it does not know).
        "expose": dict(expose) if isinstance(expose, Mapping) else expose,
        "sideEffect": side_effect,
        "risk": risk,
        "tags": list(tags) if tags is not None else None,
        "timeoutMs": timeout_ms,
        "idempotent": idempotent,
        "approval": camel_keys(approval) if approval is not None else None,
        "adapters": camel_keys(adapters) if adapters is not None else None,
        "discovery": discovery,
    }
    m.update({k: v for k, v in given.items() if v is not None})

    retry_on = None
    if retry is not None:
        r = dict(retry)
        retry_on = r.pop("retry_on", None) or r.pop("retryOn", None)
        wire = camel_keys(r)
        if retry_on is not None:
            wire["retryOn"] = True
        m["retry"] = wire

    if redact_output is not None or redact_approval_input is not None:
        redact = dict(m.get("redact") or {})
        if redact_output is not None:
            redact["output"] = True
        if redact_approval_input is not None:
            redact["approvalInput"] = True
        m["redact"] = redact

    impls: dict[int, Callable[..., Any]] = {}
    if policies is not None:
        # Both lists apply: the policies declared in `meta` first, then
        # these (a declared deny must not vanish because host policies were
        # given too; issue 14). A declared host marker is implemented by
        # the first given host policy of its name, which takes its place
        # (as in Swift): one policy, evaluated once.
        declared = list(m.get("policies") or [])
        given_json, given_impls = _policy_list(policies)
        rest = list(range(len(given_json)))
        for i, d in enumerate(declared):
            name = d.get("name") if isinstance(d, dict) and d.get("host") is True else None
            j = next((j for j in rest if j in given_impls and given_json[j].get("name") == name), None)
            if name is not None and j is not None:
                rest.remove(j)
                impls[i] = given_impls[j]
        m["policies"] = declared + [given_json[j] for j in rest]
        impls.update({len(declared) + k: given_impls[j] for k, j in enumerate(rest) if j in given_impls})

    return CapabilitySpec(
        id=id,
        handler=handler,
        meta=m,
        input=in_schema,
        output=out_schema,
        redact_output=redact_output,
        redact_approval_input=redact_approval_input,
        retry_on=retry_on,
        policies=impls,
        host_policies=dict(host_policies or {}),
        is_async=inspect.iscoroutinefunction(handler),
        wants_context=nparams >= 2,
        is_stream=is_stream,
    )


def _streamed_item(ret: Any) -> Any:
    """The output type of a streaming handler annotated ``AsyncIterator[T]``,
    ``AsyncIterable[T]`` or ``AsyncGenerator[T, ...]``: ``T`` (its output is
    the last value it yields); no output schema for anything else."""
    origin = typing.get_origin(ret)
    if origin in (collections.abc.AsyncIterator, collections.abc.AsyncIterable, collections.abc.AsyncGenerator):
        args = typing.get_args(ret)
        if args:
            return args[0]
    return inspect.Signature.empty


def capability(*, id: str, **kwargs: Any) -> Callable[[F], F]:
    """Declare a sync or ``async def`` function as a capability.

    The function's first parameter's annotation (a pydantic model, or any
    type) is the input schema; its return annotation the output schema. A
    second parameter receives a ``HandlerContext``. The function itself is
    returned unchanged (calling it directly is ungoverned, as with any
    function); pass it to ``create_capability_registry``.

    Keyword arguments are those of ``define_capability``: ``description``,
    ``expose``, ``side_effect``, ``risk``, ``tags``, ``timeout_ms``, ``retry``
    (``{"max_attempts", "backoff_ms", "retry_on"}``), ``idempotent``,
    ``approval``, ``redact_output``, ``redact_approval_input``, ``policies``,
    ``adapters``, ``discovery``, ``input``, ``output``, ``meta``.
    """

    def decorate(fn: F) -> F:
        setattr(fn, _ATTR, define_capability(fn, id=id, **kwargs))
        return fn

    return decorate


def spec_of(item: Any) -> CapabilitySpec:
    """The declaration of a decorated function or a ``CapabilitySpec``."""
    if isinstance(item, CapabilitySpec):
        return item
    spec = getattr(item, _ATTR, None)
    if isinstance(spec, CapabilitySpec):
        return spec
    raise TypeError(f"{item!r} is not a capability: decorate it with @capability or use define_capability")
