"""Reads under a root path, so every probe can be pointed at a fixture tree in tests.

`Root("/")` reads the real machine; `Root(tmp_path)` reads a tree of `proc/`, `sys/` and friends
written by a test. Every read is best effort: a missing or unreadable file gives None, never raises.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

Runner = Callable[[list[str]], "str | None"]
"""Runs a command (argv) and returns its stdout, or None when it is absent or fails."""


class Root:
    def __init__(self, root: str | os.PathLike[str] = "/") -> None:
        self.root = Path(root)

    @property
    def is_real(self) -> bool:
        return self.root.resolve() == Path("/")

    def path(self, rel: str) -> Path:
        return self.root / rel.lstrip("/")

    def read(self, rel: str) -> str | None:
        try:
            return self.path(rel).read_text(encoding="utf-8", errors="replace")
        except (OSError, ValueError):
            return None

    def read_line(self, rel: str) -> str | None:
        text = self.read(rel)
        return text.strip() if text is not None else None

    def exists(self, rel: str) -> bool:
        try:
            return self.path(rel).exists()
        except OSError:
            return False

    def listdir(self, rel: str) -> list[str]:
        try:
            return sorted(os.listdir(self.path(rel)))
        except OSError:
            return []

    def environ(self, rel: str = "/proc/self/environ") -> dict[str, str]:
        """A NUL-separated environment file (like /proc/self/environ) as a dict; {} when unreadable."""
        text = self.read(rel)
        if not text:
            return {}
        out: dict[str, str] = {}
        for item in text.split("\0"):
            if "=" in item:
                key, _, value = item.partition("=")
                out[key] = value
        return out


def subprocess_runner(timeout_s: float = 10.0) -> Runner:
    """The real runner: runs argv[0] when it is on PATH, returns stdout (even on a non-zero exit)."""
    import shutil
    import subprocess

    def run(argv: list[str]) -> str | None:
        if not argv or shutil.which(argv[0]) is None:
            return None
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, check=False)
        except (OSError, subprocess.SubprocessError):
            return None
        return proc.stdout

    return run


def no_runner(argv: list[str]) -> str | None:
    """A runner for fixture trees: no external program is consulted."""
    return None


def env_for(root: Root, env: Mapping[str, str] | None) -> Mapping[str, str]:
    """The environment to inspect: the given one, else ours on the real root, else the tree's."""
    if env is not None:
        return env
    return dict(os.environ) if root.is_real else root.environ()
