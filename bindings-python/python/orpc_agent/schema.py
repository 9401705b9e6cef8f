"""Input and output schemas: pydantic types, JSON Schema dicts, or any
object with the ``Schema`` protocol.

A schema validates (stage 4 / 12, when the core asks), dumps a value into
the JSON data model (only when the core asks: approval hash, declarative
input predicates, audit payloads), restores a stored dump to the value it
stands for without validating again (a resumed handler's input, the
approval-input view), and describes itself as JSON Schema for descriptors.
Validation *decisions* — whether to validate, what happens on failure —
are the core's.

``restore``, ``rebuilds`` and ``same_value`` live in ``_restore`` and are
re-exported here.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, TypeAdapter
from pydantic_core import to_jsonable_python

from ._restore import _rebuild, rebuilds, restore, same_value
from ._sync_hooks import refuse_async

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
        # Validation is synchronous: an async `validate`'s coroutine would be
        # taken for the validated value and the input never checked.
        refuse_async(spec.validate, f"{type(spec).__name__}.validate", noun="method")
        return spec
    return PydanticSchema(spec)
