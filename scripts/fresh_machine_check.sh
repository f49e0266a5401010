#!/usr/bin/env bash
# What a new user meets, on a real fresh machine: a minimal Debian 12 root (debootstrap --variant=minbase,
# Debian packages only) in .fresh/ (git-ignored), a clean clone of the current commit copied into it,
# and the README's two commands run there as root: scripts/test.sh, then an offscreen screenshot with
# scripts/run.sh. --package then runs the README's scripts/package.sh there too and copies its .deb out;
# with it or with --deb FILE (a .deb made elsewhere) a second fresh root installs the package with apt
# (no build dependencies there) and runs the installed normlab-cli and normlab.
# Prints each step's exit status and time, the ctest summaries, whether the desktop app and its ui tests
# ran, and copies screenshots and logs to .fresh/results/. Nothing outside .fresh/ changes; whatever
# it mounts is unmounted on exit, failure included. Usage (as root):
#   scripts/fresh_machine_check.sh [--package | --deb FILE] [--skip-tests] [--keep]
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$ROOT/.fresh"
RESULTS="$WORK/results"
MIRROR="${NORMLAB_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEB="" PACKAGE=0 RUN_TESTS=1 KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) DEB="$(realpath "$2")"; shift 2 ;;
        --package) PACKAGE=1; shift ;;
        --skip-tests) RUN_TESTS=0; shift ;;
        --keep) KEEP=1; shift ;;
        *) echo "usage: $0 [--package | --deb FILE] [--skip-tests] [--keep]" >&2; exit 2 ;;
    esac
done
if [ -n "$DEB" ] && [ "$PACKAGE" -eq 1 ]; then echo "fresh_machine_check: --package or --deb, not both" >&2; exit 2; fi
if [ "$(id -u)" -ne 0 ]; then echo "fresh_machine_check: run as root (debootstrap and chroot)" >&2; exit 2; fi
if [ -n "$DEB" ] && [ ! -f "$DEB" ]; then echo "fresh_machine_check: no package at $DEB" >&2; exit 2; fi
command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }

