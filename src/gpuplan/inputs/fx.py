"""Exchange rates a scenario gives (`fx:`), and the conversion of catalog offers priced in another currency.

    currency: CNY
    fx: {USD: 7.1, as_of: 2026-11-01}    # 1 USD = 7.1 CNY

A catalog offer in USD used in this scenario (`- use: aws-p5-h100`) is converted with the rate, and the
offer says so (its source, and the notes `--explain` and the report list). Without a rate for its
currency the offer is an error naming the currency: gpuplan never converts silently. A `price:` given
in the scenario's offer is already in the scenario's currency and is not converted.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from gpuplan.errors import ScenarioError
from gpuplan.limits import MAX_QUANTITY

ErrorAt = Callable[..., ScenarioError]
_ISO = re.compile(r"^[A-Z]{3}$")


@dataclass(frozen=True)
class Fx:
    """Rates into the scenario's currency: `rates["USD"]` units of `currency` per 1 USD."""

    currency: str
    rates: dict[str, float]
    as_of: str | None = None

    def describe(self, code: str) -> str:
        when = f", as of {self.as_of}" if self.as_of else ""
        return f"{self.rates[code]:g} {self.currency}/{code} (scenario fx{when})"


def read_fx(raw: Any, currency: str, error: ErrorAt) -> Fx | None:
    """The scenario's `fx:` mapping, checked; `error(loc, message, hint)` builds the located error."""
    if raw is None:
        return None
    hint = f"fx maps currency codes to {currency} per unit, plus an optional as_of: {{USD: 7.1, as_of: 2026-11-01}}."
    if not isinstance(raw, dict):
        raise error(("fx",), "fx must be a mapping", hint)
    rates: dict[str, float] = {}
    as_of: str | None = None
    for key, value in raw.items():
        if key == "as_of":
            as_of = value.isoformat() if isinstance(value, (date, datetime)) else str(value)
            continue
        if not isinstance(key, str) or not _ISO.match(key):
            raise error(("fx", str(key)), f"`{key}` is not a currency code", hint)
        if key == currency:
            raise error(("fx", key), f"{key} is the scenario's own currency", "fx gives rates for other currencies.")
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or not 1 / MAX_QUANTITY <= value <= MAX_QUANTITY:
            raise error(("fx", key), f"a rate must be a number > 0 (from 1e-12 to 1e12), got {value!r}", hint)
        rates[key] = float(value)
    return Fx(currency, rates, as_of)


def convert_offer(base: dict[str, Any], offer_id: str, from_currency: str, to: str, fx: Fx | None,
                  loc: tuple[Any, ...], error: ErrorAt) -> str:
    """Convert a catalog offer's price (in place) into the scenario's currency `to`; the note saying how."""
    if fx is None or from_currency not in fx.rates:
        raise error(loc, f"catalog offer `{offer_id}` is priced in {from_currency} and the scenario gives no "
                         f"{from_currency} rate",
                    f"add `fx: {{{from_currency}: <{to} per {from_currency}>, as_of: <date>}}` to the scenario, "
                    f"or give `price:` in {to} in this offer.")
    rate = fx.rates[from_currency]
    price = dict(base.get("price") or {})
    amount = price.get("amount")
    if isinstance(amount, (list, tuple)):
        price["amount"] = [round(float(a) * rate, 6) for a in amount]
    elif isinstance(amount, (int, float)):
        price["amount"] = round(float(amount) * rate, 6)
    base["price"] = price
    note = f"price: {amount} {from_currency}/{price.get('per')} converted at {fx.describe(from_currency)}"
    base["source"] = f"{base.get('source', '')}; {note}".lstrip("; ")
    return note


__all__ = ["Fx", "convert_offer", "read_fx"]
