"""Usage accounting for one turn: token counts, cost (admin-only) and credits (user-visible).

Pure: no database, no framework. Prices in the catalogue are USD per million tokens; credits are
``cost × credits_per_usd × the model's credits_multiplier``. When a provider reports no usage (a
stop before its final chunk, a failure) the counts are estimated so nothing is billed as free.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..providers.base import ModelInfo, Usage, estimate_tokens


@dataclass(frozen=True)
class Bill:
    input_tokens: int
    context_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost: float
    credits: float

    def usage(self) -> dict:
        return {
            "input_tokens": self.input_tokens,
            "context_tokens": self.context_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


def bill(
    model: ModelInfo,
    usage: Usage | None,
    *,
    context_tokens: int,
    output_text: str,
    credits_per_usd: float,
) -> Bill:
    if usage is None:
        usage = Usage(input_tokens=context_tokens, output_tokens=estimate_tokens(output_text))
    cost = (
        usage.input_tokens * model.price_input
        + usage.output_tokens * model.price_output
        + usage.cache_read_tokens * model.price_cache_read
        + usage.cache_write_tokens * model.price_cache_write
    ) / 1_000_000
    credits = cost * credits_per_usd * model.credits_multiplier
    ctx = context_tokens or (
        usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    )
    return Bill(
        input_tokens=usage.input_tokens,
        context_tokens=ctx,
        output_tokens=usage.output_tokens,
        cache_read_tokens=usage.cache_read_tokens,
        cache_write_tokens=usage.cache_write_tokens,
        cost=round(cost, 8),
        credits=round(credits, 6),
    )
