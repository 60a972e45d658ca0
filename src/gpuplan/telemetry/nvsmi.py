"""nvidia-smi CSV logs (`nvidia-smi --query-gpu=... --format=csv[,nounits] -l N`).

Columns are found by header name, in any order and any subset; values may carry units (`99 %`,
`30994 MiB`) or not (`--format=csv,nounits`). The node is the `hostname` column when present, else the
file name without its extension; the GPU is `index` (else `uuid`, else `pci.bus_id`); a log with none
of these (a single-GPU log, e.g. `--query-gpu=timestamp,utilization.gpu`) is one stream = one GPU,
named `0`. The model is `name` when present. Timestamps: nvidia-smi's `2024/03/01 13:48:11.412`,
ISO 8601, or Unix time (seconds, or milliseconds when the number is above 1e11; a logger that writes
`date +%s` before the nvidia-smi values).

The file is read in blocks of whole lines and each block is parsed with vectorised polars string
operations, so memory holds one block of text plus compact numeric columns (about 18 bytes a row),
and every line keeps its exact line number for the bad-data report.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, overload

from gpuplan.errors import TelemetryError
from gpuplan.telemetry.samples import Collector

if TYPE_CHECKING:
    from typing import TypeAlias

    import numpy as np
    import polars as pl

    # The compiled parser's layout arguments: ncol, i_time, i_gpu, i_util, unit_start, unit_len, units.
    _Layout: TypeAlias = tuple[int, int, int, int, np.ndarray, np.ndarray, np.ndarray]

BLOCK_BYTES = 16 * 1024 * 1024
_HEADER_FIELD = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(?:\[([^\]]*)\])?\s*$")
GPU_COLUMNS = ("index", "uuid", "pci.bus_id")
SINGLE_GPU = "0"  # the GPU of a log with no GPU column: the whole file is one GPU
UNIX_MS_FROM = 1e11  # a numeric timestamp above this is milliseconds (1e11 s is the year 5138)
TIME_FORMATS = ("%Y/%m/%d %H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f")


@dataclass(frozen=True)
class Header:
    names: tuple[str, ...]
    units: tuple[str, ...]  # "" where the header gives no unit

    def col(self, name: str) -> int | None:
        return self.names.index(name) if name in self.names else None


def parse_header(line: str, path: Path, line_no: int) -> Header | None:
    """The header of an nvidia-smi CSV, or None when `line` is not a header line."""
    fields = line.split(",")
    names: list[str] = []
    units: list[str] = []
    for f in fields:
        m = _HEADER_FIELD.match(f)
        if not m or m.group(1)[0].isdigit():
            return None
        names.append(m.group(1).lower())
        units.append((m.group(2) or "").strip())
    if "timestamp" not in names and "utilization.gpu" not in names:
        return None
    return Header(tuple(names), tuple(units))


def _check_header(h: Header, path: Path, line_no: int) -> None:
    missing = [n for n in ("timestamp", "utilization.gpu") if n not in h.names]
    if missing:
        raise TelemetryError(
            f"the nvidia-smi header has no {' or '.join(missing)} column (found: {', '.join(h.names)})",
            file=path,
            line=line_no,
            hint="log with nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv -l 10",
        )


def read_nvsmi(path: Path, collector: Collector, block_bytes: int = BLOCK_BYTES, src: int | None = None) -> None:
    """Read one nvidia-smi CSV log into `collector` (bad rows counted there, never raised).

    `src`: the source id when the collector reads a file again (see `Collector.finish`)."""
    import polars as pl

    path = Path(path)
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise TelemetryError(f"cannot read the file: {exc.strerror}", file=path) from None
    if src is None:
        source_name = str(path)
        src = collector.add_source(source_name, lambda loc: f"{source_name}:{loc}")
    again_src = src
    collector.streaming_file(src, lambda again: read_nvsmi(path, again, block_bytes, src=again_src))
    node_default = path.stem
    header: Header | None = None
    header_line = 0
    next_line = 1  # line number of the first line of the next block
    carry = b""
    with fh:
        while True:
            block = fh.read(block_bytes)
            eof = not block
            data = carry + block
            if not eof:
                cut = data.rfind(b"\n")
                if cut < 0:
                    carry = data
                    continue
                carry, data = data[cut + 1 :], data[: cut + 1]
            else:
                carry = b""
            if data:
                if header is None:
                    text = data.decode("utf-8", errors="replace")
                    header, header_line, text, skipped = _take_header(text, path, next_line)
                    next_line += skipped
                    data = text.encode("utf-8")
                if header is not None:
                    n_lines, header = _parse_data(data, next_line, header, path, node_default, src, collector)
                    next_line += n_lines
            if eof:
                break
    if header is None:
        raise TelemetryError(
            "the file has no nvidia-smi CSV header",
            file=path,
            hint="expected a first line such as: timestamp, index, utilization.gpu [%]",
        )
    del pl


def _take_header(text: str, path: Path, first_line: int) -> tuple[Header | None, int, str, int]:
    """Find the header at the start of `text`; return it, its line, the rest and lines consumed."""
    pos = 0
    line_no = first_line
    while pos < len(text):
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end].strip("\r\ufeff \t")
        if line:
            h = parse_header(line.replace("\x00", ""), path, line_no)
            if h is None:
                raise TelemetryError(
                    f"the first line is not an nvidia-smi CSV header: {line[:60]!r}",
                    file=path,
                    line=line_no,
                    hint="log with --format=csv (keep the header), e.g. "
                    "nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv -l 10",
                )
            _check_header(h, path, line_no)
            return h, line_no, text[end + 1 :], line_no - first_line + 1
        pos = end + 1
        line_no += 1
    return None, 0, "", line_no - first_line


def _lines(text: str) -> pl.DataFrame:
    """One row per line of `text` (a blank line is an empty string), fast: polars' CSV reader with a
    separator that no longer occurs in the text, so each whole line is one field."""
    import polars as pl

    if "\x01" in text:
        text = text.replace("\x01", "\ufffd")
    if text.endswith("\n"):
        text = text[:-1]
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    lines = pl.read_csv(
        text.encode("utf-8"),
        has_header=False,
        separator="\x01",
        quote_char=None,
        schema={"s": pl.String},
        encoding="utf8-lossy",
        truncate_ragged_lines=True,
    )
    return lines.with_columns(pl.col("s").fill_null(""))


MIN_LINE_BYTES = 27  # the shortest line the compiled parser accepts, newline included
MAX_LINE_FALLBACKS = 32  # unusual lines per block parsed one by one before the rest of it goes careful


def _parse_data(
    data: bytes, first_line: int, h: Header, path: Path, node_default: str, src: int, col: Collector
) -> tuple[int, Header]:
    """Parse a block of whole lines; returns the number of lines and the layout in force at its end.

    Ordinary lines go through the compiled strict parser (`_loops.parse_block`, C); each line it does
    not accept is parsed and classified on its own by the careful path (a header line switches the
    layout), and after MAX_LINE_FALLBACKS such lines the rest of the block goes to the careful path
    at once. Layouts the compiled parser does not know (GPU by uuid, a hostname column) go careful,
    and so does everything where the C extension was not built (the careful path is the reference)."""
    import numpy as np

    from gpuplan.telemetry._loops import parse_block

    pos, line, misses = 0, first_line, 0
    arrays: tuple[np.ndarray, ...] | None = None
    buf = np.frombuffer(data, dtype=np.uint8)
    while pos < len(data):
        layout = _compiled_layout(h) if misses < MAX_LINE_FALLBACKS else None
        if layout is None:
            rest = data[pos:] if pos else data
            if _fast_ok(rest):
                n, h2 = _parse_fast(rest, line, h, path, node_default, src, col)
            else:
                n, h2 = _parse_block(rest.decode("utf-8", errors="replace"), line, h, 0, path, node_default, src, col)
            return line + n - first_line, h2 or h
        if arrays is None:
            # Rows one call can return (+ the refused line): an accepted line holds a 23-byte time, two
            # more fields of at least a byte and their commas, and a newline (the last may lack it).
            cap = len(data) // MIN_LINE_BYTES + 2
            arrays = (
                np.empty(cap, dtype=np.int64),
                np.empty(cap, dtype=np.int64),
                np.empty(cap, dtype=np.float32),
                np.empty(cap, dtype=np.int64),
            )
        t, g, u, ls = arrays
        r = parse_block(buf, pos, *layout, t, g, u, ls)
        ok = r if r >= 0 else -1 - r
        if ok:
            _commit(data, line, h, node_default, src, col, t[:ok], g[:ok], u[:ok], ls[:ok])
            line += ok
        if r >= 0:
            break
        # One unusual line: classify it with the careful path, then carry on compiled.
        start = int(ls[ok])
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end + 1
        text = data[start:end].decode("utf-8", errors="replace")
        if text.strip():
            _, h2 = _parse_block(text, line, h, 0, path, node_default, src, col)
            h = h2 or h
        line += 1
        pos = end
        misses += 1
    return line - first_line, h


def _compiled_layout(h: Header) -> _Layout | None:
    """The compiled parser's arguments for layout `h`, or None when it does not handle that layout
    (it handles GPU by `index`, no `hostname` column, utilisation in %) or was not built."""
    import numpy as np

    from gpuplan.telemetry._loops import compiled

    if compiled() is None:
        return None
    i_time, i_util, i_gpu = h.col("timestamp"), h.col("utilization.gpu"), h.col("index")
    if i_time is None or i_util is None or i_gpu is None or "hostname" in h.names:
        return None
    if h.units[i_util] not in ("", "%") or h.units[i_time] or h.units[i_gpu]:
        return None
    ncol = len(h.names)
    unit_len = np.zeros(ncol, dtype=np.int64)
    unit_start = np.zeros(ncol, dtype=np.int64)
    unit_bytes = b""
    for i, unit in enumerate(h.units):
        if unit and i not in (i_util, i_time):
            b = unit.encode("utf-8")
            unit_start[i], unit_len[i] = len(unit_bytes), len(b)
            unit_bytes += b
    units = np.frombuffer(unit_bytes or b"\0", dtype=np.uint8)
    return (ncol, i_time, i_gpu, i_util, unit_start, unit_len, units)


def _commit(
    data: bytes,
    first_line: int,
    h: Header,
    node_default: str,
    src: int,
    col: Collector,
    t: np.ndarray,
    g: np.ndarray,
    u: np.ndarray,
    ls: np.ndarray,
) -> None:
    """Hand rows the compiled parser accepted (lines first_line...) to the collector."""
    import numpy as np

    n = len(t)
    col.rows += n
    # GPU index -> key id (registered in the order the careful path would: by key text).
    idx, first = _unique_first(g)
    lut = np.zeros(int(idx.max()) + 1, dtype=np.int64)
    i_model = h.col("name")
    for gi, row in sorted(zip(idx.tolist(), first.tolist(), strict=True), key=lambda p: str(p[0])):
        kid = col.registry.id(node_default, str(gi))
        lut[gi] = kid
        if i_model is not None:
            end = data.find(b"\n", int(ls[row]))
            line = data[int(ls[row]) : end if end >= 0 else len(data)].rstrip(b"\r")
            model = line.split(b",")[i_model].decode("utf-8", errors="replace").strip()
            col.registry.set_model(kid, model)
    loc = np.arange(first_line, first_line + n, dtype=np.int64)
    col.add_rows(src, lut[g], t, u, loc)


def _unique_first(g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(g, return_index=True)` (the GPU indexes in a block, ascending, and where each first
    appears) without sorting the block: a log names every GPU within its first lines, so the first
    occurrences are taken from the head and only GPUs first seen later are searched for."""
    import numpy as np

    top = int(g.max())
    if top >= 1 << 16:  # unusual indexes: the general way
        return np.unique(g, return_index=True)
    idx, first = np.unique(g[:4096], return_index=True)
    present = np.flatnonzero(np.bincount(g, minlength=top + 1))
    if len(present) == len(idx):
        return idx, first
    late = np.setdiff1d(present, idx, assume_unique=True)
    first_late = np.array([int(np.argmax(g == v)) for v in late.tolist()], dtype=first.dtype)
    order = np.argsort(np.r_[idx, late], kind="stable")
    return np.r_[idx, late][order], np.r_[first, first_late][order]


