"""The one table of input limits, read by every reader on the command line and the web (issue 27).

Each limit is a value, a unit and the reason it exists; past one, the reader raises `LimitError`
(exit 2 on the command line, 422 on the web) naming the file, the field path and the limit, before
any engine allocates for it. The bounds are set where a valid input still finishes in seconds and
a few hundred MB: a plan holds one float per hour and GPU type over the horizon, so ten years
(87,600 h) of 100 GPU types is 70 MB; past that the cost grows with the input, not with its meaning.

`docs/limits.md` renders `TABLE` (`render_markdown`); a test keeps the two equal.

Names (ids of workloads, offers, sites, providers, quote fields) are checked by `name_problem`:
at most `MAX_NAME_CHARS` characters and no control characters (C0, DEL, C1, and the Unicode line
and paragraph separators), so that no name can start a new line in a Slurm config, a YAML scalar,
a log or a terminal. Exporters still escape what their format needs; this is the edge's check.

JSON is read by `load_json`: at most `MAX_JSON_DEPTH` levels of nesting (measured on the bytes
before parsing, so 200,000 nested brackets cost a scan, not a `RecursionError`), and no `NaN`,
`Infinity` or `-Infinity` (not JSON; a duration of `Infinity` would never end).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuplan.errors import GpuplanError

HOURS_PER_YEAR = 8_760

MAX_DURATION_HOURS = 10 * HOURS_PER_YEAR
MAX_HORIZON_MONTHS = 120
MAX_WORKLOADS = 10_000
MAX_OFFERS = 1_000
MAX_GPUS_PER_WORKLOAD = 100_000
MAX_DEMAND_GPUS = 100_000
MAX_DEMAND_ROWS = 1_000_000
MAX_DEMAND_HOURS = 10 * HOURS_PER_YEAR
MAX_TRACE_ROWS = 10_000_000
MAX_POOL_SIZES = 1_000
MAX_RESERVED_GPUS = 1_000_000
MAX_JSON_DEPTH = 64
MAX_NAME_CHARS = 128
MAX_YAML_VALUES = 1_000_000
MAX_QUANTITY = 10**12
MAX_DRIFT = 10
MAX_NOTE_CHARS = 1_000
MAX_WEB_COMMIT_PATHS = 20_000
MAX_WEB_QUOTE_ROWS = 100_000


@dataclass(frozen=True)
class Limit:
    """One row of the table: the constant's name, its value and unit, where it applies, and why."""

    name: str
    value: int
    unit: str
    applies_to: str
    why: str
    scope: str = "command line and web"


