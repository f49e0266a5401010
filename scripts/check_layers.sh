#!/usr/bin/env bash
# Fails when a source file includes a header of a layer above its own (docs/architecture.md#layering):
# engine/ folders by rank (core, stats, config, data and backend, model, train, io and selfcheck,
# analysis and sweep), engine/ never ui/, app/ or Qt, normlab-cli (app/cli) never ui/ or Qt. An upward
# include that must stay a while goes in `known` below with its reason; a new one, or a known one gone,
# fails until the list is brought up to date. scripts/test.sh runs it after the format check.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

declare -A rank=([core]=0 [stats]=1 [config]=2 [data]=3 [backend]=3 [model]=4 [train]=5 [io]=6
                 [selfcheck]=6 [analysis]=7 [sweep]=7)
# file:included header, each an upward include kept for a reason (none today: the self-check moved
# above model/ and train/, json_read, small_file and atomic_file into core/)
known=()

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files 'engine/*' 'app/cli/*' | grep -E '\.(cpp|h|cu|cuh)$')
else
    mapfile -t files < <(find engine app/cli -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh')
fi

upward=()
wrong=()
for file in "${files[@]}"; do
    while IFS= read -r header; do
        case "$file" in
            engine/*)
                if [[ "$header" == ui/* || "$header" == app/* || "$header" == Q* ]]; then
                    wrong+=("$file includes $header (engine/ has no Qt and no window)")
                    continue
                fi
                [[ "$header" == engine/* ]] || continue
                from=$(cut -d/ -f2 <<<"$file")
                to=$(cut -d/ -f2 <<<"$header")
                [[ -n "${rank[$from]:-}" && -n "${rank[$to]:-}" ]] || {
                    wrong+=("$file includes $header: add engine/$from or engine/$to to this script's ranks")
                    continue
                }
                ((rank[$to] > rank[$from])) && upward+=("$file:$header")
                ;;
            app/cli/*)
                [[ "$header" == ui/* || "$header" == Q* ]] && wrong+=("$file includes $header (normlab-cli links the engine only)")
                ;;
        esac
    done < <(sed -n -E 's/^#include [<"]([^">]+)[">].*/\1/p' "$file")
done

for entry in "${upward[@]}"; do
    [[ " ${known[*]} " == *" $entry "* ]] || wrong+=("${entry%%:*} includes ${entry#*:}, a layer above its own")
done
for entry in "${known[@]}"; do
    [[ " ${upward[*]} " == *" $entry "* ]] || wrong+=("$entry is gone: remove it from the known list in scripts/check_layers.sh")
done
if [ "${#wrong[@]}" -gt 0 ]; then
    printf 'normlab: FAILED: %s\n' "${wrong[@]}" >&2
    exit 1
fi
echo "normlab: no new upward include in ${#files[@]} engine and CLI files (${#known[@]} known, listed in scripts/check_layers.sh)"
