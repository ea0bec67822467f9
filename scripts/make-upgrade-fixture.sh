#!/usr/bin/env bash
# Builds the upgrade test's fixture (test/server/upgrade.test.ts): a realm
# made by a past release, through that release's own code. Checks the tag
# out into a temporary worktree (node_modules linked from this checkout: the
# same package-lock), builds it, runs its `dirid-server init` with fixed
# options, starts it on loopback ports, and through its `dirid` CLI and MIT
# kinit adds what an upgrade must keep:
#   alice   a user with a password (Alice-pass-1)
#   bob     a user linked to the IdP reference testidp (sub bob-sub)
#   staff   a group of both; helpdesk, a role holding User Administrators
#   app.upgrade.test, a host, and HTTP/app.upgrade.test, its service, whose
#           keys go to app.keytab
#   testidp an IdP reference (keycloak template) with the client secret
#           Upgrade-idp-secret-1
# then stops it and packs its data directory (realm/) and app.keytab into
# test/data/upgrade/TAG.tar. The admin password is Upgrade-admin-1; the
# realm's master.key in the fixture is a test secret, for this realm only.
#
# Usage: scripts/make-upgrade-fixture.sh [TAG]   (default release-2026-11-stop25)
set -euo pipefail
TAG=${1:-release-2026-11-stop25}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODULES=$(readlink -f "$ROOT/node_modules")
OUT="$ROOT/test/data/upgrade/$TAG.tar"
NODE=$(command -v node)
[ -x /usr/local/bin/node ] && NODE=/usr/local/bin/node
export PATH="$(dirname "$NODE"):$PATH"

WORK=$(mktemp -d /tmp/dirid-fixture-XXXXXX)
SRC="$WORK/src"
SERVER_PID=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  git -C "$ROOT" worktree remove --force "$SRC" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

git -C "$ROOT" worktree add --detach "$SRC" "$TAG" >/dev/null
ln -s "$MODULES" "$SRC/node_modules"
(cd "$SRC" && npm run --silent build)

DATA="$WORK/realm"
CC="FILE:$WORK/cc"
printf 'Upgrade-admin-1\n' > "$WORK/admin.password"
"$NODE" "$SRC/bin/dirid-server.js" init --data-dir "$DATA" --realm UPGRADE.TEST --domain upgrade.test \
  --hostname localhost --admin-password-file "$WORK/admin.password" --idstart 500000 --idmax 699999 >/dev/null

"$NODE" "$SRC/bin/dirid-server.js" start --data-dir "$DATA" --listen 127.0.0.1 --https-port 0 --http-port 0 \
  --kdc-port 0 --kpasswd-port 0 --ldap-port 0 --ldaps-port 0 > "$WORK/server.log" 2>&1 &
SERVER_PID=$!
for _ in $(seq 1 300); do
  grep -qE 'LDAP listening on| server started ' "$WORK/server.log" && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/server.log" >&2; exit 1; }
  sleep 0.1
done
grep -qE 'LDAP listening on| server started ' "$WORK/server.log" || { cat "$WORK/server.log" >&2; exit 1; }

export KRB5_CONFIG="$DATA/krb5.conf" KRB5CCNAME="$CC" XDG_CACHE_HOME="$WORK/cache" HOME="$WORK"
dirid() { "$NODE" "$SRC/bin/dirid.js" -c "$DATA/default.conf" "$@"; }
printf 'Upgrade-admin-1\n' | kinit admin >/dev/null
printf 'Upgrade-idp-secret-1\nUpgrade-idp-secret-1\n' | dirid idp-add testidp --provider keycloak \
  --organization main --base-url idp.upgrade.test --client-id dirid-upgrade --secret >/dev/null
printf 'Alice-pass-1\nAlice-pass-1\n' | dirid user-add alice --first Alice --last Liddell --password >/dev/null
dirid user-add bob --first Bob --last Builder --user-auth-type idp --idp testidp --idp-user-id bob-sub >/dev/null
dirid group-add staff --description 'Staff' >/dev/null
dirid group-add-member staff --users alice --users bob >/dev/null
dirid role-add helpdesk --description 'Help desk' >/dev/null
dirid role-add-privilege helpdesk --privileges 'User Administrators' >/dev/null
dirid role-add-member helpdesk --users alice >/dev/null
dirid host-add app.upgrade.test >/dev/null
dirid service-add HTTP/app.upgrade.test >/dev/null
dirid keytab-get HTTP/app.upgrade.test -k "$WORK/app.keytab" >/dev/null
# the password and the keytab work on the release that made them
printf 'Alice-pass-1\n' | kinit -c "FILE:$WORK/alice.cc" alice >/dev/null
kinit -k -t "$WORK/app.keytab" -c "FILE:$WORK/app.cc" HTTP/app.upgrade.test >/dev/null

kill -TERM "$SERVER_PID"
wait "$SERVER_PID" || true
SERVER_PID=
[ ! -e "$DATA/server.lock" ] || { echo "the server did not stop cleanly" >&2; exit 1; }
mkdir -p "$(dirname "$OUT")"
tar -C "$WORK" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$OUT" realm app.keytab
echo "wrote $OUT ($(du -k "$OUT" | cut -f1) KiB) from $TAG ($(git -C "$ROOT" rev-parse --short "$TAG^{commit}"))"
