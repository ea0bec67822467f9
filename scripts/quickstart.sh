#!/usr/bin/env bash
# Quickstart: installs dependencies, creates a demo realm in ./demo-data (once)
# and starts the server in the foreground, on loopback only: it is a demo
# with a known admin password. Ctrl-C stops it, and so does the end of
# whatever started it, even killed with SIGKILL (the server watches its
# parent, and npm when run by npm; no orphan keeps the ports). A shell that
# puts it in the background and exits does not stop it.
#
# The demo realm's server.conf says loopback too, and the server refuses any
# other address while admin.password sits in the data directory.
#
# Environment: DIRID_DATA_DIR (default ./demo-data), DIRID_HTTPS_PORT (8443),
# DIRID_HTTP_PORT (8080), DIRID_KDC_PORT (8088), DIRID_KPASSWD_PORT (8464),
# DIRID_LDAP_PORT (8389), DIRID_LDAPS_PORT (8636; 0 picks free ports),
# DIRID_IDP_CA_FILE (PEM files of CAs trusted for the IdPs, separated by
# commas: an IdP behind a private CA), DIRID_QUICKSTART_SKIP_INSTALL=1
# skips installing and building when that is already done.
set -euo pipefail
# relative file names in the environment are the caller's
START_DIR=$PWD
cd "$(dirname "$0")/.."
if [ "${DIRID_QUICKSTART_SKIP_INSTALL:-}" != 1 ]; then
  bash scripts/install-deps.sh
  npm run --silent build
fi
# the Node.js install-deps chose (a supported LTS)
. scripts/node-runtime.sh
dirid_node_runtime
# npm runs this script through `sh -c`, which outlives a killed npm: name npm
# itself (found now, while it is still our ancestor) for the server to watch
WATCH=()
if [ -n "${npm_lifecycle_event:-}" ] && [ -r /proc/$$/stat ]; then
  pid=$PPID
  for _ in 1 2 3; do
    case "$(cat "/proc/$pid/comm" 2>/dev/null)" in npm*) WATCH=(--exit-with-pid "$pid"); break ;; esac
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || break
    read -r -a fields <<< "${stat##*) }"
    pid=${fields[1]}
  done
fi
DATA=${DIRID_DATA_DIR:-$PWD/demo-data}
HTTPS_PORT=${DIRID_HTTPS_PORT:-8443}
HTTP_PORT=${DIRID_HTTP_PORT:-8080}
KDC_PORT=${DIRID_KDC_PORT:-8088}
KPASSWD_PORT=${DIRID_KPASSWD_PORT:-8464}
LDAP_PORT=${DIRID_LDAP_PORT:-8389}
LDAPS_PORT=${DIRID_LDAPS_PORT:-8636}
if [ ! -f "$DATA/server.conf" ]; then
  mkdir -p "$DATA"
  umask 077
  node -e "process.stdout.write(require('crypto').randomBytes(12).toString('base64url'))" > "$DATA/admin.password"
  node bin/dirid-server.js init --data-dir "$DATA" --realm DEMO.TEST --domain demo.test --listen 127.0.0.1 \
    --hostname localhost --admin-password-file "$DATA/admin.password" --https-port "$HTTPS_PORT" --http-port "$HTTP_PORT" \
    --kdc-port "$KDC_PORT" --kpasswd-port "$KPASSWD_PORT" --ldap-port "$LDAP_PORT" --ldaps-port "$LDAPS_PORT"
  echo "quickstart: the admin password is in $DATA/admin.password"
fi
# the IdPs' CA files, each given to the server with --idp-ca-file
IDP_CA=()
IFS=, read -r -a idp_ca_files <<< "${DIRID_IDP_CA_FILE:-}"
for f in "${idp_ca_files[@]}"; do
  f="${f#"${f%%[![:space:]]*}"}"; f="${f%"${f##*[![:space:]]}"}"
  case "$f" in '') continue ;; /*) ;; *) f="$START_DIR/$f" ;; esac
  IDP_CA+=(--idp-ca-file "$f")
done
echo "quickstart: client configuration: $DATA/default.conf (CA: $DATA/ca.crt)"
echo "quickstart: serving the demo realm on loopback (127.0.0.1) only: it has a known admin password"
exec node bin/dirid-server.js start --data-dir "$DATA" --listen 127.0.0.1 --https-port "$HTTPS_PORT" --http-port "$HTTP_PORT" \
  --kdc-port "$KDC_PORT" --kpasswd-port "$KPASSWD_PORT" --ldap-port "$LDAP_PORT" --ldaps-port "$LDAPS_PORT" "${IDP_CA[@]}" --exit-with-parent "${WATCH[@]}"
