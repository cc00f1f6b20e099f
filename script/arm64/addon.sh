# shellcheck shell=bash
# The Home Assistant add-on's image, for script/docker-check (sourced after podman.sh).
#
# Built the way the Supervisor builds it: addon/Dockerfile with addon/ as the context, BUILD_FROM
# of the arch and every argument of addon/build.yaml (with BUILD_ARCH and BUILD_VERSION, as the
# Supervisor adds them). The one argument a release does not give, WYOMING_HAYAKOE_WHEEL, is
# the URL of a wheel built from this checkout (its files as git sees them), served on
# 127.0.0.1 to a build on the host network; a release installs wyoming-hayakoe==VERSION from
# the package index with the same Dockerfile. Run the way Home Assistant OS runs it: the
# settings of addon/config.yaml (init, the mapped folders), /data with an options.json,
# /share, the add-on's hostname and time zone.

ADDON_DIR=$REPO/addon

# addon_yaml FILE EXPRESSION: print EXPRESSION, evaluated with `d` the parsed addon/FILE
# (nothing for an empty string, so that mapfile makes an empty list of it).
addon_yaml() {
    "$HOSTPY" -c 'import sys, yaml
d = yaml.safe_load(open(sys.argv[1], encoding="utf-8"))
value = str(eval(sys.argv[2]))
if value:
    print(value)' "$ADDON_DIR/$1" "$2"
}

# addon_base ARCH: BUILD_FROM of ARCH, as addon/build.yaml names it.
addon_base() {
    local arch=$1
    [[ $arch == arm64 ]] && arch=aarch64
    addon_yaml build.yaml "d['build_from']['$arch']"
}

addon_version() {
    addon_yaml config.yaml "d['version']"
}

# addon_wheel: DIR/wheels/wyoming_hayakoe-VERSION-py3-none-any.whl, built from the checkout's
# files with `pip wheel --no-deps` (its build backend from the package index, as for a user).
addon_wheel() {
    local dir=$DOCKER_DIR/addon-source wheel
    rm -rf "$dir" && mkdir -p "$dir/wheels"
    copy_checkout_files "$dir/tree" pyproject.toml README.md LICENSE wyoming_hayakoe
    "$HOSTPY" -m pip wheel --quiet --no-deps --wheel-dir "$dir/wheels" "$dir/tree" \
        >"$DOCKER_DIR/addon-wheel.log" 2>&1 || {
        tail -n 20 "$DOCKER_DIR/addon-wheel.log" >&2
        return 1
    }
    rm -rf "${dir:?}/tree"
    wheel=$(find "$dir/wheels" -name "wyoming_hayakoe-$(addon_version)-*.whl")
    [[ -n $wheel ]] || die "no wheel of version $(addon_version) in $dir/wheels"
    echo "  $(du -h "$wheel" | cut -f1) $wheel"
}

build_addon_image() { # build_addon_image ARCH
    local arch=$1 port server rc=0 log=$DOCKER_DIR/build-addon-$1.log wheel args=()
    free_space "$DOCKER_DIR"
    wheel=$(basename "$(find "$DOCKER_DIR/addon-source/wheels" -name 'wyoming_hayakoe-*.whl')")
    mapfile -t args < <(addon_yaml build.yaml \
        "'\n'.join(f'--build-arg={k}={v}' for k, v in (d.get('args') or {}).items())")
    port=$(free_port)
    "$HOSTPY" -m http.server --bind 127.0.0.1 --directory "$DOCKER_DIR/addon-source/wheels" "$port" \
        >"$DOCKER_DIR/addon-source.log" 2>&1 &
    server=$!
    podman build --pull=never --format docker --platform "linux/$arch" --network host \
        --build-arg BUILD_FROM="$(addon_base "$arch")" \
        --build-arg BUILD_ARCH="$([[ $arch == arm64 ]] && echo aarch64 || echo "$arch")" \
        --build-arg BUILD_VERSION="$(addon_version)" "${args[@]}" \
        --build-arg WYOMING_HAYAKOE_WHEEL="wyoming-hayakoe @ http://127.0.0.1:$port/$wheel" \
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

# run_addon_container ARCH NAME PORT: the add-on as the Supervisor starts it: Docker's init if
# config.yaml asks for it (init, default true), /data with options.json, the folders of its
# map (/share), its hostname, TZ and config.yaml's environment; the tiny voice as the user's own voice in /share/hayakoe
# and no network access for it (--local-files-only through the environment). No
# SUPERVISOR_TOKEN: there is no Supervisor to announce to (test_addon_discovery.py).
run_addon_container() {
    local arch=$1 root=$DOCKER_DIR/addon-run-$1 emulation init=() environment=()
    rm -rf "$root" && mkdir -p "$root/data" "$root/share"
    copy_checkout_files "$root/fixture" tests/fixtures/tiny-voice
    mv "$root/fixture/tests/fixtures/tiny-voice" "$root/share/hayakoe" && rm -rf "$root/fixture"
    cat >"$root/data/options.json" <<'EOF'
{"voice": "tiny", "speed": 1.0, "sdp_ratio": 0.2, "noise_scale": 0.6, "noise_scale_w": 0.8,
 "style_weight": 1.0, "threads": 0, "debug_logging": false}
EOF
    [[ $(addon_yaml config.yaml "d.get('init', True)") == True ]] && init=(--init)
    mapfile -t environment < <(addon_yaml config.yaml \
        "'\n'.join(f'--env={k}={v}' for k, v in (d.get('environment') or {}).items())")
    [[ $(addon_yaml config.yaml "any(str(m).startswith('share') for m in d.get('map', []))") == True ]] ||
        die "config.yaml no longer maps share: update run_addon_container"
    echo "  as config.yaml says: init ${init[*]:-off}, /data, /share, $(addon_yaml config.yaml "list(d.get('ports', {}))")"
    podman rm --force --ignore "$2" >/dev/null 2>&1
    mapfile -t emulation < <(emulation_options "$arch")
    podman run --detach "${init[@]}" --name "$2" --platform "linux/$arch" "${emulation[@]}" \
        --health-interval=disable --publish "127.0.0.1:$3:10200" \
        --hostname "local-$(addon_yaml config.yaml "d['slug']")" --env TZ=Etc/UTC "${environment[@]}" \
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
