"""The commented starter scenario (`gpuplan init` writes it; the web page starts from it): the data
file `starter.yaml` beside this module, as text."""

from __future__ import annotations

from pathlib import Path

# read beside the module (package data), not through importlib.resources: every command imports the api
STARTER: str = (Path(__file__).parent / "starter.yaml").read_text(encoding="utf-8")
"""The starter scenario's text, comments included."""
