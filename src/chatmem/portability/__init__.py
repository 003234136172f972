"""Portability: bring history in from other chat products and take everything out.

- ``formats/`` (pure): one parser per export format (ChatGPT, Claude, Open WebUI, LibreChat and
  chatmem's own), each turning one source conversation into a ``model.SourceConversation``;
- ``tree.py`` (pure): the shared repair of a source tree (duplicates, cycles, missing parents,
  hidden nodes, tool folding) into a plan of rows to insert;
- ``source.py``: opening an upload (zip or JSON, non-UTF-8 bytes repaired) and streaming its
  conversations one at a time (``ijson``), so a 1 GB export never sits in memory;
- ``importer.py`` / ``exporter.py`` / ``account.py``: the use-cases (import job, exports and the
  "all my data" archive job, account deletion), SQL in ``store.py``;
- ``render.py`` (pure): chatmem JSON, Markdown and printable HTML of a conversation.
"""
