"""Errors a user can act on.

Every error that reaches a user names where (file, line, field path), what was expected, and a hint.
Interfaces translate them: the CLI prints one line and exits 2; the web app answers 4xx JSON.
"""

from __future__ import annotations

from pathlib import Path


class GpuplanError(Exception):
    """Base of every error caused by the user's input (exit code 2)."""

    exit_code = 2
    kind = "error"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        file: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.file = str(file) if file is not None else None
        self.line = line
        self.field = field

    @property
    def location(self) -> str:
        parts: list[str] = []
        if self.file:
            parts.append(self.file + (f":{self.line}" if self.line else ""))
        if self.field:
            parts.append(self.field)
        return ": ".join(parts)

    def __str__(self) -> str:
        text = f"{self.location}: {self.message}" if self.location else self.message
        if self.hint:
            text += f" Hint: {self.hint}"
        return text

    def to_dict(self) -> dict[str, object]:
        return {
            "error": self.kind,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "field": self.field,
            "hint": self.hint,
        }


class ScenarioError(GpuplanError):
    kind = "scenario"


class CatalogError(GpuplanError):
    kind = "catalog"


class TraceError(GpuplanError):
    kind = "trace"


class TelemetryError(GpuplanError):
    kind = "telemetry"


class ProbeError(GpuplanError):
    kind = "probe"


class ExportError(GpuplanError):
    kind = "export"


class UsageError(GpuplanError):
    """A bad command-line value (a flag's text that does not parse)."""

    kind = "usage"
