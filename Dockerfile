# Folio in a slim image: `docker build -t folio . && docker run --env-file .env -p 3000:3000 folio`
# With a Redis beside it (the production-like start): `docker compose up -d` (compose.yaml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    FOLIO_DATA_DIR=/data \
    FOLIO_CHANNELS_FILE=/config/channels.yaml \
    PORT=3000 \
    FOLIO_METRICS_PORT=9090

# LibreOffice (Office files -> PDF) and OCRmyPDF + Tesseract (scans), README "Indexing". A slim image without them:
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
COPY pyproject.toml README.md manifest.yaml ./
COPY bot ./bot
RUN pip install . \
    && useradd --create-home --uid 10001 folio \
    && mkdir -p /data /config \
    && chown folio /data
COPY channels.example.yaml /config/channels.yaml

USER folio
VOLUME ["/data"]
# 3000: Slack events over HTTP and signed document links; 9090: /metrics, /healthz, /readyz in either mode.
EXPOSE 3000 9090
# Ready = Redis answers and the index opens (GET /readyz; 503 otherwise). `folio doctor` says what is wrong.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; port = os.environ.get('FOLIO_METRICS_PORT') or os.environ.get('PORT') or '3000'; urllib.request.urlopen(f'http://127.0.0.1:{port}/readyz', timeout=4)"]
# Mount your own channel policy over /config/channels.yaml; set REDIS_URL to share state between replicas.
CMD ["folio", "serve"]