_HEAD_RE = re.compile(rb"[ \t]*(?:timestamp|index|name|uuid|utilization\.gpu)[ \t]*(?:\[|,|\n|$)")


def _fast_ok(data: bytes) -> bool:
    """A block with nothing unusual (no blank line, NUL, CR, quote, stray header) can go straight to
    polars' CSV reader; anything else takes the line-by-line path, which classifies every odd line."""
    return not (
        b"\n\n" in data
        or data.startswith(b"\n")
        or b"\x00" in data
        or b"\x01" in data
        or b"\r" in data
        or b'"' in data
        or (_HEAD_RE.match(data) is not None)
    )  # a header line inside the block is found after parsing (see _parse_fast)


def _parse_fast(
    data: bytes, first_line: int, h: Header, path: Path, node_default: str, src: int, col: Collector
) -> tuple[int, Header]:
    import polars as pl

    ncol = len(h.names)
    body = data[:-1] if data.endswith(b"\n") else data
    if not body:
        return 0, h
    try:
        split = pl.read_csv(
            body,
            has_header=False,
            separator=",",
            quote_char=None,
            schema={f"f{i}": pl.String for i in range(ncol)},
            encoding="utf8-lossy",
        )
    except pl.exceptions.PolarsError:  # ragged lines (too many fields, or too few at the end): line by line
        text = data.decode("utf-8", errors="replace")
        lines = _lines(text)
        lines = lines.with_columns(line=pl.int_range(first_line, first_line + lines.height, dtype=pl.UInt32))
        _parse_rows(lines, h, path, node_default, src, col)
        return lines.height, h
    restarted = pl.any_horizontal(
        [pl.col(f"f{i}").str.contains("utilization.gpu", literal=True) for i in range(ncol)]
    ).any()
    if split.select(restarted).item():  # a logger restarted: header lines inside the block
        text = data.decode("utf-8", errors="replace")
        return _parse_block(text, first_line, h, 0, path, node_default, src, col)
    n = split.height
    col.rows += n
    split = split.with_columns(
        line=pl.int_range(first_line, first_line + n, dtype=pl.UInt32),
        nul=pl.lit(False),
        **{f"f{ncol}": pl.lit(None, dtype=pl.String)},
    )
    _parse_split(split, h, path, node_default, src, col)
    return n, h


