# Folio in a slim image: `docker build -t folio . && docker run --env-file .env -p 3000:3000 folio`
# With a Redis beside it (the production-like start): `docker compose up -d` (compose.yaml); Kubernetes: deploy/helm.
#
# Reproducible: the base image is pinned by digest and every Python package by version and hash (requirements.lock,
# made by `python3 dev.py lock`). To move to a newer base image (Python patch releases, Debian security fixes):
#   docker buildx imagetools inspect python:3.11-slim        # the "Digest:" line of the tag
# put that digest below, build, run the tests, commit. The same for redis in compose.yaml and the Helm chart.
FROM python:3.11-slim@sha256:9c900dea9e8fb7e16277c179b555cc72d29a352dbc33cff48ad5a0412fd5bfc7

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    FOLIO_DATA_DIR=/data \
    FOLIO_CHANNELS_FILE=/config/channels.yaml \
    FOLIO_SOURCES=/config/sources.yaml \
    FOLIO_SAMPLE_CORPUS=false \
    PORT=3000 \
    FOLIO_METRICS_PORT=9090

# LibreOffice (Office files -> PDF) and OCRmyPDF + Tesseract (scans), docs/documents.md. A slim image without them:
# `docker build --build-arg CONVERTERS=0 ...` (Office files and scans are then skipped, naming the package).
ARG CONVERTERS=1
ARG OCR_LANGUAGES="tesseract-ocr-eng"
RUN if [ "$CONVERTERS" = 1 ]; then \
        apt-get update \
        && apt-get install -y --no-install-recommends libreoffice-writer-nogui libreoffice-calc-nogui \
            libreoffice-impress-nogui ocrmypdf tesseract-ocr $OCR_LANGUAGES fonts-dejavu-core \
        && rm -rf /var/lib/apt/lists/*; \
    fi

WORKDIR /app
# The locked dependencies first: their layer is reused until requirements.lock changes.
COPY requirements.lock ./
RUN pip install --require-hashes --no-deps -r requirements.lock
COPY pyproject.toml README.md manifest.yaml ./
COPY bot ./bot
RUN pip install --no-deps --no-build-isolation . \
    && useradd --create-home --uid 10001 folio \
    && mkdir -p /data /config /documents \
    && chown folio /data

# Non-root, and the root filesystem may be mounted read-only (compose: read_only, Helm: readOnlyRootFilesystem):
# Folio writes only to /data (index, embedded Redis, copies of documents) and /tmp (with --workers N).
USER 10001:10001
VOLUME ["/data"]
# 3000: Slack events over HTTP and signed document links; 9090: /metrics, /healthz, /readyz in either mode.
EXPOSE 3000 9090
# Ready = Redis answers and the index opens (GET /readyz; 503 otherwise). `folio doctor` says what is wrong.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; port = os.environ.get('FOLIO_METRICS_PORT') or os.environ.get('PORT') or '3000'; urllib.request.urlopen(f'http://127.0.0.1:{port}/readyz', timeout=4)"]
# Mount your channel policy at /config/channels.yaml: without one `folio serve` refuses to start and says so (no
# sample policy stands in). Documents to index go in /documents (compose's `index` service, the chart's Job).
CMD ["folio", "serve"]
