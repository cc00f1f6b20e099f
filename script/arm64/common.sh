# shellcheck shell=bash
# Shared shell helpers for script/test-arm64, script/docker-check,
# script/homeassistant/py314-root and .ci/run (sourced, not run).
#
# Everything these scripts download or build lives under the checkout's .cache/ (gitignored),
# so `rm -rf .cache` returns the machine to where it was (apart from Debian packages installed
# on the host and the binfmt_misc registration).

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck disable=SC2034 # used by rootfs.sh and podman.sh
CACHE_ROOT=$REPO/.cache

# Debian suite of the aarch64 rootfs and of the container base image stand-in (Python 3.11).
DEBIAN_SUITE=${DEBIAN_SUITE:-bookworm}

log() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

# timed NAME CMD...: run CMD in this shell, print its wall time and append it to $TIMINGS.
# Call it as a plain command: a failure ends the script (set -e), as anywhere else.
timed() {
    local name=$1 start
    shift
    log "$name"
    start=$(date +%s.%N)
    "$@"
    _report_time "$name" "$start"
}

# check NAME CMD...: like timed, but a failure is reported and counted in FAILED instead of
# ending the script. CMD runs in a background subshell and is waited for: that keeps set -e
# working inside it (bash ignores set -e in anything run from an if/||/&& condition).
FAILED=()
check() {
    local name=$1 start rc=0
    shift
    log "$name"
    start=$(date +%s.%N)
    ("$@") &
    wait $! || rc=$?
    _report_time "$name" "$start"
    if ((rc)); then
        printf '  FAILED: %s (exit status %d)\n' "$name" "$rc" >&2
        FAILED+=("$name")
    fi
    return 0
}

_report_time() {
    awk -v n="$1" -v s="$2" -v e="$(date +%s.%N)" 'BEGIN { printf "  %-44s %7.1f s\n", n, e - s }' |
        tee -a "${TIMINGS:-/dev/null}" >&2
}

require_root() {
    [[ $(id -u) == 0 ]] || die "$1 needs root (apt-get, mount, chroot, podman): run it with sudo"
}

