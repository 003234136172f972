"""Wire models (Pydantic): what the API accepts and returns, separate from table rows."""
