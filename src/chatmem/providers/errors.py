"""One error vocabulary for every provider (pure): what an answer's ``error`` code means.

Built-in and third-party providers raise ``ProviderError(message, code)`` with one of ``CODES``;
the turn stores the code in the message's error block and ``error`` event, and any other code
(or a provider that crashed with a plain exception) becomes ``upstream_error`` /
``provider_crashed`` — a client can switch on the code whichever model answered. Messages are
short and written here, optionally followed by the upstream's own one-line explanation (an
HTTP error body's ``message``); never a Python exception's text (``JSONDecodeError: Expecting
value: line 1 column 5 …`` tells a user nothing and leaks internals).

The README's "Error codes" table lists these with the turn-level codes of generation/.
"""

from __future__ import annotations

CODES: dict[str, str] = {
    "rate_limited": "the model provider is rate limiting requests; try again shortly",
    "upstream_auth": "the model provider refused the configured credentials",
    "upstream_overloaded": "the model provider is overloaded; try again shortly",
    "upstream_unreachable": "the model provider could not be reached",
    "upstream_timeout": "the model provider did not answer in time",
    "upstream_bad_request": "the model provider rejected the request",
    "upstream_bad_response": "the model provider sent a response that could not be read",
    "upstream_truncated": "the answer stopped before it finished: the model's stream ended "
    "without its end marker (the text received so far is kept)",
    "upstream_error": "the model provider failed",
}
MAX_DETAIL = 200


def code_for_status(status: int | None) -> str:
    """The code of an upstream HTTP error status."""
    if status == 429:
        return "rate_limited"
    if status in (401, 403):
        return "upstream_auth"
    if status in (503, 529):
        return "upstream_overloaded"
    if status in (408, 504):
        return "upstream_timeout"
    if status is not None and 400 <= status < 500:
        return "upstream_bad_request"
    return "upstream_error"


def known(code: str) -> str:
    return code if code in CODES else "upstream_error"


def message(provider: str, code: str, detail: str = "") -> str:
    """``"<provider>: <what the code means>[ (<upstream's detail>)]"``, one short line."""
    text = f"{provider}: {CODES[known(code)]}"
    detail = " ".join(str(detail or "").split())[:MAX_DETAIL]
    return f"{text} ({detail})" if detail else text
