# shellcheck shell=bash
# podman without Docker Hub, for script/docker-check (sourced after common.sh).
#
# Podman's configuration and image store live under $DOCKER_DIR (default .cache/docker-check),
# chosen through CONTAINERS_CONF / CONTAINERS_STORAGE_CONF, so the host's /etc/containers and
# /var/lib/containers are left alone. `rm -rf .cache/docker-check` (after `podman rm -af` with
# the same environment) forgets every image.

DOCKER_DIR=${DOCKER_DIR:-$CACHE_ROOT/docker-check}
BASE_IMAGE=docker.io/library/python:3.11-slim

podman_setup() {
    # runc: crun 1.8 of bookworm refuses a cgroup v1 "hybrid" host. netavark: bridge network
    # for -p 127.0.0.1:PORT:PORT (it runs iptables). mmdebstrap, qemu: the base image stand-ins
    # (arm64 emulated).
    apt_install podman runc netavark aardvark-dns iptables slirp4netns uidmap fuse-overlayfs catatonit \
        mmdebstrap arch-test qemu-user-static binfmt-support
    mkdir -p "$DOCKER_DIR/storage"
    # Default rlimits (nofile 1048576) fail with "setrlimit: Operation not permitted" where
    # the caller lacks CAP_SYS_RESOURCE; no systemd here, so cgroupfs and a file event log.
    cat >"$DOCKER_DIR/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=4096:4096"]
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
[network]
network_backend = "netavark"
EOF
    cat >"$DOCKER_DIR/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$DOCKER_DIR/storage"
runroot = "/run/containers/hayakoe-docker-check"
EOF
    export CONTAINERS_CONF=$DOCKER_DIR/containers.conf
    export CONTAINERS_STORAGE_CONF=$DOCKER_DIR/storage.conf
    podman --version
}

# The stand-in's customize hook (runs on the host with the rootfs path as $1): make Debian's
# python3 look like the official image's (python/pip on PATH in /usr/local/bin, pip allowed to
# install system-wide) and trust this host's CAs, in case PyPI is reached through a TLS proxy.
_standin_hook() {
    cat <<'EOF'
#!/bin/sh
set -e
rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED
for name in python python3; do ln -sf /usr/bin/python3 "$1/usr/local/bin/$name"; done
for name in pip pip3; do ln -sf /usr/bin/pip3 "$1/usr/local/bin/$name"; done
cp -L /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/certs/ca-certificates.crt"
rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/archives/*.deb
EOF
}

# standin_image ARCH: a Debian bookworm image with python3 3.11 standing in for
# python:3.11-slim (Docker Hub does not resolve here). The tarball is cached.
standin_image() {
    local arch=$1 tag=localhost/standin-python:3.11-slim-$1 tar=$DOCKER_DIR/standin-$1.tar
    if podman image exists "$tag"; then
        echo "  reusing $tag"
        return
    fi
    if [[ ! -s $tar ]]; then
        [[ $arch == amd64 ]] || enable_binfmt_aarch64
        _standin_hook >"$DOCKER_DIR/standin-hook.sh"
        chmod +x "$DOCKER_DIR/standin-hook.sh"
        local mirror
        mirror=$(debian_mirror) || exit 1
        if ! mmdebstrap --architectures="$arch" --variant=apt --format=tar \
            --include=python3,python3-pip,python3-venv,ca-certificates \
            --customize-hook="$DOCKER_DIR/standin-hook.sh \"\$1\"" \
            "$DEBIAN_SUITE" "$tar.part" "$mirror" >"$DOCKER_DIR/mmdebstrap-$arch.log" 2>&1; then
            tail -n 20 "$DOCKER_DIR/mmdebstrap-$arch.log" >&2
            die "mmdebstrap $arch failed (log: $DOCKER_DIR/mmdebstrap-$arch.log)"
        fi
        mv "$tar.part" "$tar"
    fi
    podman import --quiet --arch "$arch" \
        --change 'CMD ["python3"]' --change 'ENV LANG=C.UTF-8' \
        --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
        --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
        "$tar" "$tag" >/dev/null
    echo "  built $tag"
}

# A manifest list under the official name, so `FROM python:3.11-slim` and
# `podman build --platform linux/ARCH --pull=never` pick the local stand-in.
standin_manifest() {
    local arch
    if podman manifest exists "$BASE_IMAGE" 2>/dev/null; then
        podman manifest rm "$BASE_IMAGE" >/dev/null
    fi
    podman manifest create "$BASE_IMAGE" >/dev/null
    for arch in amd64 arm64; do
        if podman image exists "localhost/standin-python:3.11-slim-$arch"; then
            podman manifest add "$BASE_IMAGE" \
                "containers-storage:localhost/standin-python:3.11-slim-$arch" >/dev/null
        fi
    done
}

# ha_base_standin ARCH NAME: a Debian bookworm image (CA certificates, nothing else) standing in
# for Home Assistant's add-on base image NAME (ghcr.io is not reachable here), tagged as NAME
# so that `podman build --pull=never --build-arg BUILD_FROM=NAME` finds it. The real image
# adds bashio, s6-overlay, curl and jq, none of which the add-on uses.
ha_base_standin() {
    local arch=$1 name=$2 tar=$DOCKER_DIR/ha-base-$1.tar
    if podman image exists "$name"; then
        echo "  reusing $name"
        return
    fi
    if [[ ! -s $tar ]]; then
        [[ $arch == amd64 ]] || enable_binfmt_aarch64
        local mirror
        mirror=$(debian_mirror) || exit 1
        # This host's CAs, in case apt or PyPI is reached through a TLS proxy. The hooks' $1
        # is the rootfs, expanded by the shell mmdebstrap runs them with.
        # shellcheck disable=SC2016
        if ! mmdebstrap --architectures="$arch" --variant=apt --format=tar --include=ca-certificates \
            --customize-hook='cp -L /etc/ssl/certs/ca-certificates.crt "$1/etc/ssl/certs/"' \
            --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/archives/*.deb' \
            "$DEBIAN_SUITE" "$tar.part" "$mirror" >"$DOCKER_DIR/mmdebstrap-ha-$arch.log" 2>&1; then
            tail -n 20 "$DOCKER_DIR/mmdebstrap-ha-$arch.log" >&2
            die "mmdebstrap $arch failed (log: $DOCKER_DIR/mmdebstrap-ha-$arch.log)"
        fi
        mv "$tar.part" "$tar"
    fi
    podman import --quiet --arch "$arch" --change 'ENV LANG=C.UTF-8' \
        --change 'ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt' \
        --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
        "$tar" "$name" >/dev/null
    echo "  built $name"
}
