"""The web UI: static files served from the same origin as the API."""
