"""Quotes from text: a CSV file (`quotes import`) or one set of command-line values (`quotes add`).

Every row is checked before anything is stored, so a bad row stores nothing; an error names the file,
the line and the column.
"""

from __future__ import annotations

import csv
import math
import re
from datetime import date
from pathlib import Path

from gpuplan.errors import GpuplanError
from gpuplan.inputs.gpu_names import GpuNameError
from gpuplan.inputs.gpu_names import resolve as resolve_gpu
from gpuplan.inputs.units import PRICE_PERIODS, per_gpu_hour
from gpuplan.limits import CONTROL_CHARACTERS, MAX_NOTE_CHARS, name_problem
from gpuplan.quotes import CSV_COLUMNS, MODES, Quote

_TERM = re.compile(r"^\s*(\d+)\s*(mo|month|months)?\s*$")
DAYS_PER_MONTH = 30.0


def make_quote(*, provider: str, gpu: str, mode: str, term: str | None,
               price: str | float | tuple[float, float], per: str,
               currency: str, when: str, note: str = "", gpus_per_node: int = 8, where: str = "",
               file: str | None = None, line: int | None = None) -> Quote:
    """One quote from its text fields, checked; `where` prefixes the field name in errors."""

    def bad(field: str, message: str, hint: str) -> GpuplanError:
        return GpuplanError(message, file=file, line=line, field=f"{where}{field}", hint=hint)

    if not provider.strip():
        raise bad("provider", "a quote needs a provider", "who quoted it, e.g. example-cloud.")
    if not gpu.strip():
        raise bad("gpu", "a quote needs a GPU", "a GPU id such as ascend-910b (`gpuplan catalog gpus`).")
    for key, value in (("provider", provider), ("gpu", gpu)):
        problem = name_problem(value.strip())
        if problem is not None:
            raise bad(key, f"{value[:40]!r} {problem}", "ids and names are one line of at most 128 characters.")
    note = note or ""
    note_hint = f"a note is one line of at most {MAX_NOTE_CHARS:,} characters."
    if len(note) > MAX_NOTE_CHARS:
        raise bad("note", f"the note is {len(note):,} characters long", note_hint)
    control = CONTROL_CHARACTERS.search(note)
    if control is not None:
        raise bad("note", f"the note contains the control character U+{ord(control.group()):04X}", note_hint)
    try:  # `910B`, `H100 SXM` and the catalog id are one GPU, as in every other command
        gpu_id = resolve_gpu(gpu.strip()).id
    except GpuNameError as exc:
        raise bad("gpu", exc.message, exc.hint) from None
    if mode not in MODES:
        raise bad("mode", f"expected one of {', '.join(MODES)}, got {mode!r}",
                  "bare-metal (a lease), container or vm (billed by the hour).")
    term_months: int | None = None
    if term is not None and str(term).strip():
        m = _TERM.match(str(term).lower())
        if not m or int(m.group(1)) < 1:
            raise bad("term", f"expected whole months such as 1mo or 12mo, got {term!r}", "leave it empty for none.")
        term_months = int(m.group(1))
    low, high = _price_range(price)
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0 or high < low:
        raise bad("price", f"expected a price above 0 or a range low-high, got {price!r}",
                  "the amount per `per`, e.g. 200, or a quoted range such as 180-260.")
    amount = (low + high) / 2
    if per not in PRICE_PERIODS:
        raise bad("per", f"expected one of {', '.join(PRICE_PERIODS)}, got {per!r}", "e.g. gpu-day or gpu-hour.")
    if not re.fullmatch(r"[A-Z]{3}", currency or ""):
        raise bad("currency", f"expected an ISO 4217 code such as CNY, got {currency!r}", "e.g. CNY or USD.")
    try:
        day = date.fromisoformat(when.strip())
    except (AttributeError, ValueError):
        raise bad("date", f"expected a date YYYY-MM-DD, got {when!r}", "the day the quote was given.") from None
    pgh = per_gpu_hour(amount, per, gpus_per_node=gpus_per_node, days_per_month=DAYS_PER_MONTH)
    ranged = high > low
    return Quote(provider.strip(), gpu_id, mode, term_months, amount, per, pgh, currency, day, note,
                 gpus_per_node, price_low=low if ranged else None, price_high=high if ranged else None)


_RANGE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(?:-|–|\.\.)\s*([0-9]*\.?[0-9]+)\s*$")


