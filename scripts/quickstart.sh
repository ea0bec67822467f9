#!/usr/bin/env bash
# Quickstart: installs dependencies, creates a demo realm in ./demo-data (once)
# and starts the server in the foreground. Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
npm run --silent build
DATA=${DIRID_DATA_DIR:-$PWD/demo-data}
if [ ! -f "$DATA/server.conf" ]; then
  mkdir -p "$DATA"
  umask 077
  node -e "process.stdout.write(require('crypto').randomBytes(12).toString('base64url'))" > "$DATA/admin.password"
  node bin/dirid-server.js init --data-dir "$DATA" --realm DEMO.TEST --domain demo.test \
    --hostname localhost --admin-password-file "$DATA/admin.password" --https-port 8443 --kdc-port 8088
  echo "quickstart: the admin password is in $DATA/admin.password"
fi
echo "quickstart: client configuration: $DATA/default.conf (CA: $DATA/ca.crt)"
exec node bin/dirid-server.js start --data-dir "$DATA"