MOUNTED=()
unmount_all() {
    for ((i = ${#MOUNTED[@]} - 1; i >= 0; i--)); do umount -l "${MOUNTED[i]}" 2>/dev/null; done
    MOUNTED=()
}
# rm -rf that refuses a folder with anything mounted under it (a bind-mounted /dev would be emptied).
safe_remove() {
    local target
    for target in "$@"; do
        [ -e "$target" ] || continue
        if findmnt -rn -o TARGET | grep -q "^$(realpath "$target")"; then
            echo "fresh_machine_check: $target still has mounts; not removing it (umount them by hand)" >&2
            return 1
        fi
        rm -rf "$target"
    done
}
cleanup() {
    unmount_all
    if [ "$KEEP" -eq 0 ]; then safe_remove "$WORK/base" "$WORK/source-root" "$WORK/package-root"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SUMMARY=()
# step NAME COMMAND...: runs, logs to results/NAME.log, records the exit status and seconds.
step() {
    local name="$1" start status
    shift
    start=$(date +%s)
    "$@" >"$RESULTS/$name.log" 2>&1
    status=$?
    SUMMARY+=("$(printf '%-28s exit %3d  %5d s' "$name" "$status" $(($(date +%s) - start)))")
    echo "fresh_machine_check: $name: exit $status ($(($(date +%s) - start)) s; log $RESULTS/$name.log)"
    return $status
}

# A root ready to chroot into: a copy of the base with /proc, /sys and /dev mounted, and the network as
# this machine sees it: name resolution, plus any local certificate authorities (a TLS-intercepting
# proxy's, which update-ca-certificates adds when ca-certificates is installed) and the pip setting
# that trusts them, so PyPI answers inside the root as it does here. Nothing of NormLab's is copied.
prepare_root() {
    local target="$1"
    safe_remove "$target" || exit 1
    cp -a "$WORK/base" "$target"
    cp /etc/resolv.conf "$target/etc/resolv.conf"
    # /etc/hosts as Debian's installer writes it (debootstrap writes none, and without it "localhost"
    # does not resolve: torchrun's rendezvous then waits forever).
    printf '127.0.0.1\tlocalhost\n127.0.1.1\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$(hostname)" \
        >"$target/etc/hosts"
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        mkdir -p "$target/usr/local/share/ca-certificates"
        cp /usr/local/share/ca-certificates/*.crt "$target/usr/local/share/ca-certificates/"
    fi
    if [ -f /etc/pip.conf ]; then cp /etc/pip.conf "$target/etc/pip.conf"; fi
    for fs in proc sys dev dev/pts; do
        mount --bind "/$fs" "$target/$fs" && MOUNTED+=("$target/$fs")
    done
}
in_root() {
    local target="$1"
    shift
    chroot "$target" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 "$@"
}

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
echo "fresh_machine_check: commit $(git -C "$ROOT" rev-parse --short=12 HEAD); results in $RESULTS"
safe_remove "$WORK/base" || exit 1
step debootstrap debootstrap --variant=minbase bookworm "$WORK/base" "$MIRROR" || exit 1
# As on an installed Debian 12: updates and security as well as the release.
cat >"$WORK/base/etc/apt/sources.list" <<SOURCES
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb ${MIRROR%/debian}/debian-security bookworm-security main
SOURCES

STATUS=0

if [ "$RUN_TESTS" -eq 1 ] || [ "$PACKAGE" -eq 1 ]; then
    SRC="$WORK/source-root"
    prepare_root "$SRC"
    git clone --quiet --no-local "$ROOT" "$SRC/root/normlab" || exit 1
    git -C "$SRC/root/normlab" checkout --quiet "$(git -C "$ROOT" rev-parse HEAD)"
    if [ "$RUN_TESTS" -eq 1 ]; then
        step test.sh in_root "$SRC" bash -c "cd /root/normlab && scripts/test.sh" || STATUS=1
        step run.sh-screenshot in_root "$SRC" bash -c "cd /root/normlab && QT_QPA_PLATFORM=offscreen scripts/run.sh --preset quickstart --quit-after-steps 50 --screenshot shot.png" || STATUS=1
        cp "$SRC/root/normlab/shot.png" "$RESULTS/" 2>/dev/null
        echo "fresh_machine_check: ctest summaries of test.sh:"
        grep -E "tests passed|tests failed|Total Test time" "$RESULTS/test.sh.log" | sed 's/^/  /'
        grep -E "normlab: the desktop app was built|FAILED" "$RESULTS/test.sh.log" | sed 's/^/  /'
        grep -E "Label Time Summary" -A8 "$RESULTS/test.sh.log" | grep -E "^(ui|install|engine|cli) " | sed 's/^/  label /'
    fi
    # The README's package command as a new user runs it (as root, so without sudo); its .deb goes to
    # results/ and from there into the package root below.
    if [ "$PACKAGE" -eq 1 ]; then
        step package.sh in_root "$SRC" bash -c "cd /root/normlab && scripts/package.sh" || STATUS=1
        built="$(ls -t "$SRC"/root/normlab/build-package/normlab_*.deb 2>/dev/null | head -1)"
        if [ -n "$built" ] && cp "$built" "$RESULTS/"; then
            DEB="$RESULTS/$(basename "$built")"
            grep -E "^normlab: package |^(Package|Version|Architecture|Depends):" "$RESULTS/package.sh.log" | sed 's/^/  /'
        else
            echo "fresh_machine_check: package.sh made no .deb; nothing to install in a package root" >&2
            STATUS=1
        fi
    fi
    unmount_all
fi

if [ -n "$DEB" ]; then
    PKG="$WORK/package-root"
    prepare_root "$PKG"
    cp "$DEB" "$PKG/root/"
    name="$(basename "$DEB")"
    step package-install in_root "$PKG" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq /root/$name" || STATUS=1
    step package-cli-train in_root "$PKG" bash -c "normlab-cli --version && normlab-cli train --preset quickstart --out /root/run && cat /root/run/summary.json" || STATUS=1
    step package-window-shot in_root "$PKG" bash -c "cd /root && normlab --version && QT_QPA_PLATFORM=offscreen NORMLAB_RUNS_DIR=/root/runs normlab --preset quickstart --quit-after-steps 50 --screenshot /root/package-shot.png" || STATUS=1
    cp "$PKG/root/package-shot.png" "$RESULTS/" 2>/dev/null
    in_root "$PKG" dpkg-query -W -f='${Status}\n' qt6-base-dev g++ cmake 2>&1 | sed 's/^/fresh_machine_check: build packages in the package root: /'
    unmount_all
fi

echo "fresh_machine_check: summary"
printf '  %s\n' "${SUMMARY[@]}"
ls "$RESULTS"/*.png 2>/dev/null | sed 's/^/  screenshot: /'
exit $STATUS
