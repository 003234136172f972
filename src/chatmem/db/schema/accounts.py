"""Accounts: users, their API keys and web sessions, workspaces with members and invitations,
and the knowledge bases projects may point at (tables on the one ``metadata`` of ``_base``)."""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Index,
    PrimaryKeyConstraint,
    Table,
    Text,
)

from ._base import _fk, _flag, _json, _ms, _txt, metadata

# ── accounts ────────────────────────────────────────────────────────────────────────────────────

users = Table(
    "users",
    metadata,
    Column("id", Text, primary_key=True),
    Column("email", Text, nullable=False, unique=True),  # stored lower-cased
    _txt("name"),
    _txt("password_hash"),  # argon2; '' = no password login
    _txt("role", "user"),  # user | admin
    _json("settings", "{}"),  # {"memory_enabled": bool, ...}
    _flag("disabled"),
    _ms("created_at"),
    _ms("updated_at"),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    _txt("name"),
    Column("prefix", Text, nullable=False),  # first characters, shown in lists
    Column(
        "key_hash", Text, nullable=False, unique=True
    ),  # sha256 of the key; the key is shown once
    _ms("created_at"),
    _ms("last_used_at", nullable=True),
    _ms("revoked_at", nullable=True),
    Index("ix_api_keys_user", "user_id"),
)

web_sessions = Table(
    "web_sessions",
    metadata,
    Column("id", Text, primary_key=True),  # sha256 of the cookie value
    _fk("user_id", "users.id", "CASCADE"),
    Column("csrf_token", Text, nullable=False),
    _ms("created_at"),
    _ms("expires_at"),
    Index("ix_web_sessions_user", "user_id"),
    Index("ix_web_sessions_expires", "expires_at"),
)

workspaces = Table(
    "workspaces",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    _fk("owner_id", "users.id", "CASCADE"),
    _ms("created_at"),
    _ms("updated_at"),
)

workspace_members = Table(
    "workspace_members",
    metadata,
    _fk("workspace_id", "workspaces.id", "CASCADE"),
    _fk("user_id", "users.id", "CASCADE"),
    _txt("role", "member"),  # owner | admin | member
    _ms("created_at"),
    PrimaryKeyConstraint("workspace_id", "user_id"),
    Index("ix_workspace_members_user", "user_id"),
)

# + chatmem: invitations to a workspace — bound to an email (the invitee accepts from their list)
# or an open one-time link (whoever holds the token joins once). Only the token's SHA-256 is kept.
workspace_invites = Table(
    "workspace_invites",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("workspace_id", "workspaces.id", "CASCADE"),
    _txt("email"),  # lower-cased; '' = a link invite
    _txt("role", "member"),  # admin | member
    Column("token_hash", Text, nullable=False, unique=True),
    _fk("created_by", "users.id", "CASCADE"),
    _ms("created_at"),
    _ms("expires_at"),
    Index("ix_workspace_invites_workspace", "workspace_id"),
    Index("ix_workspace_invites_email", "email"),
)

knowledge_bases = Table(
    "knowledge_bases",
    metadata,
    Column("id", Text, primary_key=True),
    _fk("user_id", "users.id", "CASCADE"),
    _txt("workspace_id"),
    Column("name", Text, nullable=False),
    _txt("description"),
    _ms("created_at"),
    _ms("updated_at"),
    Index("ix_knowledge_bases_user", "user_id"),
)