# With a layout in force the block ends with one (None only while no header has been seen).
@overload
def _parse_block(
    text: str,
    first_line: int,
    header: Header,
    header_line: int,
    path: Path,
    node_default: str,
    src: int,
    col: Collector,
) -> tuple[int, Header]: ...


@overload
def _parse_block(
    text: str,
    first_line: int,
    header: Header | None,
    header_line: int,
    path: Path,
    node_default: str,
    src: int,
    col: Collector,
) -> tuple[int, Header | None]: ...


def _parse_block(
    text: str,
    first_line: int,
    header: Header | None,
    header_line: int,
    path: Path,
    node_default: str,
    src: int,
    col: Collector,
) -> tuple[int, Header | None]:
    """Parse whole lines; returns how many lines `text` held and the layout in force at its end
    (repeated headers switch the layout)."""
    import polars as pl

    if not text:
        return 0, header
    lines = _lines(text)
    n = lines.height
    lines = lines.with_columns(line=pl.int_range(first_line, first_line + n, dtype=pl.UInt32))
    # Header lines inside the block (a logger restarted and appended): split the block at them.
    is_head = pl.col("s").str.contains(r"^\s*(timestamp|index|name|uuid|utilization\.gpu)\s*(\[|,|$)")
    heads = lines.filter(is_head)
    if header is None:
        return n, header
    segments: list[tuple[Header, pl.DataFrame]] = []
    start_line = first_line
    current = header
    for s, ln in zip(heads["s"].to_list(), heads["line"].to_list(), strict=True):
        seg = lines.filter((pl.col("line") >= start_line) & (pl.col("line") < ln))
        segments.append((current, seg))
        new = parse_header(s.replace("\x00", ""), path, ln)
        if new is not None:
            _check_header(new, path, ln)
            if new.names == current.names and new.units != current.units:
                col.bad.add("unit_change", 1, [f"{path}:{ln}"])
            current = new
        start_line = ln + 1
    segments.append((current, lines.filter(pl.col("line") >= start_line)))
    for h, seg in segments:
        if seg.height:
            _parse_rows(seg, h, path, node_default, src, col)
    return n, current


