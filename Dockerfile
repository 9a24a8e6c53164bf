# Folio in a slim image: `docker build -t folio . && docker run --env-file .env -p 3000:3000 folio`
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    FOLIO_DATA_DIR=/data \
    FOLIO_CHANNELS_FILE=/config/channels.yaml \
    PORT=3000

WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot ./bot
RUN pip install . \
    && useradd --create-home --uid 10001 folio \
    && mkdir -p /data /config \
    && chown folio /data
COPY channels.example.yaml /config/channels.yaml

USER folio
VOLUME ["/data"]
EXPOSE 3000
# Mount your own channel policy over /config/channels.yaml; set REDIS_URL to share state between replicas.
CMD ["folio", "serve"]
