"""Agents CRUD."""
