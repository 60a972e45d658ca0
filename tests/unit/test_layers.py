"""The pipeline's dependency rules, read from the imports (every import, including those inside functions).

inputs (scenario, catalog, traces, telemetry readers) -> models (perf, tariff) -> engines (advise, plan,
simulate, audit, probe) -> contracts -> renderers -> interfaces (cli, web, export), with `gpuplan.api` the
one orchestrator between engines and interfaces.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def _module(path: Path) -> str:
    return ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")


def _imports(top_level_only: bool = False) -> dict[str, set[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for f in sorted((SRC / "gpuplan").rglob("*.py")):
        mod = _module(f)
        tree = ast.parse(f.read_text(encoding="utf-8"))
        nodes = tree.body if top_level_only else list(ast.walk(tree))
        for node in nodes:
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("gpuplan") \
                    and node.level == 0:
                out[mod].add(node.module)
                out[mod].update(f"{node.module}.{a.name}" for a in node.names)
            elif isinstance(node, ast.Import):
                out[mod].update(a.name for a in node.names if a.name.startswith("gpuplan"))
        out.setdefault(mod, set())
    return dict(out)


IMPORTS = _imports()
MODULES = set(IMPORTS)


def _reaches(mod: str, prefixes: tuple[str, ...]) -> list[str]:
    return sorted(i for i in IMPORTS[mod] if i in MODULES and i.startswith(prefixes))


RENDERERS = ("gpuplan.render",)
FORMULAS = ("gpuplan.models", "gpuplan.engines.cost", "gpuplan.engines.pool", "gpuplan.engines.pricing",
            "gpuplan.sim.cost", "gpuplan.sim.replay")
ENGINES = ("gpuplan.inputs", "gpuplan.models", "gpuplan.engines", "gpuplan.sim.replay", "gpuplan.sim.cost",
           "gpuplan.sim.traces", "gpuplan.sim.pool",
           "gpuplan.telemetry.analyze", "gpuplan.telemetry.stream", "gpuplan.telemetry.nvsmi",
           "gpuplan.probe.checks", "gpuplan.probe.host", "gpuplan.probe.overhead")
INTERFACES = ("gpuplan.cli", "gpuplan.web", "gpuplan.api", "gpuplan.render", "gpuplan.export")


@pytest.mark.parametrize(("layer", "later"), [
    ("gpuplan.inputs", ("gpuplan.models", "gpuplan.engines", "gpuplan.contracts")),
    ("gpuplan.models", ("gpuplan.engines", "gpuplan.contracts")),
])
def test_each_layer_imports_only_earlier_ones(layer: str, later: tuple[str, ...]) -> None:
    bad = {m: _reaches(m, later) for m in MODULES if m.startswith(layer)}
    assert not {m: v for m, v in bad.items() if v}


def test_the_rules_see_the_package() -> None:
    assert {"gpuplan.api", "gpuplan.models.tariff", "gpuplan.cli.plan", "gpuplan.web.app",
            "gpuplan.render.plan"} <= MODULES
    # the reader sees imports inside functions too (the CLI imports lazily)
    assert "gpuplan.api" in IMPORTS["gpuplan.cli.compare"]


def test_the_web_never_imports_the_cli() -> None:
    bad = {m: _reaches(m, ("gpuplan.cli",)) for m in MODULES if m.startswith("gpuplan.web")}
    assert not {m: v for m, v in bad.items() if v}


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if m.startswith(RENDERERS)))
def test_renderers_call_no_money_or_performance_formula(mod: str) -> None:
    assert not _reaches(mod, FORMULAS), "a renderer reads results; the engine computes"


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if m.startswith(ENGINES)))
def test_engines_never_import_interfaces_or_renderers(mod: str) -> None:
    assert not _reaches(mod, INTERFACES)


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if m.startswith("gpuplan.cli")))
def test_the_cli_reaches_engines_only_through_the_api(mod: str) -> None:
    # reading the catalog to list it is an input, not an engine
    assert _reaches(mod, tuple(e for e in (*ENGINES, *FORMULAS) if e != "gpuplan.inputs")) == []


def test_no_import_cycles_at_module_level() -> None:
    graph = {m: {i for i in deps if i in MODULES and i != m} for m, deps in _imports(top_level_only=True).items()}
    # a package's __init__ importing its own submodules is how re-exports work; not a cycle of layers
    graph = {m: {i for i in deps if m != i.rsplit(".", 1)[0]} for m, deps in graph.items()}
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        seen[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if seen.get(n) == 1:
                raise AssertionError(f"import cycle: {' -> '.join(stack[stack.index(n):] + [n])}")
            if n not in seen:
                visit(n)
        stack.pop()
        seen[m] = 2

    for m in sorted(graph):
        if m not in seen:
            visit(m)


def test_a_misplaced_import_is_caught(tmp_path: Path) -> None:
    """The reader is not vacuous: an import inside a function is seen."""
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from gpuplan.engines.cost import option_cost\n    return option_cost\n")
    names = {n.module for n in ast.walk(ast.parse(f.read_text())) if isinstance(n, ast.ImportFrom)}
    assert names == {"gpuplan.engines.cost"}


def test_the_replay_loads_no_pydantic() -> None:
    """`simulate` without a scenario needs no scenario types: the tariff imports them for typing only."""
    import subprocess
    import sys

    code = "import sys, gpuplan.sim.replay; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


@pytest.mark.parametrize("mod", ["gpuplan.render.plan", "gpuplan.render.compare"])
def test_contract_renderers_read_only_the_contract(mod: str) -> None:
    """Renderers that read their contract import no engine, model or input at all."""
    assert not _reaches(mod, ("gpuplan.engines", "gpuplan.models", "gpuplan.inputs"))
