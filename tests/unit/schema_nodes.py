"""A walker over JSON Schemas, shared by the contract tests (unit and CLI)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def object_nodes(node: Any, path: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object schema in `node` (the root, $defs, properties, items, anyOf...), with its path."""
    if isinstance(node, dict):
        if node.get("type") == "object":
            yield path, node
        for key, value in node.items():
            yield from object_nodes(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from object_nodes(value, f"{path}/{i}")
