"""The OpenAI-compatible door: ``/v1/chat/completions`` and ``/v1/models`` as chatmem turns.

Any OpenAI SDK or client (Open WebUI, LibreChat …) pointed at ``<chatmem>/v1`` with a chatmem API
key gets chatmem with memory, not a proxy: each request continues a chatmem conversation (named
by ``X-Chatmem-Conversation`` or ``metadata.chatmem_conversation``, else found by the resent
history), the new turn runs through the native generation path, and memories and recall are
assembled into the prompt.
"""
