"""The ``openai`` embedder: any ``/v1/embeddings`` server (OpenAI, Ollama, vLLM, TEI, llama.cpp …).

Through the official SDK, given an ``httpx.AsyncClient`` we build, so deployments can proxy it and
tests mock it with respx. Settings: ``CHATMEM_EMBEDDING_BASE_URL`` / ``CHATMEM_EMBEDDING_API_KEY``
(falling back to the chat provider's ``openai_base_url`` / ``openai_api_key``, so one Ollama or
vLLM server can serve both), ``CHATMEM_EMBEDDING_MODEL`` (default ``text-embedding-3-small``) and
``CHATMEM_EMBEDDING_DIMENSIONS`` (sent as ``dimensions`` when set; text-embedding-3 models shorten
their vectors, other servers may refuse it). Vectors are asked for as plain floats
(``encoding_format="float"``): every compatible server supports that, not all support base64.
Retries belong to the job queue (backoff across attempts), so the SDK itself does not retry.
"""

from __future__ import annotations

import httpx
import openai

from .base import EmbedderError

DEFAULT_MODEL = "text-embedding-3-small"
#: Statuses that a retry cannot fix: bad request (input too long, unknown parameter), bad key,
#: no access, unknown model.
PERMANENT_STATUS = {400, 401, 403, 404, 422}


def base_url(settings) -> str:
    return getattr(settings, "embedding_base_url", "") or getattr(settings, "openai_base_url", "")


def api_key(settings) -> str:
    return getattr(settings, "embedding_api_key", "") or getattr(settings, "openai_api_key", "")


class OpenAIEmbedder:
    name = "openai"

    def __init__(self, settings=None, *, http_client: httpx.AsyncClient | None = None) -> None:
        self.model = getattr(settings, "embedding_model", "") or DEFAULT_MODEL
        self.dimensions = int(getattr(settings, "embedding_dimensions", 0) or 0)
        self._base_url = base_url(settings) or None
        self._api_key = api_key(settings)
        self._http = http_client
        self._client: openai.AsyncOpenAI | None = None

    @staticmethod
    def check(settings) -> None:
        """At start: the default OpenAI endpoint needs a key (a self-hosted one may not)."""
        if not base_url(settings) and not api_key(settings):
            raise ValueError(
                "CHATMEM_EMBEDDER=openai needs CHATMEM_EMBEDDING_API_KEY (or CHATMEM_OPENAI_API_KEY) "
                "for api.openai.com, or CHATMEM_EMBEDDING_BASE_URL for a self-hosted server"
            )

    def _sdk(self) -> openai.AsyncOpenAI:
        if self._client is None:
            if self._http is None:
                self._http = httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=10.0))
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key or "not-needed",
                base_url=self._base_url,
                # openai>=3 is typed against its httpx fork; the httpx client works at run time
                http_client=self._http,  # type: ignore[arg-type]
                max_retries=0,
            )
        return self._client

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        params: dict = dict(model=self.model, input=texts, encoding_format="float")
        if self.dimensions:
            params["dimensions"] = self.dimensions
        try:
            resp = await self._sdk().embeddings.create(**params)
        except openai.APIStatusError as e:
            raise EmbedderError(
                f"openai embeddings: HTTP {e.status_code}: {e.message}",
                permanent=e.status_code in PERMANENT_STATUS,
            ) from e
        except (openai.APIError, httpx.HTTPError) as e:
            raise EmbedderError(f"openai embeddings: {e}") from e
        data = sorted(resp.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise EmbedderError(
                f"openai embeddings: asked for {len(texts)} vectors, got {len(data)}",
                permanent=True,
            )
        vectors = [list(d.embedding) for d in data]
        if self.dimensions and any(len(v) != self.dimensions for v in vectors):
            raise EmbedderError(
                f"openai embeddings: the server ignored dimensions={self.dimensions} "
                f"(got {len(vectors[0])})",
                permanent=True,
            )
        return vectors

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
        if self._http is not None:
            await self._http.aclose()
            self._http = None