_NUM = r"^\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z%/]*)\s*$"
_NA = ("n/a", "nan", "", "unknown", "not supported")


def _parse_rows(
    seg: pl.DataFrame, h: Header, path: Path, node_default: str, src: int, col: Collector
) -> None:
    """Classify and convert one run of data lines under header `h` (all vectorised)."""
    import polars as pl

    seg = seg.filter(pl.col("s").str.strip_chars() != "")  # blank lines carry nothing: not rows
    if not seg.height:
        return
    col.rows += seg.height
    ncol = len(h.names)
    # One split for all fields; field `ncol` is non-null only when the line has too many fields.
    split = seg.select(
        "line",
        pl.col("s").str.contains("\x00", literal=True).alias("nul"),
        pl.col("s").str.split_exact(",", ncol).struct.rename_fields([f"f{i}" for i in range(ncol + 1)]),
    ).unnest("s")
    _parse_split(split, h, path, node_default, src, col)


def _parse_split(
    split: pl.DataFrame, h: Header, path: Path, node_default: str, src: int, col: Collector
) -> None:
    """Fields f0..f{ncol} (the last non-null only when a line has too many), `line`, `nul`."""
    import polars as pl

    ncol = len(h.names)
    i_time = h.col("timestamp")
    i_util = h.col("utilization.gpu")
    gpu_name = next((c for c in GPU_COLUMNS if c in h.names), None)
    i_gpu = h.col(gpu_name) if gpu_name is not None else None
    i_host = h.col("hostname")
    i_model = h.col("name")
    assert i_time is not None and i_util is not None
    util_unit = h.units[i_util] or "%"

    def f(i: int) -> pl.Expr:
        return pl.col(f"f{i}").str.strip_chars()

    unit_cols = [i for i in range(ncol) if h.units[i] and i not in (i_util, i_time)]
    us = f(i_util)
    df = split.select(
        "line",
        "nul",
        nf_low=pl.col(f"f{ncol - 1}").is_null(),
        nf_high=pl.col(f"f{ncol}").is_not_null(),
        ts=_parse_time(f(i_time), split[f"f{i_time}"]),
        us=us,
        uv=us.str.strip_chars_end(" " + util_unit).cast(pl.Float64, strict=False),
        gpu=f(i_gpu) if i_gpu is not None else pl.lit(SINGLE_GPU),
        host=f(i_host) if i_host is not None else pl.lit(node_default),
        model=f(i_model) if i_model is not None else pl.lit(None, dtype=pl.String),
        ux=pl.any_horizontal(
            [
                ~(
                    pl.col(f"f{i}").str.ends_with(h.units[i])
                    | pl.col(f"f{i}").str.strip_chars().cast(pl.Float64, strict=False).is_not_null()
                    | pl.col(f"f{i}").str.strip_chars().str.starts_with("[")
                )
                for i in unit_cols
            ]
        )
        if unit_cols
        else pl.lit(False),
    )
    # A util value that is a number but carries another unit than the header's: a unit change.
    other_unit = (
        pl.col("uv").is_null()
        & pl.col("us").str.contains(_NUM)
        & ~pl.col("us").str.extract(_NUM, 2).is_in(["", util_unit])
    )
    is_na = pl.col("us").str.starts_with("[") | pl.col("us").str.to_lowercase().is_in(list(_NA))
    gpu_bad = pl.col("gpu").is_null() | (pl.col("gpu") == "") | pl.col("gpu").str.starts_with("[")
    if gpu_name == "index":
        gpu_bad = gpu_bad | pl.col("gpu").cast(pl.UInt32, strict=False).is_null()
    kind = (
        pl.when(pl.col("nul"))
        .then(pl.lit("nul_bytes"))
        .when(pl.col("nf_low"))
        .then(pl.lit("truncated"))
        .when(pl.col("nf_high"))
        .then(pl.lit("malformed"))
        .when(is_na)
        .then(pl.lit("na"))
        .when(other_unit | pl.col("ux"))
        .then(pl.lit("unit_change"))
        .when(pl.col("ts").is_null() | pl.col("uv").is_null() | gpu_bad)
        .then(pl.lit("malformed"))
        .when((pl.col("uv") < 0) | (pl.col("uv") > 100))
        .then(pl.lit("out_of_range"))
        .otherwise(pl.lit(None, dtype=pl.String))
    )
    ok = ~(
        pl.col("nul")
        | pl.col("nf_low")
        | pl.col("nf_high")
        | pl.col("ux")
        | pl.col("ts").is_null()
        | pl.col("uv").is_null()
        | (pl.col("uv") < 0)
        | (pl.col("uv") > 100)
        | gpu_bad
    )
    df = df.with_columns(ok=ok)
    bad = df.filter(~pl.col("ok"))
    if bad.height:
        summary = (
            bad.select("line", kind=kind)
            .group_by("kind", maintain_order=True)
            .agg(pl.len().alias("n"), pl.col("line").head(5).alias("first"))
        )
        for kind_name, count, first in summary.iter_rows():
            col.bad.add(kind_name, count, [f"{path}:{ln}" for ln in first])
    good = df.filter(pl.col("ok"))
    if not good.height:
        return
    good = good.with_columns(k=pl.col("gpu") if i_host is None else pl.col("host") + "\x1f" + pl.col("gpu"))
    keys = good.group_by("k").agg(pl.col("host").first(), pl.col("gpu").first(), pl.col("model").first())
    mapping: dict[str, int] = {}
    for k, host, gpu, model in keys.sort("k").iter_rows():
        kid = col.registry.id(host or node_default, gpu)
        col.registry.set_model(kid, model)
        mapping[k] = kid
    out = good.select(
        key=pl.col("k").replace_strict(mapping, return_dtype=pl.UInt32),
        t=pl.col("ts").cast(pl.Int64),
        u=(pl.col("uv") / 100.0).cast(pl.Float32),
        loc=pl.col("line"),
    )
    col.add_rows(
        src, out["key"].to_numpy(), out["t"].to_numpy(), out["u"].to_numpy(), out["loc"].to_numpy()
    )


