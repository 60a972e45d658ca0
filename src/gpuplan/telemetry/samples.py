"""What every telemetry reader produces: utilisation samples per GPU, plus a ledger of bad data.

Readers turn their format into numeric columns (GPU key id, time in ms, utilisation as a ratio,
source file id, location in that file) and report every row they could not use in a `BadLog`.
Clock jumps and duplicate timestamps are found per GPU as the samples stream in (or, for whole
series, by sorting in `finish`), and the samples are folded into per-GPU statistics for the analysis.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuplan.telemetry.stream import Aggregates, StreamAccumulator

if TYPE_CHECKING:  # polars and numpy are imported lazily by the functions that need them
    import numpy as np
    import polars as pl

# Every kind of bad data, in the order reports list them.
BAD_KINDS = (
    "nul_bytes",  # a line containing NUL bytes (a log cut by a crash or a full disk)
    "truncated",  # fewer fields than the header
    "malformed",  # too many fields, or a value that does not parse
    "na",  # [N/A], [Not Supported], NaN: the driver had no value
    "unit_change",  # a value's unit differs from its header's (or a new header changes units)
    "out_of_range",  # utilisation below 0% or above 100%
    "duplicate",  # a second sample of the same GPU at the same timestamp (the first is kept)
    "clock_jump",  # a timestamp earlier than one already seen for that GPU in the same file
)
EXAMPLES_PER_KIND = 5
UTIL_COLUMNS = ("key", "t", "u")


@dataclass
class BadLog:
    """Counts of unusable rows by kind, with the first few locations (`file:line`) of each."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, kind: str, count: int, examples: list[str]) -> None:
        if count <= 0:
            return
        if kind not in BAD_KINDS:
            raise ValueError(f"unknown bad-data kind {kind!r}")
        self.counts[kind] = self.counts.get(kind, 0) + count
        have = self.examples.setdefault(kind, [])
        have.extend(examples[: max(0, EXAMPLES_PER_KIND - len(have))])

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def by_kind(self) -> dict[str, int]:
        return {k: self.counts[k] for k in BAD_KINDS if self.counts.get(k)}

    def examples_by_kind(self) -> dict[str, list[str]]:
        return {k: list(self.examples[k]) for k in BAD_KINDS if self.counts.get(k)}


@dataclass
class KeyRegistry:
    """Maps (node, gpu) to a dense integer id; remembers each GPU's model name when known."""

    keys: list[tuple[str, str]] = field(default_factory=list)
    index: dict[tuple[str, str], int] = field(default_factory=dict)
    models: dict[int, str] = field(default_factory=dict)

    def id(self, node: str, gpu: str) -> int:
        key = (node, gpu)
        found = self.index.get(key)
        if found is None:
            found = len(self.keys)
            self.index[key] = found
            self.keys.append(key)
        return found

    def set_model(self, key_id: int, model: str | None) -> None:
        if model and key_id not in self.models:
            self.models[key_id] = model


@dataclass
class Source:
    """One input (a file or a live query) and how to name a location inside it."""

    name: str
    describe: Callable[[int], str]


@dataclass
class Samples:
    """Per-GPU statistics of all usable samples (see `gpuplan.telemetry.stream.Aggregates`)."""

    registry: KeyRegistry
    agg: Aggregates
    sources: list[str]
    rows: int  # data rows read (good + bad)
    bad: BadLog
    extras: dict[int, dict[str, float]] = field(default_factory=dict)  # key -> {metric: mean}
    notes: list[str] = field(default_factory=list)


@dataclass
class _Streamed:
    """A file a reader streamed, and how to read it again into another collector. The reader passes
    its own function, so that this module never imports a reader (which imports it)."""

    src: int
    read_again: Callable[[Collector], None]


