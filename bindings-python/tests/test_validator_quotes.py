"""pydantic messages that quote the input itself (a discriminated union's
unknown tag, a character of a UUID) reach the model without the quoted
value: an issue names a field and a reason, never the value (issues.rs)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from orpc_agent import CapabilityError, capability, create_capability_registry

SECRET = "4111-1111-1111-1111"


class Card(BaseModel):
    kind: Literal["card"]
    number: str


class Bank(BaseModel):
    kind: Literal["bank"]
    iban: str


class Pay(BaseModel):
    method: Annotated[Card | Bank, Field(discriminator="kind")]
    ref: uuid.UUID | None = None


@capability(id="pay.check", description="Check a payment.", expose={"direct": True}, side_effect="read", risk="low")
async def check(x: Pay) -> dict[str, Any]:
    return {}


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ({"method": {"kind": SECRET}}, "/method: Input tag does not match any of the expected tags: 'card', 'bank'"),
        ({"method": {"kind": "card", "number": "1"}, "ref": f"z{SECRET}"}, "/ref: Input should be a valid UUID"),
    ],
)
async def test_a_message_that_quotes_the_input_reaches_the_model_without_it(value: Any, words: str) -> None:
    with pytest.raises(CapabilityError) as e:
        await create_capability_registry([check]).invoke("pay.check", value)
    assert e.value.code == "INVALID_INPUT"
    assert words in e.value.message
    assert SECRET not in e.value.message and "`z`" not in e.value.message  # pydantic quotes a UUID's bad character
