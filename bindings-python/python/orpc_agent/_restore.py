"""The value a stored input (JSON, as a schema's ``dump`` wrote it) stands
for, rebuilt without validating again: ``restore`` (a resumed handler's
input, the approval-input view), ``rebuilds`` and ``same_value`` (whether
the JSON is a faithful form of the validated value), and ``_rebuild``, the
walk over a pydantic type that ``PydanticSchema.restore`` runs.

Separate from the schemas (``schema``), which validate, dump and describe
themselves: this runs on resume, for approval views, and at a call's
ExportInput step (``rebuilds``), never in validation. ``orpc_agent.schema`` re-exports ``restore``,
``rebuilds`` and ``same_value``.
"""

from __future__ import annotations

import collections.abc
import types
import typing
from typing import Any

from pydantic import BaseModel, ConfigDict, TypeAdapter

# ----- the value a stored input stands for (resume, approval views) ------


def restore(schema: Any, data: Any) -> Any:
    """The value of a stored input (JSON), for the handler of a resumed call
    and ``redact_approval_input``: the schema's ``restore`` — never its
    validator, which ran once, before the input was bound to its hash — or
    the JSON itself."""
    fn = getattr(schema, "restore", None)
    return fn(data) if fn is not None else data


def rebuilds(schema: Any, value: Any, data: Any) -> bool:
    """Whether ``restore(schema, data)`` gives back ``value`` exactly (see
    ``same_value``): what makes ``data`` a faithful form of the validated
    value. A schema without ``restore`` vouches for its own ``dump``."""
    if schema is not None and getattr(schema, "restore", None) is None:
        return True
    try:
        return same_value(restore(schema, data), value)
    except Exception:
        return False


def same_value(a: Any, b: Any) -> bool:
    """Equal values of the same types: models of the same class with the
    same field values (and extras); lists and tuples item by item (JSON has
    one sequence); dicts key by key; anything else of the same type and
    ``==``. Private attributes and which fields were set explicitly are not
    compared (the JSON form carries neither)."""
    if isinstance(a, BaseModel) or isinstance(b, BaseModel):
        if type(a) is not type(b):
            return False
        da, db = a.__dict__, b.__dict__
        if da.keys() != db.keys() or not all(same_value(da[k], db[k]) for k in da):
            return False
        return same_value(a.__pydantic_extra__ or {}, b.__pydantic_extra__ or {})
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


_NONE: Any = type(None)
_IDENTITY = (Any, object)
_SEQUENCES = (list, collections.abc.Sequence, collections.abc.MutableSequence)
_MAPPINGS = (dict, collections.abc.Mapping, collections.abc.MutableMapping)
# The model settings that decide what a field's bare type gives back.
_LEAF_CONFIG = ("use_enum_values", "arbitrary_types_allowed")


# One adapter per (field type, model settings), made on first use.
_ADAPTERS: dict[tuple[Any, tuple[tuple[str, Any], ...]], TypeAdapter[Any]] = {}


def _adapter(tp: Any, config: tuple[tuple[str, Any], ...]) -> TypeAdapter[Any]:
    try:
        return _ADAPTERS[(tp, config)]
    except KeyError:
        pass
    except TypeError:  # an unhashable type: not kept
        return _new_adapter(tp, config)
    made = _ADAPTERS[(tp, config)] = _new_adapter(tp, config)
    return made


def _new_adapter(tp: Any, config: tuple[tuple[str, Any], ...]) -> TypeAdapter[Any]:
    if config:
        try:
            return TypeAdapter(tp, config=ConfigDict(**dict(config)))  # type: ignore[typeddict-item]
        except Exception:  # a type with its own config (dataclass, TypedDict) takes none
            pass
    return TypeAdapter(tp)


def _rebuild(tp: Any, data: Any, owner: type[BaseModel] | None) -> Any:
    """``data`` (JSON) as a value of type ``tp``, without validators."""
    while typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]  # constraints and validators in the metadata are not run
    if tp in _IDENTITY:
        return data
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _rebuild_model(tp, data)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is typing.Union or origin is types.UnionType:
        members = [a for a in args if a is not _NONE]
        if data is None and len(members) < len(args):
            return None
        if len(members) == 1:
            return _rebuild(members[0], data, owner)
        # A union of several types: the union's own validation picks the
        # member (it may run a member's validators; `rebuilds` checks that
        # the result is the value).
    elif origin in _SEQUENCES and isinstance(data, list):
        item = args[0] if args else Any
        return [_rebuild(item, x, owner) for x in data]
    elif origin is tuple and isinstance(data, list):
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_rebuild(args[0], x, owner) for x in data)
        if args and len(args) == len(data):
            return tuple(_rebuild(t, x, owner) for t, x in zip(args, data, strict=True))
    elif origin in (set, frozenset, collections.abc.Set, collections.abc.MutableSet) and isinstance(data, list):
        item = args[0] if args else Any
        made = (_rebuild(item, x, owner) for x in data)
        return frozenset(made) if origin is frozenset else set(made)
    elif origin in _MAPPINGS and isinstance(data, dict):
        key, val = (args[0], args[1]) if len(args) == 2 else (Any, Any)
        return {_rebuild(key, k, owner): _rebuild(val, v, owner) for k, v in data.items()}
    config = tuple((k, owner.model_config[k]) for k in _LEAF_CONFIG if owner is not None and k in owner.model_config)  # type: ignore[literal-required]
    return _adapter(tp, config).validate_python(data)


def _rebuild_model(cls: type[BaseModel], data: Any) -> BaseModel:
    fields = cls.model_fields
    if cls.__pydantic_root_model__:
        return cls.model_construct(_rebuild(fields["root"].annotation, data, cls))
    if not isinstance(data, dict):
        raise TypeError(f"a stored {cls.__name__} is not an object")
    values: dict[str, Any] = {}
    used: set[str] = set()
    for name, f in fields.items():
        # `dump` writes field names, or serialization aliases under `serialize_by_alias`.
        for key in (name, f.serialization_alias, f.alias):
            if isinstance(key, str) and key in data:
                values[name] = _rebuild(f.annotation, data[key], cls)
                used.add(key)
                break
    if cls.model_config.get("extra") == "allow":
        computed = cls.model_computed_fields
        for key, v in data.items():
            if key not in used and key not in computed:
                values[key] = v
    return cls.model_construct(**values)
