# shellcheck shell=bash
# The Home Assistant add-on's image, for script/docker-check (sourced after podman.sh).
#
# The Supervisor builds addon/Dockerfile with addon/ as the context and BUILD_FROM from
# addon/build.yaml; the package comes from WYOMING_HAYAKOE_SOURCE, by default the GitHub
# tarball of the release. Here that tarball is made from this checkout (its files, as git
# sees them) and served on 127.0.0.1 to a build on the host network, so the Dockerfile's
# steps are the ones the Supervisor runs.

ADDON_DIR=$REPO/addon

# addon_base ARCH: BUILD_FROM of ARCH, as addon/build.yaml names it.
addon_base() {
    local arch=$1
    [[ $arch == arm64 ]] && arch=aarch64
    awk -v key="$arch:" '$1 == key { print $2; exit }' "$ADDON_DIR/build.yaml"
}

addon_version() {
    awk '$1 == "WYOMING_HAYAKOE_VERSION:" { print $2; exit }' "$ADDON_DIR/build.yaml"
}

# addon_source_tarball: DIR/wyoming-hayakoe-VERSION.tar.gz laid out like GitHub's archive.
addon_source_tarball() {
    local dir=$DOCKER_DIR/addon-source name
    name=wyoming-hayakoe-$(addon_version)
    rm -rf "$dir" && mkdir -p "$dir"
    copy_checkout_files "$dir/$name" pyproject.toml README.md LICENSE wyoming_hayakoe
    tar -C "$dir" -czf "$dir/$name.tar.gz" "$name"
    rm -rf "${dir:?}/$name"
    echo "  $(du -h "$dir/$name.tar.gz" | cut -f1) $dir/$name.tar.gz"
}

build_addon_image() { # build_addon_image ARCH
    local arch=$1 port server rc=0 log=$DOCKER_DIR/build-addon-$1.log
    free_space "$DOCKER_DIR"
    port=$(free_port)
    "$HOSTPY" -m http.server --bind 127.0.0.1 --directory "$DOCKER_DIR/addon-source" "$port" \
        >"$DOCKER_DIR/addon-source.log" 2>&1 &
    server=$!
    podman build --pull=never --format docker --platform "linux/$arch" --network host \
        --build-arg BUILD_FROM="$(addon_base "$arch")" \
        --build-arg WYOMING_HAYAKOE_VERSION="$(addon_version)" \
        --build-arg WYOMING_HAYAKOE_SOURCE="http://127.0.0.1:$port/wyoming-hayakoe-$(addon_version).tar.gz" \
        --tag "localhost/hayakoe-addon:check-$arch" "$ADDON_DIR" >"$log" 2>&1 || rc=$?
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
    if ((rc)); then
        tail -n 30 "$log" >&2
        echo "  build log: $log" >&2
        return 1
    fi
    podman image inspect "localhost/hayakoe-addon:check-$arch" \
        --format '  image {{.Id}}: {{.Size}} bytes, {{.Architecture}}' | cut -c1-90
}

# run_addon_container ARCH NAME PORT: the add-on as the Supervisor starts it (Docker's init,
# /data with options.json, /share), with the tiny voice as the user's own voice in
# /share/hayakoe and no network access for it (--local-files-only through the environment).
run_addon_container() {
    local arch=$1 root=$DOCKER_DIR/addon-run-$1 emulation
    rm -rf "$root" && mkdir -p "$root/data" "$root/share"
    copy_checkout_files "$root/fixture" tests/fixtures/tiny-voice
    mv "$root/fixture/tests/fixtures/tiny-voice" "$root/share/hayakoe" && rm -rf "$root/fixture"
    cat >"$root/data/options.json" <<'EOF'
{"voice": "tiny", "speed": 1.0, "sdp_ratio": 0.2, "noise_scale": 0.6, "noise_scale_w": 0.8,
 "style_weight": 1.0, "threads": 0, "debug_logging": false}
EOF
    podman rm --force --ignore "$2" >/dev/null 2>&1
    mapfile -t emulation < <(emulation_options "$arch")
    podman run --detach --init --name "$2" --platform "linux/$arch" "${emulation[@]}" \
        --health-interval=disable --publish "127.0.0.1:$3:10200" \
        --volume "$root/data:/data" --volume "$root/share:/share" \
        --env WYOMING_HAYAKOE_ARGS="--local-files-only" \
        "localhost/hayakoe-addon:check-$arch" >/dev/null 2>"$DOCKER_DIR/run-addon-$arch.log" || {
        cat "$DOCKER_DIR/run-addon-$arch.log" >&2
        return 1
    }
}

# stop_addon_container NAME: SIGTERM reaches the server through the start-up module, and the
# container exits 0 within podman's grace time (no SIGKILL).
stop_addon_container() {
    local code
    podman stop --time 20 "$1" >/dev/null
    code=$(podman inspect "$1" --format '{{.State.ExitCode}}')
    echo "  exit status after podman stop: $code"
    podman logs "$1" 2>&1 | grep -E 'Supervisor discovery|Listening|Stopping' | sed 's/^/  log: /'
    [[ $code == 0 ]]
}
