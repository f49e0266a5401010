#!/usr/bin/env bash
# Fails when a C++ or CUDA file of the project differs from what clang-format (the repository's
# .clang-format, Debian 12's clang-format 14) makes of it, listing the files; scripts/test.sh runs it
# first. Fix with: clang-format -i FILE... (or the files this prints).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
else
    mapfile -t files < <(find app engine ui tests \( -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \))
fi
unformatted=()
for file in "${files[@]}"; do
    clang-format --dry-run -Werror "$file" >/dev/null 2>&1 || unformatted+=("$file")
done
if [ "${#unformatted[@]}" -gt 0 ]; then
    echo "normlab: FAILED: ${#unformatted[@]} file(s) differ from clang-format; run: clang-format -i ${unformatted[*]}" >&2
    exit 1
fi
echo "normlab: all ${#files[@]} C++ files are clang-format clean"
