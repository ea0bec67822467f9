#!/usr/bin/env bash
# The whole test suite (README "Tests"; .ci/run calls exactly this):
# installs dependencies, builds, type-checks tests, runs node --test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# the Node.js install-deps chose (a supported LTS) for the build and the run
. scripts/node-runtime.sh
dirid_node_runtime
npm run --silent build
npm run --silent typecheck
mapfile -t files < <(find test -name '*.test.ts' | sort)
exec node --import tsx --test --test-concurrency=2 "${files[@]}"