TABLE: tuple[Limit, ...] = (
    Limit("MAX_DURATION_HOURS", MAX_DURATION_HOURS, "hours (10 years)",
          "every duration in a scenario: `duration`, `min_term`, `setup`, `checkpoint_interval`, "
          "`support.response`",
          "plan and commit hold one value per hour of the longest duration; `duration: 3000000d` asked "
          "for 72 million hours (6.5 GB)."),
    Limit("MAX_HORIZON_MONTHS", MAX_HORIZON_MONTHS, "months (10 years)", "`market.horizon`, lease term lengths",
          "commit simulates each month of the horizon on every path."),
    Limit("MAX_QUANTITY", MAX_QUANTITY, "in the number's own unit",
          "every other number of a scenario: prices, costs, GB, Gbit/s, seconds, rates (`.inf` is refused)",
          "money sums over 10 years, 100,000 GPUs and 10,000 workloads stay finite; a price of 1e308 made "
          "commit fail (inf in the solver) and printed inf."),
    Limit("MAX_DRIFT", MAX_DRIFT, "times the price or demand (+1000%) per period",
          "`market` price drifts and demand growth",
          "commit compounds them over the horizon; 10x a month for 120 months is still a finite number."),
    Limit("MAX_WORKLOADS", MAX_WORKLOADS, "workloads", "`workloads` of one scenario",
          "every command is linear or worse in workloads; 200,000 ran past 20 s in each."),
    Limit("MAX_OFFERS", MAX_OFFERS, "offers", "`offers` of one scenario",
          "compare evaluates every workload on every offer (10,000 x 1,000 pairs at most)."),
    Limit("MAX_GPUS_PER_WORKLOAD", MAX_GPUS_PER_WORKLOAD, "GPUs", "`workloads[i].gpus`",
          "the pool sizing scans pool sizes up to the peak demand."),
    Limit("MAX_DEMAND_GPUS", MAX_DEMAND_GPUS, "GPUs", "`gpus` of one demand CSV row (one hour, one GPU type)",
          "the pool sizing scans pool sizes up to the peak demand; a count of 1e12 asked for 7.28 TiB."),
    Limit("MAX_DEMAND_ROWS", MAX_DEMAND_ROWS, "rows", "rows of a demand CSV",
          "about 100 years of hourly rows for one GPU type, or a year of 100 types."),
    Limit("MAX_DEMAND_HOURS", MAX_DEMAND_HOURS, "hours (10 years)",
          "first to last time of a demand CSV or a trace given to `plan`",
          "the demand is an hourly array over that span; two far-apart timestamps asked for 3.6 GB."),
    Limit("MAX_TRACE_ROWS", MAX_TRACE_ROWS, "rows", "lines of a CSV job trace (`simulate`, `plan --trace`)",
          "the replay holds every job in memory (about 100 bytes a job)."),
    Limit("MAX_POOL_SIZES", MAX_POOL_SIZES, "pool sizes", "`simulate --reserved A:B:STEP` (levels of one sweep)",
          "each level is one replay of the whole trace."),
    Limit("MAX_RESERVED_GPUS", MAX_RESERVED_GPUS, "GPUs", "one pool size R of a sweep",
          "ten times the largest workload a scenario may hold."),
    Limit("MAX_YAML_VALUES", MAX_YAML_VALUES, "values (keys, scalars, lists, mappings)",
          "a scenario once its YAML aliases are expanded",
          "10,000 workloads of 20 fields are ~410,000; an alias bomb of 10^9 values is refused before it "
          "expands."),
    Limit("MAX_JSON_DEPTH", MAX_JSON_DEPTH, "levels of nesting",
          "every JSON file read: plan JSON, probe JSON, Prometheus JSON, Philly trace",
          "no valid input nests past 8; 200,000 levels raised RecursionError."),
    Limit("MAX_NAME_CHARS", MAX_NAME_CHARS, "characters",
          "every id and name: workloads, offers, providers, sites, quote fields",
          "names become Slurm partition names, YAML scalars and file names (255 bytes at most on most "
          "file systems); control characters are refused at any length."),
    Limit("MAX_NOTE_CHARS", MAX_NOTE_CHARS, "characters", "a quote's `note`",
          "free text kept with each quote and printed in `quotes list`; one line (no control characters)."),
    Limit("MAX_WEB_COMMIT_PATHS", MAX_WEB_COMMIT_PATHS, "paths", "`paths` of a commit request",
          "a request must finish within the server's heavy timeout; the command line takes up to 1,000,000.",
          scope="web"),
    Limit("MAX_WEB_QUOTE_ROWS", MAX_WEB_QUOTE_ROWS, "lines", "one quotes import upload",
          "an import is one transaction; the command line has no such limit.", scope="web"),
)


class LimitError(GpuplanError):
    """An input past one of the limits in `TABLE` (exit 2; 422 on the web)."""

    kind = "limit"


def _fmt(x: float) -> str:
    if isinstance(x, int) or float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    if abs(x) < 1e15:
        return f"{x:,.6g}"
    return f"{x:.3g}"


def over(value: float, limit: int, *, what: str, unit: str, field: str | None, file: str | Path | None = None,
         line: int | None = None, hint: str | None = None, error: type[GpuplanError] = LimitError) -> GpuplanError:
    """The error for `value` past `limit` (the caller raises it), e.g.
    `scenario.yaml:29: workloads[1].duration: 72,000,000 hours is over the limit of 87,600 hours`."""
    return error(f"{what}{_fmt(value)} {unit} is over the limit of {_fmt(limit)} {unit}", field=field,
                 file=file, line=line,
                 hint=hint or "docs/limits.md lists every input limit and why it exists.")


# --- names --------------------------------------------------------------------------------------------

CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def name_problem(value: str) -> str | None:
    """Why `value` cannot be an id or a name, or None when it can: longer than `MAX_NAME_CHARS`
    characters, or holding a control character (named by its code point)."""
    m = CONTROL_CHARACTERS.search(value)
    if m is not None:
        return (f"contains the control character U+{ord(m.group()):04X} at position {m.start() + 1}; "
                "names are one line of printable text")
    if len(value) > MAX_NAME_CHARS:
        return f"is {len(value):,} characters long; names are at most {MAX_NAME_CHARS} characters"
    return None


def check_name(value: str) -> str:
    """`value` when it is a valid name, else ValueError (pydantic turns it into a field error)."""
    problem = name_problem(value)
    if problem is not None:
        raise ValueError(f"a name that {problem}")
    return value


# --- JSON ---------------------------------------------------------------------------------------------

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BIG_EXPONENT = re.compile(rb"[eE][+]?0*[0-9]{3,}")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def json_depth(raw: bytes) -> int:
    """The deepest nesting of `raw`'s arrays and objects (strings skipped). C-speed byte operations; numpy
    only when there are more opening brackets than the limit (otherwise the count bounds the depth)."""
    return _bracket_depth(_STRING.sub(b"", raw))


def _bracket_depth(bare: bytes) -> int:
    brackets = bare.translate(None, _NOT_BRACKETS)
    opens = brackets.count(b"[") + brackets.count(b"{")
    if opens <= MAX_JSON_DEPTH:
        return opens
    import numpy as np

    a = np.frombuffer(brackets, dtype=np.uint8)
    steps = np.where((a == ord("[")) | (a == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is past the largest number (about 1.8e308)")
    return value


def load_json(source: str | bytes | Path, *, file: str | Path | None = None, hint: str | None = None,
              error: type[GpuplanError] = GpuplanError) -> Any:
    """Parse JSON from a path, text or bytes with the limits: at most `MAX_JSON_DEPTH` levels, no NaN or
    Infinity, UTF-8. Every failure is `error` (a `GpuplanError`) naming the file and, where known, the line."""
    if isinstance(source, Path):
        file = source if file is None else file
        try:
            source = source.read_bytes()
        except OSError as exc:
            raise error(f"cannot read the file: {exc.strerror}", file=file, hint=hint) from None
    raw = source.encode("utf-8", "surrogatepass") if isinstance(source, str) else source
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"not UTF-8 text (byte {exc.start})", file=file, line=raw.count(b"\n", 0, exc.start) + 1,
                    hint=hint or "save the file as UTF-8.") from None
    bare = _STRING.sub(b"", raw)
    depth = _bracket_depth(bare)
    if depth > MAX_JSON_DEPTH:
        raise over(depth, MAX_JSON_DEPTH, what="nesting of ", unit="levels", field=None, file=file,
                   error=error, hint=hint)
    try:
        if _BIG_EXPONENT.search(bare):  # 1e999 would read as inf; checking every float costs ~3x
            return json.loads(text, parse_constant=_no_constant, parse_float=_finite)
        return json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise error(f"not valid JSON: {exc.msg}", file=file, line=exc.lineno, hint=hint) from None
    except (ValueError, RecursionError) as exc:
        raise error(f"not valid JSON: {exc}", file=file, hint=hint) from None


# --- the table as documentation -------------------------------------------------------------------------

def render_markdown() -> str:
    """docs/limits.md: the table, one row a limit (a test compares the file with this text)."""
    lines = [
        "# Input limits",
        "",
        "One table for the command line and the web (`gpuplan.limits`). Past a limit the command exits 2",
        "(the web answers 422 with `\"error\": \"limit\"`), naming the file, the field and the limit, before",
        "any engine runs. Names are also refused when they hold a control character (a newline, a tab, an",
        "escape, U+2028/U+2029). This file is generated from the module: `python -m gpuplan.limits`.",
        "",
        "| limit | value | unit | applies to | where | why |",
        "|---|---:|---|---|---|---|",
    ]
    for row in TABLE:
        lines.append(f"| `{row.name}` | {row.value:,} | {row.unit} | {row.applies_to} | {row.scope} | {row.why} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
