"""Secret handling: argon2 password hashes and SHA-256 digests of API keys and session tokens.

API keys and session tokens are high-entropy random strings, so a fast digest is the right storage
(a slow KDF would only slow every request); passwords are low-entropy, so they get argon2.
"""

from __future__ import annotations

import functools
import hashlib
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerifyMismatchError

_hasher = PasswordHasher()

KEY_PREFIX = "cm_"


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(stored: str, password: str) -> bool:
    if not stored:
        return False
    try:
        return _hasher.verify(stored, password)
    except (VerifyMismatchError, InvalidHashError):
        return False


@functools.lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher.hash("chatmem: no such user")


def burn_password_check(password: str) -> None:
    """Spend the time of a real check, so a login for an unknown email is not visibly faster."""
    verify_password(_dummy_hash(), password)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_api_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def new_session_token() -> str:
    return secrets.token_urlsafe(32)
