# shellcheck shell=bash
# The emulated aarch64 Debian rootfs used by script/test-arm64 (sourced after common.sh).
#
# Layout under $ARM64_DIR (default .cache/arm64):
#   rootfs/     Debian arm64 python3 3.11 (mmdebstrap, extracted), venv in rootfs/opt/venv
#   cpuinfo     the /proc/cpuinfo of a Raspberry Pi 4B, bind-mounted over the rootfs's
#   wheels/     aarch64 wheels of the dependencies (pip download on the host)   -> /opt/wheels
#   dist/       the project's own wheel (pip wheel on the host)                  -> /opt/dist
#   work/       test files and the x86_64 reference audio, per run               -> /opt/work

ARM64_DIR=${ARM64_DIR:-$CACHE_ROOT/arm64}
ROOTFS=$ARM64_DIR/rootfs
# The Raspberry Pi 4B core: no SVE, no dot product, no fp16 arithmetic. qemu-user reads
# QEMU_CPU from the environment of every aarch64 process it starts.
QEMU_CPU=${QEMU_CPU:-cortex-a72}
ROOTFS_MOUNTS=()

# Debian's arm64 packages for Python 3.11, unpacked but not configured (mmdebstrap's extract
# variant): apt resolves and dpkg-deb unpacks natively in ~15 s, where a full debootstrap runs
# every maintainer script under emulation (3-7 minutes). Python needs none of those scripts;
# the few files they would make (passwd, group, ld.so.cache) are written below.
# libstdc++ and libgcc_s: the system libraries manylinux wheels (numpy, onnxruntime) expect.
ROOTFS_PACKAGES=python3,python3-venv,libstdc++6,libgcc-s1,dash,coreutils,libc-bin

rootfs_create() {
    if [[ -e $ROOTFS/.complete ]]; then
        echo "  reusing $ROOTFS"
        return
    fi
    remove_tree "$ROOTFS"
    mkdir -p "$ARM64_DIR"
    local mirror
    mirror=$(debian_mirror) || exit 1
    if ! mmdebstrap --variant=extract --architectures=arm64 --include="$ROOTFS_PACKAGES" \
        "$DEBIAN_SUITE" "$ROOTFS" "$mirror" >"$ARM64_DIR/mmdebstrap.log" 2>&1; then
        tail -n 20 "$ARM64_DIR/mmdebstrap.log" >&2
        die "mmdebstrap failed (full log: $ARM64_DIR/mmdebstrap.log)"
    fi
    mkdir -p "$ROOTFS"/{proc,sys,dev/shm,root,tmp,opt}
    chmod 1777 "$ROOTFS/tmp"
    echo 'root:x:0:0:root:/root:/bin/sh' >"$ROOTFS/etc/passwd"
    echo 'root:x:0:' >"$ROOTFS/etc/group"
    echo '127.0.0.1 localhost' >"$ROOTFS/etc/hosts"
    chroot "$ROOTFS" /usr/bin/env QEMU_CPU="$QEMU_CPU" /sbin/ldconfig
    chroot "$ROOTFS" /usr/bin/env QEMU_CPU="$QEMU_CPU" /usr/bin/python3 -c \
        'import platform, sys; print("  python", sys.version.split()[0], platform.machine())'
    touch "$ROOTFS/.complete"
}

_rootfs_mount() { # _rootfs_mount TARGET mount-args...
    local target=$1
    shift
    [[ -e $target ]] || mkdir -p "$target"
    mount "$@" "$target"
    ROOTFS_MOUNTS+=("$target")
}

_rootfs_bind_ro() { # _rootfs_bind_ro HOSTDIR TARGET
    _rootfs_mount "$2" --bind "$1"
    mount -o remount,ro,bind "$2"
}

# Mount what programs in the rootfs need; rootfs_unmount (an EXIT trap) undoes it.
# The caller holds .cache/arm64/.lock, so mounts found here are leftovers of a killed run.
rootfs_mount() {
    unmount_below "$ROOTFS"
    write_pi4_cpuinfo >"$ARM64_DIR/cpuinfo"
    mkdir -p "$ARM64_DIR/wheels" "$ARM64_DIR/dist" "$ARM64_DIR/work"
    _rootfs_mount "$ROOTFS/proc" -t proc proc
    _rootfs_mount "$ROOTFS/proc/cpuinfo" --bind "$ARM64_DIR/cpuinfo"
    _rootfs_mount "$ROOTFS/sys" -t sysfs -o ro sysfs
    _rootfs_mount "$ROOTFS/dev/shm" -t tmpfs -o mode=1777 tmpfs
    _rootfs_bind_ro "$ARM64_DIR/wheels" "$ROOTFS/opt/wheels"
    _rootfs_bind_ro "$ARM64_DIR/dist" "$ROOTFS/opt/dist"
    _rootfs_mount "$ROOTFS/opt/work" --bind "$ARM64_DIR/work"
}

# rootfs_cpu QEMU_CPU WRITER: later commands run on that emulated CPU, with the /proc/cpuinfo
# WRITER prints (write_pi4_cpuinfo, write_pi5_cpuinfo) over the rootfs's.
rootfs_cpu() {
    QEMU_CPU=$1
    "$2" >"$ARM64_DIR/cpuinfo-$1"
    _rootfs_mount "$ROOTFS/proc/cpuinfo" --bind "$ARM64_DIR/cpuinfo-$1"
}

rootfs_unmount() {
    local i
    for ((i = ${#ROOTFS_MOUNTS[@]} - 1; i >= 0; i--)); do
        umount "${ROOTFS_MOUNTS[i]}" 2>/dev/null || umount -l "${ROOTFS_MOUNTS[i]}" || true
    done
    ROOTFS_MOUNTS=()
}

# rootfs_exec CMD...: run CMD as root inside the rootfs, in /opt/work, venv first on PATH.
# A clean environment: nothing of the host's (PYTHONPATH, PIP_*, virtualenv) leaks in.
rootfs_exec() {
    chroot "$ROOTFS" /usr/bin/env -i \
        QEMU_CPU="$QEMU_CPU" HOME=/root LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=dumb PYTHONUNBUFFERED=1 \
        PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        "${ROOTFS_ENV[@]}" /bin/sh -c 'cd /opt/work && exec "$@"' sh "$@"
}
ROOTFS_ENV=()