@dataclass
class Collector:
    """Accumulates readers' output across inputs, then `finish()`es into `Samples`.

    Readers hand over samples with `add_rows(src, key, t, u, loc)` in input order. While each GPU's
    samples come from a single source (the usual case: one log per node), they are folded block by
    block into per-GPU statistics (`StreamAccumulator`), so memory stays bounded. Readers that give
    whole series (Prometheus) append frames to `parts`. When one GPU turns up in two sources, the
    order of its samples is only known after sorting, so `finish` re-reads the streamed files into
    `parts` and takes the whole-frame path for everything (same results, memory grows with rows).
    """

    registry: KeyRegistry = field(default_factory=KeyRegistry)
    parts: list[pl.DataFrame] = field(default_factory=list)  # key, t, u, src (u16), loc (u32)
    sources: list[Source] = field(default_factory=list)
    rows: int = 0
    bad: BadLog = field(default_factory=BadLog)
    extras: dict[int, dict[str, list[float]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stream: bool = True
    _acc: StreamAccumulator = field(default_factory=StreamAccumulator)
    _owner: dict[int, int] = field(default_factory=dict)  # key -> the source that streamed it
    _streamed: list[_Streamed] = field(default_factory=list)
    _replay: bool = False
    _stream_bad: dict[str, tuple[int, list[tuple[int, int]]]] = field(default_factory=dict)
    good: dict[int, int] = field(default_factory=dict)  # source -> usable samples handed over

    def add_source(self, name: str, describe: Callable[[int], str]) -> int:
        self.sources.append(Source(name, describe))
        return len(self.sources) - 1

    def add_extra(self, key_id: int, metric: str, total: float, count: int) -> None:
        acc = self.extras.setdefault(key_id, {}).setdefault(metric, [0.0, 0.0])
        acc[0] += total
        acc[1] += count

    def locations(self, src: list[int], loc: list[int]) -> list[str]:
        return [self.sources[s].describe(int(p)) for s, p in zip(src, loc, strict=True)]

    def streaming_file(self, src: int, read_again: Callable[[Collector], None]) -> None:
        """A reader announces a file it streams, with the call that reads it again (source `src`) into
        another collector, should `finish` need the whole series."""
        if self.stream:
            self._streamed.append(_Streamed(src, read_again))

    def add_rows(self, src: int, key: np.ndarray, t: np.ndarray, u: np.ndarray, loc: np.ndarray) -> None:
        """Usable samples of one source, in input order: key ids, t (ms), u (ratio, float32), loc."""
        import numpy as np
        import polars as pl

        if not len(key):
            return
        self.good[src] = self.good.get(src, 0) + len(key)
        if not self.stream:
            self.parts.append(
                pl.DataFrame(
                    {
                        "key": np.array(key, dtype=np.uint32),  # copies: readers reuse their buffers
                        "t": np.array(t, dtype=np.int64),
                        "u": np.array(u, dtype=np.float32),
                        "src": np.full(len(key), src, dtype=np.uint16),
                        "loc": np.array(loc, dtype=np.uint32),
                    }
                )
            )
            return
        if self._replay:
            return  # everything streamed is re-read by finish()
        for k in np.flatnonzero(np.bincount(key)).tolist():  # the key ids present (ids are small ints)
            owner = self._owner.setdefault(int(k), src)
            if owner != src:
                self._replay = True
                return
        flags = self._acc.add(key, t, u)
        for code, kind in ((1, "clock_jump"), (2, "duplicate")):
            where = np.flatnonzero(flags == code)
            if len(where):
                n, ex = self._stream_bad.get(kind, (0, []))
                if len(ex) < EXAMPLES_PER_KIND:
                    ex = ex + [(src, int(x)) for x in np.asarray(loc)[where[:EXAMPLES_PER_KIND]]]
                self._stream_bad[kind] = (n + len(where), ex)

    def finish(self) -> Samples:
        import numpy as np
        import polars as pl

        from gpuplan.telemetry.stream import StreamAccumulator

        schema = {"key": pl.UInt32, "t": pl.Int64, "u": pl.Float32, "src": pl.UInt16, "loc": pl.UInt32}
        if not self._replay and self.parts and self._owner:
            raw_keys = np.unique(np.concatenate([p["key"].to_numpy() for p in self.parts]))
            self._replay = any(int(k) in self._owner for k in raw_keys)
        stream_bad = self._stream_bad
        if self._replay:
            self._reread()
            self._acc = StreamAccumulator()
            stream_bad = {}
        frame = pl.concat(self.parts, how="vertical") if self.parts else pl.DataFrame(schema=schema)
        self.parts = []
        found: dict[str, tuple[int, list[tuple[int, int]]]] = {}
        if frame.height:
            # Clock jumps: within one source, a GPU's timestamp falls below the latest one already seen.
            # Rows are grouped by (src, key) in input order; a running maximum per group is one
            # numpy accumulate over t shifted by the group number (t < 2^42 ms, so groups never overlap).
            frame = frame.sort(["src", "key", "loc"])
            src = frame["src"].to_numpy().astype(np.int64)
            key = frame["key"].to_numpy().astype(np.int64)
            t = frame["t"].to_numpy()
            new_group = np.r_[True, (src[1:] != src[:-1]) | (key[1:] != key[:-1])]
            shifted = t - t.min() + (np.cumsum(new_group) << 42)
            running = np.maximum.accumulate(shifted)
            jump = np.r_[False, shifted[1:] < running[:-1]] & ~new_group
            frame = (
                frame.with_columns(jump=pl.Series(jump)).sort(["src", "loc"])
                if jump.any()
                else (frame.with_columns(jump=pl.lit(False)))
            )
            found["clock_jump"] = _found(frame.filter(pl.col("jump")))
            frame = frame.filter(~pl.col("jump")).drop("jump")
            # Duplicates: same GPU, same timestamp; keep the first seen (input order), count the rest.
            frame = frame.sort(["key", "t", "src", "loc"])
            dup = (pl.col("key") == pl.col("key").shift(1)) & (pl.col("t") == pl.col("t").shift(1))
            frame = frame.with_columns(dup=dup.fill_null(False))
            found["duplicate"] = _found(frame.filter(pl.col("dup")).sort(["src", "loc"]))
            frame = frame.filter(~pl.col("dup"))
            # The clean samples, sorted by GPU and time, fold like one block of a stream.
            self._acc.add(frame["key"].to_numpy(), frame["t"].to_numpy(), frame["u"].to_numpy())
        for kind in ("clock_jump", "duplicate"):
            n1, ex1 = stream_bad.get(kind, (0, []))
            n2, ex2 = found.get(kind, (0, []))
            first = sorted(ex1 + ex2)[:EXAMPLES_PER_KIND]
            self.bad.add(kind, n1 + n2, self.locations([s for s, _ in first], [p for _, p in first]))
        agg = self._acc.finalize(len(self.registry.keys))
        self._acc = StreamAccumulator()
        extras = {
            k: {m: (v[0] / v[1]) for m, v in metrics.items() if v[1] > 0}
            for k, metrics in self.extras.items()
        }
        return Samples(
            registry=self.registry,
            agg=agg,
            sources=[s.name for s in self.sources],
            rows=self.rows,
            bad=self.bad,
            extras=extras,
            notes=list(self.notes),
        )

    def _reread(self) -> None:
        """Read the streamed files again into `parts` (their bad rows were counted the first time)."""
        again = Collector(registry=self.registry, sources=self.sources, stream=False)
        for f in self._streamed:
            f.read_again(again)
        self.parts = again.parts + self.parts
        self._streamed = []


def _found(bad: pl.DataFrame) -> tuple[int, list[tuple[int, int]]]:
    head = bad.head(EXAMPLES_PER_KIND)
    return bad.height, list(zip(head["src"].to_list(), head["loc"].to_list(), strict=True))
