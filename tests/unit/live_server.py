"""Shared by the tests that run the real server or a real browser: `gpuplan serve` as a process on a
free loopback port, Debian's Chromium for Playwright, and where screenshots go."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def gpuplan_serve(*args: str, env: dict[str, str] | None = None, tries: int = 150) -> Iterator[str]:
    """`gpuplan serve ARGS` on a free port; yields its base URL once /api/health answers, stops it after."""
    port = free_port()
    exe = Path(sys.executable).with_name("gpuplan")
    proc = subprocess.Popen([str(exe), "serve", "--host", "127.0.0.1", "--port", str(port), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(tries):
            try:
                if httpx.get(base + "/api/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            pytest.fail("gpuplan serve did not start: " + (proc.stderr.read1().decode() if proc.stderr else ""))
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def artifacts_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where screenshots go: `$GPUPLAN_ARTIFACTS` (CI keeps it), else a temporary folder of the test run."""
    env = os.environ.get("GPUPLAN_ARTIFACTS")
    path = Path(env) if env else tmp_path_factory.mktemp("web-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path
