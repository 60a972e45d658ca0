"""A heavy call that only waits (importable by the spawned workers: tests/unit is on their sys.path)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class SlowCall:
    seconds: float
    pid_file: str

    def run(self, _inputs: Any) -> Any:
        Path(self.pid_file).write_text(str(os.getpid()))
        time.sleep(self.seconds)
        return {"slept": self.seconds}


@dataclass(frozen=True)
class ModulesCall:
    """Which gpuplan packages the worker running it has imported."""

    def run(self, _inputs: Any) -> Any:
        import sys

        return sorted({m.split(".")[1] for m in sys.modules if m.startswith("gpuplan.")})
