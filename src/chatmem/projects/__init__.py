"""Projects CRUD."""
