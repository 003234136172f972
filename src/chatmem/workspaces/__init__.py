"""Workspaces: teams sharing projects, conversations and memory (seed 001's ``workspace_id``)."""
