"""`gpuplan.lazy`: heavy modules load on first use, and then the stand-in is the module."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuplan.lazy import LazyModule, yaml_load


def run(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}  # as a user who did not set it
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


def test_importing_the_place_imports_none_of_them() -> None:
    out = run("import sys, gpuplan.lazy as l; l.np, l.pl, l.yaml, l.orjson, l.jinja2; "
              "print(sorted(m for m in ('numpy', 'polars', 'yaml', 'orjson') if m in sys.modules))")
    assert out == "[]"


def test_the_first_name_read_imports_the_module() -> None:
    out = run("import sys; from gpuplan.lazy import np; before = 'numpy' in sys.modules; "
              "a = np.arange(3); print(before, 'numpy' in sys.modules, type(a).__module__, int(a.sum()))")
    assert out == "False True numpy 3"


def test_numpy_loads_with_one_blas_thread_unless_the_user_set_it() -> None:
    code = "import os; from gpuplan.lazy import np; np.zeros(1); print(os.environ.get('OPENBLAS_NUM_THREADS'))"
    assert run(code) == "1"
    assert run("import os; os.environ['OPENBLAS_NUM_THREADS'] = '3'; " + code.split("; ", 1)[1]) == "3"


def test_no_name_of_the_stand_in_hides_one_of_the_module() -> None:
    # yaml.load is a function of PyYAML: the stand-in must not answer with a method of its own
    assert yaml_load("a: [1, 2.5, x]\nb: {c: null}\n") == {"a": [1, 2.5, "x"], "b": {"c": None}}
    assert yaml_load("") is None
    stand_in = LazyModule("json")
    assert stand_in.loads("[1]") == [1] and stand_in.dumps is __import__("json").dumps
    assert "loads" in dir(stand_in)


def test_a_missing_module_raises_on_use_not_on_import() -> None:
    missing = LazyModule("gpuplan_no_such_module")
    with pytest.raises(ModuleNotFoundError):
        missing.anything  # noqa: B018


@pytest.mark.parametrize(("args", "absent"), [
    (["compare", "examples/seed-910b.yaml", "-o", "json"], ("numpy", "polars", "scipy", "rich", "jinja2", "numba")),
    (["compare", "examples/seed-910b.yaml"], ("numpy", "polars", "scipy", "jinja2", "numba")),
    (["plan", "examples/seed-hybrid.yaml", "-o", "json"], ("polars", "scipy", "rich", "jinja2", "numba")),
])
def test_a_command_imports_only_what_it_runs(args: list[str], absent: tuple[str, ...]) -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = ("import sys, io, contextlib; from gpuplan.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main({[a if not a.startswith('examples/') else str(root / a) for a in args]!r})\n"
            f"print(rc, sorted(m for m in {absent!r} if m in sys.modules))")
    assert run(code) == "0 []"


def test_every_command_starts_numpy_with_one_blas_thread() -> None:
    code = ("import os, io, contextlib; from gpuplan.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['--version'])\n"
            "print(os.environ.get('OPENBLAS_NUM_THREADS'))")
    assert run(code) == "1"


@pytest.mark.parametrize(("args", "code"), [
    (["compare", "examples/seed-910b.yaml", "-o", "json"], 0),
    (["compare", "no-such-scenario.yaml"], 2),
])
def test_the_command_exits_with_the_import_objects_frozen(args: list[str], code: int) -> None:
    """`entry` freezes the collector's objects before exiting (the interpreter's last collections then
    skip what the imports made); the exit is otherwise the same: atexit handlers run, the exit code is
    the command's, the whole output is written."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    argv = ["gpuplan", *(a if not a.startswith("examples/") else str(root / a) for a in args)]
    script = ("import atexit, gc, sys\n"
              "atexit.register(lambda: print('frozen', gc.get_freeze_count() > 1000, file=sys.stderr))\n"
              f"sys.argv = {argv!r}\n"
              "from gpuplan.cli import entry\n"
              "entry()\n")
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == code
    assert done.stderr.splitlines()[-1] == "frozen True"
    if code == 0:
        assert json.loads(done.stdout)["schema"].startswith("gpuplan.compare/")


def test_a_replay_without_a_scenario_imports_no_scenario_models(tmp_path: Path) -> None:
    """`simulate -o json` without --scenario runs the reader, the replay and the JSON writer: no scenario
    models, no YAML, no table or report libraries."""
    trace = tmp_path / "jobs.csv"
    trace.write_text("submit_time,duration,gpus\n0,3600,4\n0,1800,2\n600,7200,1\n", encoding="utf-8")
    absent = ("polars", "scipy", "rich", "jinja2", "yaml", "gpuplan.inputs.scenario_types",
              "gpuplan.engines.advise")
    if importlib.util.find_spec("gpuplan.sim._ckernel") is not None:  # read, replayed, summed in C
        absent = (*absent, "numpy", "gpuplan.inputs.demand", "gpuplan.engines.pricing")
    code = ("import sys, io, contextlib; from gpuplan.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main(['simulate', {str(trace)!r}, '-r', '4', '-o', 'json'])\n"
            f"print(rc, sorted(m for m in {absent!r} if m in sys.modules))")
    assert run(code) == "0 []"


@pytest.mark.parametrize("args", [
    ["-r", "0,8,16:32:8", "-w", "2h"],
    ["-r", "16", "--wait", "inf", "--queueing", "best-effort-fifo", "--packing", "node"],
    ["-r", "8,48", "-w", "30m", "-s", "examples/seed-910b.yaml", "--max-wait", "p95=2h"],
])
def test_simulate_json_is_the_same_bytes_without_the_extension(shared_dir: Path, args: list[str]) -> None:
    """The C reader, preparation, replay and summary against the plain reference (numpy), whole
    commands on the shared openb trace: the same `-o json`, byte for byte."""
    pytest.importorskip("gpuplan.sim._ckernel", reason="the C extension was not built here")
    root = Path(__file__).resolve().parents[2]
    trace = shared_dir / "traces/alibaba-gpu-v2023/openb_pod_list_default.csv"
    argv = ["simulate", str(trace), *(str(root / a) if a.startswith("examples/") else a for a in args), "-o", "json"]
    code = ("import sys, io, contextlib; from gpuplan.cli import main\n"
            "{hide}buf = io.StringIO()\n"
            "with contextlib.redirect_stdout(buf):\n"
            f"    rc = main({argv!r})\n"
            "from gpuplan.sim.replay import kernel_name\n"
            "print(rc, kernel_name(), 'numpy' in sys.modules)\n"
            "print(buf.getvalue())\n")
    with_c = run(code.format(hide=""))
    without = run(code.format(hide="sys.modules['gpuplan.sim._ckernel'] = None\n"))
    head_c, body_c = with_c.split("\n", 1)
    head_ref, body_ref = without.split("\n", 1)
    assert head_c.split()[:2] == ["0", "c"] and head_ref.split() == ["0", "reference", "True"]
    assert '"runs"' in body_c and body_c == body_ref
