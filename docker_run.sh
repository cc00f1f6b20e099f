#!/bin/sh
# Container entry point: listen on every interface, voices in the /data volume (downloads go
# there) and in /opt/hayakoe (voices baked in with PRELOAD_VOICE). Arguments given to
# `docker run` are added at the end and win; WYOMING_HAYAKOE_ARGS works as well.
set -e
exec python -m wyoming_hayakoe \
    --uri 'tcp://0.0.0.0:10200' \
    --data-dir /data \
    --data-dir /opt/hayakoe \
    "$@"
