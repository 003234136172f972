"""Login throttling: per client IP and per account, so neither one address nor a botnet spread
over many can guess passwords quickly — and so a flood of logins cannot monopolise the CPU
(each attempt costs an argon2 hash, which is why the account check runs *before* hashing).

- every login attempt counts against its IP (``login_rate_per_ip``);
- every failed attempt counts against the account (``login_failures_per_account``); a success
  clears the account's count;
- the one-time login link counts against its IP (``login_link_rate_per_ip``).

Beyond a limit the answer is 429 ``rate_limited`` with ``Retry-After``. The per-account limit
means an attacker can keep one account's password login throttled; API keys and a fresh login
link (``chatmem`` CLI) keep working, which is the trade-off every lockout makes (README, threat
model). Counting is per process; see edge/ratelimit.py for what that means with replicas.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..edge.ratelimit import Throttle
from ..errors import TooManyRequests


@dataclass
class LoginGuard:
    per_ip: Throttle
    per_account: Throttle
    link_per_ip: Throttle

    @classmethod
    def from_settings(cls, s) -> LoginGuard:
        return cls(
            Throttle("login-ip", s.login_rate_per_ip),
            Throttle("login-account", s.login_failures_per_account),
            Throttle("login-link-ip", s.login_link_rate_per_ip),
        )

    def admit_login(self, ip: str, email: str) -> None:
        wait = self.per_account.check(email) or self.per_ip.hit(ip)
        if wait:
            raise _limited("too many login attempts; try again later", wait)

    def failed(self, email: str) -> None:
        self.per_account.hit(email)

    def succeeded(self, email: str) -> None:
        self.per_account.clear(email)

    def admit_link(self, ip: str) -> None:
        wait = self.link_per_ip.hit(ip)
        if wait:
            raise _limited("too many login-link attempts; try again later", wait)


def _limited(message: str, wait: int) -> TooManyRequests:
    return TooManyRequests(message, code="rate_limited", retry_after_s=wait)
