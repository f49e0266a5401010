#!/usr/bin/env bash
# ctest "install_layout": `cmake --install` of the build tree into a temporary prefix puts both programs,
# the corpus, the recorded lessons, the desktop entry, the icon (SVG and every PNG size) and the AppStream metadata where a
# desktop looks for them; the entry and the metadata pass their validators; the installed programs
# print their version and find the installed corpus (not the source tree's), and train from it.
# Usage: check_install.sh BUILD_DIR
set -euo pipefail
BUILD="$1"
PREFIX="$(mktemp -d)"
trap 'rm -rf "$PREFIX"' EXIT
fail() { echo "install_layout: FAILED: $*" >&2; exit 1; }

cmake --install "$BUILD" --prefix "$PREFIX" >"$PREFIX.log" 2>&1 || { cat "$PREFIX.log"; fail "cmake --install"; }
rm -f "$PREFIX.log"
APP_ID=org.normlab.NormLab
for file in bin/normlab bin/normlab-cli share/normlab/corpus.txt share/applications/$APP_ID.desktop \
    share/metainfo/$APP_ID.metainfo.xml share/icons/hicolor/scalable/apps/$APP_ID.svg \
    share/normlab/recordings/mix-ln-at-depth.tar.gz; do
    [ -s "$PREFIX/$file" ] || fail "$file is missing from the installed tree"
done
for size in 16 24 32 48 64 128 256 512; do
    png="$PREFIX/share/icons/hicolor/${size}x${size}/apps/$APP_ID.png"
    [ -s "$png" ] || fail "the ${size}x${size} icon is missing"
    # The PNG header's width and height (bytes 16-23, big-endian).
    read -r width height < <(od -An -tu1 -j16 -N8 "$png" |
        awk '{print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}')
    [ "$width" = "$size" ] && [ "$height" = "$size" ] || fail "the ${size}x${size} icon is ${width}x${height}"
done
desktop-file-validate "$PREFIX/share/applications/$APP_ID.desktop" || fail "desktop-file-validate"
appstreamcli validate --no-net --explain "$PREFIX/share/metainfo/$APP_ID.metainfo.xml" ||
    fail "appstreamcli validate"

version="$("$PREFIX/bin/normlab-cli" --version)"
echo "$version"
grep -q "^normlab-cli: NormLab [0-9]" <<<"$version" || fail "normlab-cli --version printed: $version"
grep -qx "resources: $PREFIX/share/normlab" <<<"$version" || fail "the installed normlab-cli does not use the installed corpus"
env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM "$PREFIX/bin/normlab" --version | grep -q "NormLab [0-9]" ||
    fail "normlab --version"
"$PREFIX/bin/normlab-cli" train --preset quickstart --steps 5 --set threads=1 --out "$PREFIX/run" --quiet >/dev/null ||
    fail "the installed normlab-cli cannot train"
grep -q '"status": *"completed"' "$PREFIX/run/summary.json" || fail "the installed run did not complete"
echo "install_layout: every file in place, validators pass, the installed programs run"
