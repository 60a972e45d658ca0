"""`commit`'s result: the `gpuplan.commit/1` document and what its table and HTML show."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CommitReport:
    """A commit: the `gpuplan.commit/1` document (`to_json`) and what its table and HTML show (`view`)."""

    view: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return dict(self.view["doc"])
