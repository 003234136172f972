"""A job queue in the database (``jobs`` table), so replicas need no broker."""
