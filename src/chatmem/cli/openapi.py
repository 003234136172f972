"""Writes the app's OpenAPI document for the front-end's typed client (``make web-api``).

The web app's API types (``frontend/src/api/schema.d.ts``) are generated from this document; a
test compares the checked-in copy (``frontend/openapi.json``) with the live app, so a route whose
contract changed without regenerating the client fails the suite instead of the browser.

    python -m chatmem.cli.openapi frontend/openapi.json

(It builds the app, so it lives with the CLI: only the composition root and the CLI import it.)
"""

from __future__ import annotations

import json
import sys

from ..app import create_app
from ..config import get_settings


def document() -> dict:
    # the document depends on the routes only; the database is never opened
    return create_app(get_settings(database_url="sqlite:///:memory:", models=[])).openapi()


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def main(argv: list[str]) -> None:
    text = dumps(document())
    if len(argv) > 1:
        with open(argv[1], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main(sys.argv)
