"""Input and output schemas: pydantic types, JSON Schema dicts, or any
object with the ``Schema`` protocol.

A schema validates (stage 4 / 12, when the core asks), dumps a value into
the JSON data model (only when the core asks: approval hash, declarative
input predicates, audit payloads), and describes itself as JSON Schema for
descriptors. Validation *decisions* — whether to validate, what happens on
failure — are the core's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, TypeAdapter
from pydantic_core import to_jsonable_python

__all__ = ["Schema", "PydanticSchema", "JsonSchema", "as_schema", "to_jsonable"]


@runtime_checkable
class Schema(Protocol):
    """A validator the registry can use for a capability's input or output."""

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

    def json_schema(self) -> dict[str, Any] | None:
        return self._schema


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
        error = next(iter(self._validator.iter_errors(value)), None)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path)
            raise ValueError(f"{where or 'input'}: {error.message}")
        return value

    def dump(self, value: Any) -> Any:
        return to_jsonable(value)

    def json_schema(self) -> dict[str, Any] | None:
        return self.schema


def as_schema(spec: Any) -> Schema | None:
    """``None``, a ``Schema``, a JSON Schema dict, or a type pydantic validates."""
    if spec is None:
        return None
    if isinstance(spec, dict):
        return JsonSchema(spec)
    if isinstance(spec, Schema) and not isinstance(spec, type):
        return spec
    return PydanticSchema(spec)
