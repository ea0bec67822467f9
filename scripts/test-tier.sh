#!/usr/bin/env bash
# Runs one tier of the test suite (README "Tests"): fast (in process, no
# server, no installed package) or system (real servers and clients). The
# tiers are scripts/test-tiers.mjs's; node --test ends with its summary.
# The fast tier's files run in one process (--test-isolation=none, where
# this Node has it): each opens what it tests and leaves no global state
# behind, and loading tsx once rather than once per file halves the tier's
# time. The system tier's files run two at a time, each in its own process.
set -euo pipefail
cd "$(dirname "$0")/.."
tier=${1:?usage: scripts/test-tier.sh fast|system}
list=$(node scripts/test-tiers.mjs list "$tier")
if [ -z "$list" ]; then echo "test-tier: no test files in the $tier tier" >&2; exit 1; fi
mapfile -t files <<<"$list"
run=(--test-concurrency=2)
if [ "$tier" = fast ] && node --test-isolation=none -e 0 2>/dev/null; then run=(--test-isolation=none); fi
echo "# $tier tier: ${#files[@]} test files"
exec node --import tsx --test "${run[@]}" "${files[@]}"
