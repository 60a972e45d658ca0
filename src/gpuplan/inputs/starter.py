"""The commented starter scenario (`gpuplan init` writes it; the web page starts from it): the data
file `starter.yaml` beside this module, as text."""

from __future__ import annotations

from importlib import resources

STARTER: str = resources.files("gpuplan.inputs").joinpath("starter.yaml").read_text(encoding="utf-8")
"""The starter scenario's text, comments included."""
