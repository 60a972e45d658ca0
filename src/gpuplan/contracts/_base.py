"""What every contract model shares: closed records, strict types, whole numbers that JSON may write as 4.0."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def _whole(value: Any) -> Any:
    # JSON Schema's "integer" accepts 4.0; strict pydantic would not, so the two would disagree.
    return int(value) if isinstance(value, float) and value.is_integer() else value


Int = Annotated[int, BeforeValidator(_whole)]
Count = Annotated[int, Field(ge=0), BeforeValidator(_whole)]


class Record(BaseModel):
    """A JSON object of a contract: unknown keys are errors, and no silent coercion ("8" is not 8)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class OpenRecord(Record):
    """A record that may gain fields before its contract names them (the money objects, while the
    money model grows); the fields it lists are still checked."""

    model_config = ConfigDict(extra="allow")
