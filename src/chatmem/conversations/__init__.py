"""Conversations whose messages form a tree: append, page the active path, branch, edit, delete, fork."""
