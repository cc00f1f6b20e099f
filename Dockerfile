# Wyoming HayaKoe TTS server. Multi-arch (linux/amd64, linux/arm64): every dependency ships
# wheels for both, so nothing here depends on the architecture.
#   docker buildx build --platform linux/amd64,linux/arm64 -t wyoming-hayakoe .
#   docker run -p 10200:10200 -v hayakoe-data:/data wyoming-hayakoe --voice jvnv-F1-jp
# Zeroconf discovery (--zeroconf) needs the host's network: add --network host.
# The server runs as uid/gid 10200: a bind-mounted /data must be writable by it.
FROM python:3.11-slim

# A voice to bake into the image with the shared BERT (e.g. jvnv-F1-jp); empty: none.
# Baked voices live in /opt/hayakoe, a second data dir, so a volume on /data does not hide them.
ARG PRELOAD_VOICE=""

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /usr/src/wyoming-hayakoe
COPY pyproject.toml README.md LICENSE ./
COPY wyoming_hayakoe ./wyoming_hayakoe
RUN pip install --no-cache-dir . \
    && groupadd --system --gid 10200 hayakoe \
    && useradd --system --uid 10200 --gid 10200 --create-home --home-dir /home/hayakoe hayakoe \
    && mkdir -p /data /opt/hayakoe \
    && chown hayakoe:hayakoe /data

# Hugging Face mirror for the pre-download (empty: huggingface.co).
ARG HF_ENDPOINT=""
RUN if [ -n "${PRELOAD_VOICE}" ]; then \
        python -c 'import sys; from pathlib import Path; from wyoming_hayakoe.voices.store import VoiceStore; store = VoiceStore([Path("/opt/hayakoe")]); store.ensure_bert(); store.ensure_voice(sys.argv[1])' "${PRELOAD_VOICE}"; \
    fi

COPY docker_run.sh /usr/local/bin/docker_run.sh

USER 10200:10200
WORKDIR /data
VOLUME ["/data"]
EXPOSE 10200

# Answers as soon as the server listens; the first start may still be downloading a voice.
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "-m", "wyoming_hayakoe.commands.health_check", "--uri", "tcp://127.0.0.1:10200", "--timeout", "5"]

ENTRYPOINT ["/bin/sh", "/usr/local/bin/docker_run.sh"]
