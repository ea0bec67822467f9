#!/usr/bin/env bash
# Installs what dirid and its test suite need: Debian packages (MIT krb5
# client with its PKINIT plugin (kinit -n), KDC, GSS samples, for interop
# tests and benchmarks; SSSD with
# its idp plugin, LDAP and krb5 providers; OpenLDAP clients with SASL
# GSSAPI, and slapd as a benchmark reference; PostgreSQL for the shared
# directory backend; dnsmasq for SRV tests; Chromium for the web console's
# browser tests, driven by playwright-core; sudo and SSSD's sudo module for
# the sudo rules test/sssd/sudo-host.test.ts runs in a private namespace)
# and the npm packages.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(krb5-user krb5-pkinit krb5-kdc krb5-admin-server krb5-gss-samples sssd-idp sssd-krb5 sssd-proxy sssd-ldap libnss-sss libpam-sss pamtester
  ldap-utils libsasl2-modules-gssapi-mit slapd postgresql dnsmasq-base curl util-linux chromium
  sudo libsss-sudo)
missing=()
for p in "${debs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing Debian packages: ${missing[*]} (run as root or install them)" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # slapd is a reference for bench/ldap.ts only: no database of its own, no daemon started
  echo 'slapd slapd/no_configuration boolean true' | debconf-set-selections
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# a supported Node.js (22+; the pinned 24 where the machine's is older)
. scripts/node-runtime.sh
dirid_node_runtime

abi=$(node -p process.versions.modules)
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "install-deps: npm ci (Node.js $(node --version))"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$abi" > node_modules/.dirid-node-abi
elif [ "$(cat node_modules/.dirid-node-abi 2>/dev/null)" != "$abi" ]; then
  # node_modules was built for another Node: rebuild the native addons
  echo "install-deps: npm rebuild for Node.js $(node --version)"
  npm rebuild --no-audit --no-fund --loglevel=error
  echo "$abi" > node_modules/.dirid-node-abi
fi
