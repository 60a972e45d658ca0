"""Kubernetes resource quantities (`resource.Quantity`): validation and simple arithmetic.

The grammar is the one in k8s.io/apimachinery/pkg/api/resource:

    <quantity> ::= <signedNumber><suffix>
    <suffix>   ::= Ki | Mi | Gi | Ti | Pi | Ei | m | "" | k | M | G | T | P | E | <decimalExponent>

The CRDs carry it as a regex; the exporter checks every quantity it writes with the same regex
(a CEL-side rule jsonschema alone would accept wrongly typed values for) and does exact arithmetic
in `Decimal` so that `4 x 128Gi` is written `512Gi`, never a float.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

# Same expression as the `pattern` in the Kueue and Volcano CRDs.
QUANTITY_RE = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)

BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal(10**3),
    "M": Decimal(10**6),
    "G": Decimal(10**9),
    "T": Decimal(10**12),
    "P": Decimal(10**15),
    "E": Decimal(10**18),
}
_SPLIT = re.compile(r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(.*)$")


def is_quantity(value: object) -> bool:
    """True for an int (as YAML writes it) or a string matching the Kubernetes quantity grammar."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and QUANTITY_RE.match(value) is not None


def split(text: str) -> tuple[Decimal, str]:
    """`"128Gi"` -> (Decimal(128), "Gi"). Raises ValueError when `text` is not a quantity."""
    if not is_quantity(text):
        raise ValueError(f"{text!r} is not a Kubernetes quantity (e.g. 16, 500m, 128Gi, 1e3)")
    m = _SPLIT.match(str(text))
    assert m is not None  # guaranteed by the regex above
    try:
        return Decimal(m.group(1)), m.group(2)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise ValueError(f"{text!r} is not a Kubernetes quantity") from exc


def to_decimal(text: str | int) -> Decimal:
    """The quantity's value in base units (cores, bytes)."""
    if isinstance(text, int):
        return Decimal(text)
    number, suffix = split(text)
    if suffix in BINARY:
        return number * BINARY[suffix]
    if suffix in DECIMAL:
        return number * DECIMAL[suffix]
    return number * (Decimal(10) ** Decimal(suffix[1:]))  # decimal exponent e3, E-2


def _plain(number: Decimal) -> str:
    text = format(number.normalize(), "f")
    return text


def scale(text: str, factor: int | Decimal) -> str:
    """`text` times `factor`, keeping the suffix when the product is whole in that unit.

    `scale("128Gi", 4) == "512Gi"`, `scale("16", 3) == "48"`, `scale("1.5", 3) == "4500m"`.
    """
    number, suffix = split(text)
    product = number * Decimal(factor)
    if product == 0:
        return "0"
    if suffix and suffix[0] in "eE":
        suffix = ""
        product = to_decimal(text) * Decimal(factor)
    if product == product.to_integral_value():
        return f"{_plain(product)}{suffix}"
    base = to_decimal(text) * Decimal(factor)
    if base == base.to_integral_value():
        return _plain(base)
    milli = base * 1000
    if milli == milli.to_integral_value():
        return f"{_plain(milli)}m"
    return _plain(base)


def mib(text: str) -> int:
    """A memory quantity in whole MiB (rounded down), as Slurm's RealMemory wants it."""
    return int(to_decimal(text) // BINARY["Mi"])
