#!/usr/bin/env bash
# Installs the `dirid` client on a host, from a clone of this repository,
# so that `dirid join` can run there (docs/sssd-host.md): a supported
# Node.js (the pinned Node 24 from the npm registry where the machine's is
# older, scripts/node-runtime.sh; Debian's nodejs and npm first when there
# is no npm at all), the npm packages, the client's build, and
# /usr/local/bin/dirid. Run as root. The Debian packages the joined host
# needs are `dirid join`'s to check (or install, --install-packages).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
  echo "install-client: run as root (it installs into /usr/local)" >&2
  exit 1
fi
if ! command -v npm >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
fi
. scripts/node-runtime.sh
dirid_node_runtime
npm ci --no-audit --no-fund --loglevel=error
# the client only: the TypeScript build and its one-file bundle (no web console)
npx --no-install tsc -p tsconfig.json
node scripts/bundle-cli.mjs
ln -sfn "$PWD/bin/dirid.js" /usr/local/bin/dirid
echo "install-client: $(/usr/local/bin/dirid --version) at /usr/local/bin/dirid; next: dirid join --help"
