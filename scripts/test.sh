#!/usr/bin/env bash
# The whole test suite (README "Tests"; .ci/run calls exactly this):
# installs dependencies, builds, type-checks tests, then runs the fast tier
# and the system tier (scripts/test-tier.sh), each to its end: it fails when
# either fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# the Node.js install-deps chose (a supported LTS) for the build and the run
. scripts/node-runtime.sh
dirid_node_runtime
npm run --silent build
npm run --silent typecheck
failed=()
bash scripts/test-tier.sh fast || failed+=(fast)
bash scripts/test-tier.sh system || failed+=(system)
if [ ${#failed[@]} -gt 0 ]; then
  echo "# failed tiers: ${failed[*]}" >&2
  exit 1
fi
