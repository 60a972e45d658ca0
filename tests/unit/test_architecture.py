"""What the import-linter contracts (pyproject.toml, `lint-imports` in .ci/run) cannot say.

- No import cycles between modules of `src/gpuplan`. An import counts wherever it is written: at the
  top, inside a function (it still ties the two modules) or under TYPE_CHECKING (mypy reads it), and
  importing `a.b.c` also runs `a/__init__.py` and `a/b/__init__.py`, so it ties the importer to those
  packages too (except the importer's own parent packages, which Python has loaded before it).
- No function in `src/` over 150 lines.

The graph is grimp's, the library import-linter reads imports with.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import grimp
import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_FUNCTION_LINES = 150

# Allowances: none left (the web, fast-path, telemetry and long-function ones of issue 22 went as their
# fixes merged). Add one only with a comment naming who removes it and when; a stale one fails below.
ALLOWED_CYCLES: list[set[str]] = []
ALLOWED_LONG_FUNCTIONS: set[tuple[str, str]] = set()


def _parents(module: str) -> set[str]:
    parts = module.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))}


def module_graph(package: str = "gpuplan") -> dict[str, set[str]]:
    """Each module of `package` -> the modules of `package` that importing it runs."""
    g = grimp.build_graph(package, cache_dir=None)
    out: dict[str, set[str]] = {}
    for m in g.modules:
        own = _parents(m) | {m}
        deps: set[str] = set()
        for imported in g.find_modules_directly_imported_by(m):
            deps.add(imported)
            deps |= _parents(imported) - own
        deps.discard(m)
        out[m] = deps
    return out


def cycles(graph: Mapping[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        found.append(comp)
    return found


def long_functions(root: Path, limit: int = MAX_FUNCTION_LINES) -> list[tuple[str, str, int]]:
    """(path under root, function name, lines) of every function or method longer than `limit` lines."""
    out = []
    for f in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines = (node.end_lineno or node.lineno) - start + 1
                if lines > limit:
                    out.append((f.relative_to(root).as_posix(), node.name, lines))
    return out


def test_no_import_cycles_between_modules() -> None:
    found = [c for c in cycles(module_graph()) if c not in ALLOWED_CYCLES]
    assert found == [], f"import cycles: {[sorted(c) for c in found]}"


def test_the_allowed_cycles_still_exist() -> None:
    """An allowance goes when its cycle does (it must not hide a new cycle among the same modules)."""
    found = cycles(module_graph())
    assert [c for c in ALLOWED_CYCLES if c not in found] == []


def test_no_function_over_150_lines() -> None:
    found = [(p, n, k) for p, n, k in long_functions(SRC) if (p, n) not in ALLOWED_LONG_FUNCTIONS]
    assert found == []


def test_the_allowed_long_functions_are_still_long() -> None:
    long = {(p, n) for p, n, _ in long_functions(SRC)}
    assert ALLOWED_LONG_FUNCTIONS - long == set()


# The checks can fail: each finds what it looks for in a small package written for the purpose.

def _package(tmp_path: Path, files: Mapping[str, str]) -> None:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


@pytest.fixture
def on_path(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))


def test_a_cycle_through_an_import_inside_a_function_is_found(on_path: Path) -> None:
    _package(on_path, {"cyc_a/__init__.py": "", "cyc_a/x.py": "import cyc_a.y\n",
                       "cyc_a/y.py": "def f():\n    from cyc_a import x\n    return x\n"})
    assert cycles(module_graph("cyc_a")) == [{"cyc_a.x", "cyc_a.y"}]


def test_a_cycle_through_a_package_init_is_found(on_path: Path) -> None:
    # q.py imports sub.z, which runs sub/__init__.py, which imports q
    _package(on_path, {"cyc_b/__init__.py": "", "cyc_b/q.py": "from cyc_b.sub import z\n",
                       "cyc_b/sub/__init__.py": "from cyc_b import q\n", "cyc_b/sub/z.py": ""})
    assert cycles(module_graph("cyc_b")) == [{"cyc_b.q", "cyc_b.sub"}]


def test_a_package_importing_its_own_modules_is_no_cycle(on_path: Path) -> None:
    _package(on_path, {"cyc_c/__init__.py": "from cyc_c.m import f\n", "cyc_c/m.py": "from cyc_c.n import g\n",
                       "cyc_c/n.py": "def g():\n    return 1\n"})
    assert cycles(module_graph("cyc_c")) == []


def test_a_long_function_is_found(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(150))
    _package(tmp_path, {"ok.py": "def short():\n    return 1\n", "long.py": f"@staticmethod\ndef long():\n{body}"})
    assert long_functions(tmp_path) == [("long.py", "long", 152)]