# The Debian mirror this machine's apt already uses (the arm64 rootfs comes from the same one):
# DEBIAN_MIRROR if set, else the first enabled Debian archive (a URI ending in /debian) of
# APT_SOURCES_DIR/sources.list.d/*.sources (deb822) or APT_SOURCES_DIR/sources.list (one-line
# format). No mirror is named here: a machine whose apt has none must say which to use.
debian_mirror() {
    if [[ -n ${DEBIAN_MIRROR:-} ]]; then
        echo "$DEBIAN_MIRROR"
        return
    fi
    local apt=${APT_SOURCES_DIR:-/etc/apt} uri
    uri=$(
        {
            local file
            for file in "$apt"/sources.list.d/*.sources; do
                [[ -f $file ]] || continue
                awk '
                    function flush() { if (enabled && deb) for (i = 1; i <= n; i++) print uris[i]; n = 0; enabled = 1; deb = 0 }
                    BEGIN { enabled = 1 }
                    /^[ \t]*$/ { flush(); next }
                    /^#/ { next }
                    tolower($1) == "types:" { deb = 0; for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
                    tolower($1) == "enabled:" { enabled = (tolower($2) != "no") }
                    tolower($1) == "uris:" { for (i = 2; i <= NF; i++) uris[++n] = $i }
                    END { flush() }
                ' "$file"
            done
            [[ -f $apt/sources.list ]] && awk '
                $1 == "deb" { i = 2; if ($i ~ /^\[/) while ($i !~ /\]$/ && i < NF) i++; if ($i ~ /\]$/) i++; print $i }
            ' "$apt/sources.list"
        } | grep -E -m1 '^[a-z+]+://[^ ]+/debian/?$' || true
    )
    [[ -n $uri ]] || die "no Debian archive in $apt/sources.list.d/*.sources or $apt/sources.list: set DEBIAN_MIRROR to the Debian mirror to use"
    echo "${uri%/}"
}

# apt_install PKG...: install the Debian packages that are missing (one apt-get update at most).
apt_install() {
    local missing=() pkg
    for pkg in "$@"; do
        dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
    done
    ((${#missing[@]})) || return 0
    command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get: install them by hand"
    log "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Lets the kernel run aarch64 ELF files through qemu-user-static, also inside a chroot: the
# F flag makes the kernel open the interpreter at registration time. A fresh machine may not
# even have binfmt_misc mounted.
enable_binfmt_aarch64() {
    local dir=/proc/sys/fs/binfmt_misc
    mountpoint -q "$dir" || mount -t binfmt_misc binfmt_misc "$dir" ||
        die "cannot mount binfmt_misc on $dir (needs CAP_SYS_ADMIN)"
    [[ -e $dir/qemu-aarch64 ]] || update-binfmts --enable qemu-aarch64 >/dev/null 2>&1 || true
    [[ -e $dir/qemu-aarch64 ]] || update-binfmts --import qemu-aarch64 >/dev/null 2>&1 || true
    grep -qs '^enabled' "$dir/qemu-aarch64" ||
        die "binfmt_misc entry qemu-aarch64 is missing or disabled (is qemu-user-static installed?)"
    grep -qs '^flags:.*F' "$dir/qemu-aarch64" ||
        die "binfmt_misc entry qemu-aarch64 lacks the F flag: aarch64 programs would not run in a chroot"
}

# ONNX Runtime's CPU detection (pytorch cpuinfo) reads /proc/cpuinfo; under qemu-user it gets
# the host's x86 one and `import onnxruntime` dies with SIGSEGV ("qemu: uncaught target signal
# 11"), in a chroot and in an arm64 container alike. A Raspberry Pi 4B's (Cortex-A72, part
# 0xd08) bind-mounted over it fixes that. One entry per host CPU, so it agrees with
# /sys/devices/system/cpu.
write_pi4_cpuinfo() {
    local cpu
    for ((cpu = 0; cpu < $(nproc --all); cpu++)); do
        printf 'processor\t: %d\n' "$cpu"
        printf 'BogoMIPS\t: 108.00\n'
        printf 'Features\t: fp asimd evtstrm crc32 cpuid\n'
        printf 'CPU implementer\t: 0x41\n'
        printf 'CPU architecture: 8\n'
        printf 'CPU variant\t: 0x0\n'
        printf 'CPU part\t: 0xd08\n'
        printf 'CPU revision\t: 3\n\n'
    done
    printf 'Hardware\t: BCM2835\nRevision\t: c03111\nModel\t\t: Raspberry Pi 4 Model B Rev 1.1\n'
}

# A Raspberry Pi 5's (Cortex-A76, part 0xd0b: ARMv8.2 with FP16 arithmetic and dot product),
# for the run under QEMU_CPU=cortex-a76.
write_pi5_cpuinfo() {
    local cpu
    for ((cpu = 0; cpu < $(nproc --all); cpu++)); do
        printf 'processor\t: %d\n' "$cpu"
        printf 'BogoMIPS\t: 108.00\n'
        printf 'Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\n'
        printf 'CPU implementer\t: 0x41\n'
        printf 'CPU architecture: 8\n'
        printf 'CPU variant\t: 0x4\n'
        printf 'CPU part\t: 0xd0b\n'
        printf 'CPU revision\t: 1\n\n'
    done
    printf 'Revision\t: d04170\nModel\t\t: Raspberry Pi 5 Model B Rev 1.0\n'
}

# unmount_below DIR: unmount everything mounted under DIR, deepest first.
unmount_below() {
    local target
    while read -r target; do
        umount "$target" 2>/dev/null || umount -l "$target"
    done < <(findmnt -rn -o TARGET | awk -v p="$1/" 'index($0, p) == 1' | sort -r)
}

# remove_tree DIR: delete DIR, refusing if anything is still mounted inside it (an rm -rf
# through a bind mount of /proc or the checkout would be a disaster).
remove_tree() {
    [[ -e $1 ]] || return 0
    unmount_below "$1"
    if findmnt -rn -o TARGET | awk -v p="$1/" 'index($0, p) == 1' | grep -q .; then
        die "something is still mounted under $1; not deleting it"
    fi
    rm -rf --one-file-system "$1"
}

# free_space DIR [WHEN]: the space left on DIR's file system, for the log (a run that fills the
# disk then shows how close it came).
free_space() {
    printf '  free space on %s: %s%s\n' "$(df --output=target "$1" | tail -n 1)" \
        "$(df -h --output=avail "$1" | tail -n 1 | tr -d ' ')" "${2:+ ($2)}"
}

# copy_checkout_files DEST PATH...: copy the files under PATHs (relative to the checkout) into
# DEST, keeping their paths but leaving out what .gitignore excludes (caches that tests and
# servers leave in tests/fixtures, __pycache__). Without git: everything.
copy_checkout_files() {
    local dest=$1
    shift
    mkdir -p "$dest"
    # safe.directory: under sudo the checkout usually belongs to another user.
    local git=(git -c safe.directory="$REPO" -C "$REPO")
    if "${git[@]}" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        "${git[@]}" ls-files -z --cached --others --exclude-standard -- "$@" |
            tar -C "$REPO" --null --files-from=- --ignore-failed-read -cf - 2>/dev/null |
            tar -C "$dest" -xf -
    else
        (cd "$REPO" && cp -a --parents "$@" "$dest")
    fi
}

# A host Python with pip, used only to build the project wheel and to download wheels.
host_python() {
    if [[ -n ${HOST_PYTHON:-} ]]; then
        echo "$HOST_PYTHON"
    elif [[ -x $REPO/.venv/bin/python ]]; then
        echo "$REPO/.venv/bin/python"
    else
        command -v python3 || die "no python3 on the host"
    fi
}
