"""Input and output schemas: pydantic types, JSON Schema dicts, or any
object with the ``Schema`` protocol.

A schema validates (stage 4 / 12, when the core asks), dumps a value into
the JSON data model (only when the core asks: approval hash, declarative
input predicates, audit payloads), restores a stored dump to the value it
stands for without validating again (a resumed handler's input, the
approval-input view), and describes itself as JSON Schema for descriptors.
Validation *decisions* — whether to validate, what happens on failure —
are the core's.
"""

from __future__ import annotations

import collections.abc
import itertools
import json
import types
import typing
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, TypeAdapter
from pydantic_core import to_jsonable_python

__all__ = ["Schema", "PydanticSchema", "JsonSchema", "as_schema", "to_jsonable", "restore", "rebuilds", "same_value"]


class InputIssues(ValueError):
    """Raised by a :class:`Schema`'s ``validate`` to report what is wrong
    with an input: ``issues`` is a list of ``(path, message)``, the path a
    list of keys and indices as text. The model is told the paths and
    messages, never the rejected value; any other exception a validator
    raises tells it only that the input could not be validated."""

    def __init__(self, issues: list[tuple[list[str], str]]) -> None:
        super().__init__(f"{len(issues)} issue(s)")
        self.issues = issues


@runtime_checkable
class Schema(Protocol):
    """A validator the registry can use for a capability's input or output.

    It may also define ``restore(data)``: the value a stored JSON form
    (what ``dump`` gave) stands for, built without validating again — what
    a resumed handler and ``redact_approval_input`` get. Without it they
    get the stored JSON as it is."""

    def validate(self, value: Any) -> Any:
        """The validated value (defaults applied); raise to reject it."""
        ...

    def dump(self, value: Any) -> Any:
        """A validated value in the JSON data model."""
        ...

    def json_schema(self) -> dict[str, Any] | None:
        """The JSON Schema for descriptors, or ``None``."""
        ...


def to_jsonable(value: Any) -> Any:
    """Any pydantic-serialisable value as plain JSON-model Python values
    (NaN and infinities kept, so the core can refuse them)."""
    return to_jsonable_python(value, inf_nan_mode="constants")


class PydanticSchema:
    """A pydantic model class or any type pydantic can validate."""

    __slots__ = ("type", "validate", "_adapter", "_schema")

    validate: Callable[..., Any]

    def __init__(self, tp: Any) -> None:
        self.type = tp
        self._adapter: TypeAdapter[Any] = TypeAdapter(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            # The model's own validator: what `model_validate` runs, minus a call.
            self.validate = tp.__pydantic_validator__.validate_python
            self._schema = tp.model_json_schema()
        else:
            self.validate = self._adapter.validate_python
            self._schema = self._adapter.json_schema()

    def dump(self, value: Any) -> Any:
        # The type's own serializers first (python mode), then the JSON data
        # model with non-finite floats kept as they are: pydantic's JSON mode
        # would turn NaN into null, and the approval hash must bind the
        # input as it is (the core refuses NaN: INVALID_INPUT).
        return to_jsonable_python(self._adapter.dump_python(value), inf_nan_mode="constants")

    def restore(self, data: Any) -> Any:
        """The value ``data`` (a ``dump``) stands for, without running the
        type's validators: a model is built with ``model_construct``
        (nested models too), a field's value by the field's bare type
        (``datetime`` from its ISO text, an enum from its value — the
        field's and the model's validators and ``Annotated`` metadata are
        not run)."""
        return _rebuild(self.type, data, None)

    def json_schema(self) -> dict[str, Any] | None:
        return self._schema

    def validated_json_schema(self) -> dict[str, Any] | None:
        """The JSON Schema of what ``dump`` makes of a validated value (the
        input as policies read it): serialization mode, keyed as ``dump``
        keys it (field names, or serialization aliases under
        ``serialize_by_alias``); ``None`` when pydantic cannot describe it."""
        tp = self.type
        model = isinstance(tp, type) and issubclass(tp, BaseModel)
        by_alias = bool(model and tp.model_config.get("serialize_by_alias", False))
        try:
            if model:
                return tp.model_json_schema(by_alias=by_alias, mode="serialization")  # type: ignore[no-any-return]
            return self._adapter.json_schema(by_alias=by_alias, mode="serialization")
        except Exception:  # noqa: BLE001 - a type pydantic cannot describe: policies read it untyped
            return None


class JsonSchema:
    """A JSON Schema dict, validated with the ``jsonschema`` package."""

    __slots__ = ("schema", "_validator")

    def __init__(self, schema: dict[str, Any]) -> None:
        import jsonschema  # type: ignore[import-untyped]

        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        self.schema = schema
        self._validator = cls(schema)

    def validate(self, value: Any) -> Any:
        errors = list(itertools.islice(self._validator.iter_errors(value), 10))
        if errors:
            # jsonschema's messages quote the rejected value ("'4111…' is not
            # of type 'integer'"): each issue says which keyword failed and
            # what the schema asks, never the value.
            raise InputIssues(
                [
                    (
                        [str(p) for p in e.absolute_path],
                        f"does not satisfy '{e.validator}': {json.dumps(e.validator_value, default=str)[:120]}",
                    )
                    for e in errors
                ]
            )
        return value

    def dump(self, value: Any) -> Any:
        return to_jsonable(value)

    def restore(self, data: Any) -> Any:
        """A JSON Schema validates without converting: the value is its JSON."""
        return data

    def json_schema(self) -> dict[str, Any] | None:
        return self.schema


def validated_json_schema(schema: Schema) -> dict[str, Any] | None:
    """The JSON Schema of a validated value as ``schema.dump`` writes it
    (what policies read), or ``None`` when unknown: a JSON Schema validates
    without converting; a pydantic type says; another ``Schema`` may define
    ``validated_json_schema()``, else its validated values are undescribed."""
    if isinstance(schema, JsonSchema):
        return schema.schema
    own = getattr(schema, "validated_json_schema", None)
    if callable(own):
        result = own()
        return result if isinstance(result, dict) else None
    return None


def as_schema(spec: Any) -> Schema | None:
    """``None``, a ``Schema``, a JSON Schema dict, or a type pydantic validates."""
    if spec is None:
        return None
    if isinstance(spec, dict):
        return JsonSchema(spec)
    if isinstance(spec, Schema) and not isinstance(spec, type):
        return spec
    return PydanticSchema(spec)


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
