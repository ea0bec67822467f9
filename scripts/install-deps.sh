#!/usr/bin/env bash
# Installs what dirid and its test suite need: Debian packages (MIT krb5
# client with its PKINIT plugin (kinit -n), KDC, GSS samples, for interop
# tests and benchmarks; SSSD with
# its idp plugin, LDAP and krb5 providers; OpenLDAP clients with SASL
# GSSAPI, and slapd as a benchmark reference; PostgreSQL for the shared
# directory backend; dnsmasq for SRV tests; Chromium for the web console's
# browser tests, driven by playwright-core; OpenSSH's server, sudo and
# SSSD's sudo module for the host that `dirid join` configures, run by the
# tests in a private namespace; the age CLI, which opens an encrypted
# backup without dirid) and the npm packages. No daemon a package
# brings is started or left running on the machine: a package's scripts
# ask policy-rc.d, which refuses while the install runs.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=(krb5-user krb5-pkinit krb5-kdc krb5-admin-server krb5-gss-samples sssd-idp sssd-krb5 sssd-proxy sssd-ldap libnss-sss libpam-sss pamtester
  ldap-utils libsasl2-modules-gssapi-mit slapd postgresql dnsmasq-base curl util-linux chromium
  openssh-server sudo libsss-sudo age)
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
  # openssh-server's postinst would start sshd on port 22 (and sssd's its daemon): a policy-rc.d
  # refusing every start keeps the machine as it was (one already there, as in containers, is kept)
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\n# written by dirid scripts/install-deps.sh while it installs packages\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # and where systemd runs, not at the next boot either (enabled by the postinst)
  if [ -d /run/systemd/system ] && [[ " ${missing[*]} " == *" openssh-server "* ]]; then
    systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true
  fi
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
