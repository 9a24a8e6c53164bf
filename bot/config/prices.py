"""The price table of `folio usage`: dollars per million tokens, per model, from FOLIO_PRICE_PER_MTOK_IN / _OUT.

    FOLIO_PRICE_PER_MTOK_IN=0.25                      every model
    FOLIO_PRICE_PER_MTOK_IN=gpt-5-mini=0.25,gpt-5=1.25   per model (a model not listed has no price)

Blank: no price, so `folio usage` shows no cost column. Cached input tokens are priced as input unless
FOLIO_PRICE_PER_MTOK_CACHED says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field

ANY_MODEL = "*"


def parse_prices(text: str) -> dict[str, float]:
    """`0.25` or `model=0.25,model=1.25` as {model: dollars}; ValueError saying what is wrong."""
    prices: dict[str, float] = {}
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        model, _, price = part.rpartition("=")
        try:
            value = float(price)
        except ValueError:
            raise ValueError(f"{part!r} is not a price: write 0.25, or model=0.25,model=1.25") from None
        if value < 0:
            raise ValueError(f"{part!r}: a price cannot be negative")
        prices[model.strip() or ANY_MODEL] = value
    return prices


@dataclass(frozen=True)
class PriceTable:
    """Dollars per million tokens by model; `cost` is None where a price is missing (no column rather than a guess)."""

    input: dict[str, float] = field(default_factory=dict)
    output: dict[str, float] = field(default_factory=dict)
    cached: dict[str, float] = field(default_factory=dict)

    @property
    def priced(self) -> bool:
        return bool(self.input or self.output)

    def cost(self, model: str, *, input_tokens: int, cached_tokens: int, output_tokens: int) -> float | None:
        """Dollars for these tokens of `model` (cached tokens are part of input_tokens)."""
        price_in, price_out = _price(self.input, model), _price(self.output, model)
        if price_in is None or price_out is None:
            return None
        price_cached = _price(self.cached, model)
        price_cached = price_in if price_cached is None else price_cached
        fresh = input_tokens - cached_tokens
        return (fresh * price_in + cached_tokens * price_cached + output_tokens * price_out) / 1_000_000


def _price(table: dict[str, float], model: str) -> float | None:
    return table.get(model, table.get(ANY_MODEL))