def _parse_time(expr: pl.Expr, values: pl.Series) -> pl.Expr:
    """nvidia-smi's `2020/11/12 13:48:11.412` when the value has a `/`, Unix time when it is a number
    (milliseconds above UNIX_MS_FROM, else seconds), else ISO 8601 (each row by its own value, so that
    the answer does not depend on where blocks start)."""
    import polars as pl

    slash = expr.str.strptime(pl.Datetime("ms"), TIME_FORMATS[0], strict=False)
    iso = (
        expr.str.replace("T", " ", literal=True)
        .str.strip_suffix("Z")
        .str.strptime(pl.Datetime("ms"), TIME_FORMATS[1], strict=False)
    )
    num = expr.cast(pl.Float64, strict=False)
    ms = pl.when(num.is_finite() & (num >= 0)).then(
        pl.when(num >= UNIX_MS_FROM).then(num).otherwise(num * 1000.0).round(0)
    )
    unix = pl.from_epoch(ms.cast(pl.Int64, strict=False), time_unit="ms").cast(pl.Datetime("ms"))
    present = values.len() - values.null_count()
    n_num = int(values.str.strip_chars().cast(pl.Float64, strict=False).is_not_null().sum())
    n_slash = int(values.str.contains("/", literal=True).sum())
    if n_num == present:
        return unix
    if n_slash == present:
        return slash
    if n_slash == 0 and n_num == 0:
        return iso
    return (
        pl.when(num.is_not_null())
        .then(unix)
        .when(expr.str.contains("/", literal=True))
        .then(slash)
        .otherwise(iso)
    )