def _price_range(price: str | float | tuple[float, float]) -> tuple[float, float]:
    """(low, high) of a price: one number, a text range `180-260` (or `180..260`), or a pair."""
    if isinstance(price, tuple | list) and len(price) == 2:
        try:
            return float(price[0]), float(price[1])
        except (TypeError, ValueError):
            return math.nan, math.nan
    m = _RANGE.match(price) if isinstance(price, str) else None
    if m:
        return float(m.group(1)), float(m.group(2))
    try:
        value = float(price)
    except (TypeError, ValueError):
        return math.nan, math.nan
    return value, value


def read_quotes_csv(path: str | Path) -> list[Quote]:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise GpuplanError(f"cannot read: {exc.strerror}", file=p, hint="give a quotes CSV file.") from None
    except UnicodeDecodeError:
        raise GpuplanError("not UTF-8 text", file=p, hint="save the CSV as UTF-8.") from None
    rows = list(csv.reader(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    if not rows:
        raise GpuplanError("no header row", file=p, line=1, hint=f"columns: {','.join(CSV_COLUMNS)}")
    header = [h.strip() for h in rows[0]]
    missing = [c for c in CSV_COLUMNS if c not in header and c not in ("term", "note")]
    if missing:
        raise GpuplanError(f"missing column(s): {', '.join(missing)}", file=p, line=1,
                           hint=f"columns: {','.join(CSV_COLUMNS)} (term and note may be left out).")
    # line numbers in the file, comments included
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if not line.lstrip().startswith("#")]
    out = []
    for n, row in enumerate(rows[1:], start=1):
        if not any(cell.strip() for cell in row):
            continue
        rec = dict(zip(header, (c.strip() for c in row), strict=False))
        out.append(make_quote(provider=rec.get("provider", ""), gpu=rec.get("gpu", ""), mode=rec.get("mode", ""),
                              term=rec.get("term") or None, price=rec.get("price", ""), per=rec.get("per", ""),
                              currency=rec.get("currency", ""), when=rec.get("date", ""), note=rec.get("note", ""),
                              file=str(p), line=lines[n] if n < len(lines) else None))
    return out


def read_quotes_catalog(path: str | Path) -> list[Quote]:
    """Quotes from a catalog file (`gpuplan catalog pull` writes one; the bundled offers.yaml format): each
    offer with a price and an `as_of` is a quote of that day (a month `2026-07` is its first day); a VM
    stays a `vm` quote and a price range stays a range. Every offer is checked first; a bad one stores
    nothing."""
    import yaml

    p = Path(path)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GpuplanError(f"cannot read: {exc.strerror}", file=p, hint="give a catalog file.") from None
    except yaml.YAMLError as exc:
        raise GpuplanError(f"not valid YAML: {exc}", file=p, hint="give a catalog file.") from None
    offers = data.get("offers") if isinstance(data, dict) else None
    if not isinstance(offers, list):
        raise GpuplanError("a catalog file has an `offers:` list", file=p, field="offers",
                           hint="`gpuplan catalog pull` writes one.")
    out = []
    for i, o in enumerate(offers):
        if not isinstance(o, dict) or "price" not in o:
            continue  # an offer without its own price (or a `use:` reference) is not a quote
        where = f"offers[{i}]."
        price = o.get("price") or {}
        amount = price.get("amount") if isinstance(price, dict) else None
        if isinstance(amount, list) and len(amount) == 2:
            amount = (amount[0], amount[1])
        gpn = o.get("gpus_per_node", 8)
        if not isinstance(gpn, int) or isinstance(gpn, bool) or not 1 <= gpn <= 64:
            raise GpuplanError(f"gpus_per_node: expected a whole number from 1 to 64, got {gpn!r}", file=str(p),
                               field=f"{where}gpus_per_node", hint="cards per server, e.g. 8.")
        mode = str(o.get("mode", ""))
        as_of = str(o.get("as_of", ""))
        day = as_of[:10] if len(as_of) >= 10 else (f"{as_of[:7]}-01" if re.fullmatch(r"\d{4}-\d{2}", as_of) else as_of)
        provider = str(o.get("provider") or str(o.get("source", "")).split(" ")[0] or o.get("id", ""))
        per = str(price.get("per", "")) if isinstance(price, dict) else ""
        note = str(o.get("id", ""))
        out.append(make_quote(
            provider=provider, gpu=str(o.get("gpu", "")), mode=mode, term=None,
            price=amount if amount is not None else "", per=per, currency=str(o.get("currency", "")), when=day,
            note=note, gpus_per_node=gpn, where=where, file=str(p)))
    return out
