"""``ReadOnlyDict`` and ``frozen_copy``: the read-only copies of JSON-shaped
data (the frame's actor) that policies and redactors are told.

Separate from the values themselves (``types``), which use them;
``orpc_agent.types`` re-exports both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NoReturn


class ReadOnlyDict(dict[str, Any]):
    """A dict that refuses writes (``TypeError``): what a hook is told
    about the actor. Still a ``dict`` for readers (``json.dumps``,
    pydantic, ``dict(...)`` for a writable copy)."""

    __slots__ = ()

    def __new__(cls, data: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> ReadOnlyDict:
        self = super().__new__(cls)
        dict.update(self, data)
        return self

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass  # filled once, by __new__: calling __init__ again changes nothing

    def _refuse(self) -> NoReturn:
        raise TypeError(f"{type(self).__name__} is read-only; copy it with dict(...) to change it")

    def __setitem__(self, key: str, value: Any) -> NoReturn:
        self._refuse()

    def __delitem__(self, key: str) -> NoReturn:
        self._refuse()

    def __ior__(self, other: Any) -> NoReturn:  # type: ignore[misc]
        self._refuse()

    def clear(self) -> NoReturn:
        self._refuse()

    def pop(self, *args: Any) -> NoReturn:
        self._refuse()

    def popitem(self) -> NoReturn:
        self._refuse()

    def setdefault(self, *args: Any) -> NoReturn:
        self._refuse()

    def update(self, *args: Any, **kwargs: Any) -> NoReturn:
        self._refuse()

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReadOnlyDict, (dict(self),))


def frozen_copy(value: Any) -> Any:
    """A read-only deep copy of JSON-shaped data: mappings become
    ``ReadOnlyDict``, lists and tuples tuples; other values are kept."""
    if isinstance(value, Mapping):
        return ReadOnlyDict({k: frozen_copy(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(frozen_copy(v) for v in value)
    return value
