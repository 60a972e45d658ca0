"""The web's one error mapping, at its edge (as the CLI's exit codes are at its own).

- `GpuplanError` (the user's input): 400 for a usage error, else 422, with the CLI's fields
  (`GpuplanError.to_dict()`: error, message, file, line, field, hint).
- `ApiError`: a refusal the web itself makes (a malformed request 400, 401/403 at the edge, 413, 415, 503
  for a time limit), in the same shape.
- Anything else is a bug of ours: 500 `{"error": "internal", "message": "internal error"}`, one log line on
  the server (the traceback only at DEBUG level), nothing of it to the client. An engine's `ValueError` is
  never answered as the user's mistake.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from gpuplan.errors import GpuplanError, UsageError

log = logging.getLogger("gpuplan.web")


@dataclass
class ApiError(Exception):
    """A refusal with its HTTP status and JSON body."""

    status: int
    body: dict[str, Any]


def err(status: int, error: str, message: str, **extra: Any) -> ApiError:
    """An `ApiError` whose body has every field of `GpuplanError.to_dict()` (unset ones null)."""
    body: dict[str, Any] = {"error": error, "message": message, "file": None, "line": None, "field": None,
                            "hint": None}
    body.update(extra)
    return ApiError(status, body)


def from_gpuplan(exc: GpuplanError) -> ApiError:
    """The answer to a user-input error: 400 for a usage error, else 422, with the CLI's fields."""
    return ApiError(400 if isinstance(exc, UsageError) else 422, exc.to_dict())


INTERNAL: dict[str, Any] = {"error": "internal", "message": "internal error", "file": None, "line": None,
                            "field": None, "hint": "please report it; the server's log has one line about it."}


def internal(where: str, exc: BaseException) -> bytes:
    """Log one line about an unexpected exception (the traceback only at DEBUG) and return the 500 body."""
    log.error("internal error in %s: %s: %s", where, type(exc).__name__, str(exc)[:300])
    log.debug("traceback of the internal error in %s", where, exc_info=exc)
    return json.dumps(INTERNAL).encode()
