"""The Principal: who is calling. Every store function takes one and scopes its queries by it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Principal:
    id: str
    email: str
    name: str = ""
    role: str = "user"
    settings: dict = field(default_factory=dict)
    via: str = "key"  # key | session
    csrf_token: str = ""

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    @property
    def memory_enabled(self) -> bool:
        return bool(self.settings.get("memory_enabled", True))
