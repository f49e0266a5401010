#!/usr/bin/env bash
# Fails when a commit since the history policy began has a subject over 72 characters or no body saying
# why (docs/testing.md#commit-messages); scripts/test.sh runs it after the format check. Merge commits
# are exempt. Older commits (up to POLICY_START) predate the policy and are not rewritten.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
POLICY_START=d57353e  # the last commit before the policy; every later one follows it
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    echo "normlab: commit messages not checked: $(pwd) is not a git clone"
    exit 0
fi
range=(HEAD)
scope="in this shallow clone"
# A shallow clone may not reach the start; then every commit it holds is newer and is checked.
if git cat-file -e "$POLICY_START^{commit}" 2>/dev/null; then
    range=("$POLICY_START..HEAD")
    scope="since $POLICY_START"
fi
bad=0
checked=0
while IFS= read -r -d '' record; do
    hash="${record%%$'\x1f'*}"
    rest="${record#*$'\x1f'}"
    subject="${rest%%$'\x1f'*}"
    body="${rest#*$'\x1f'}"
    checked=$((checked + 1))
    if [ "${#subject}" -gt 72 ]; then
        echo "normlab: commit $hash: subject is ${#subject} characters (at most 72): $subject" >&2
        bad=$((bad + 1))
    fi
    if [ -z "$(printf '%s' "$body" | tr -d '[:space:]')" ]; then
        echo "normlab: commit $hash: no body saying why: $subject" >&2
        bad=$((bad + 1))
    fi
done < <(git log --no-merges -z --format='%h%x1f%s%x1f%b' "${range[@]}")
if [ "$bad" -gt 0 ]; then
    echo "normlab: FAILED: $bad commit message problem(s); reword with git rebase -i (before the commits land)" >&2
    exit 1
fi
echo "normlab: all $checked commit messages $scope have a subject of at most 72 characters and a body"
