# chatmem: the API, the web app and the job worker in one image (README "Operations").
#
#   docker build -t chatmem .
#   docker run -p 8000:8000 -v chatmem-data:/data chatmem            # SQLite in the volume
#   docker compose up                                                # PostgreSQL, 2 API, 1 worker
#
# Stage 1 builds the web app (frontend/ → src/chatmem/web/dist) from its lockfile; stage 2 builds
# the wheel (which ships that bundle) and installs it with its locked dependencies into a venv;
# the final stage is that venv on a slim Python, run as an unprivileged user.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS web
WORKDIR /src/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY frontend/ ./
RUN npm run build

FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
RUN python -m venv /opt/chatmem
COPY requirements.txt ./
RUN /opt/chatmem/bin/pip install -r requirements.txt
COPY pyproject.toml hatch_build.py README.md ./
COPY src/ src/
COPY --from=web /src/src/chatmem/web/dist/ src/chatmem/web/dist/
RUN /opt/chatmem/bin/pip install build \
 && /opt/chatmem/bin/python -m build --wheel --outdir /wheels . \
 && /opt/chatmem/bin/pip install --no-deps /wheels/*.whl \
 && /opt/chatmem/bin/pip uninstall -y build

FROM ${PYTHON_IMAGE}
# postgresql-client: pg_dump/pg_restore for `chatmem backup` / `restore` on PostgreSQL
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-client \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin chatmem \
 && mkdir -p /data && chown chatmem:chatmem /data
COPY --from=build /opt/chatmem /opt/chatmem
ENV PATH=/opt/chatmem/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    CHATMEM_HOST=0.0.0.0 \
    CHATMEM_PORT=8000 \
    CHATMEM_DATABASE_URL=sqlite:////data/chatmem.db \
    CHATMEM_TRANSFER_DIR=/data/transfers \
    CHATMEM_LOG_FORMAT=json
USER chatmem
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["python", "-c", "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/api/health', timeout=2).status != 200)"]
ENTRYPOINT ["chatmem"]
CMD ["serve"]
