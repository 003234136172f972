"""Model providers as plugins (entry-point group ``chatmem.providers``): demo, openai, anthropic."""
