/**
 * SSSD for tests, the way a Linux host logs users in: sssd (Debian's 2.8)
 * with `auth_provider = krb5` against our KDC, FAST armor from the realm's
 * host keytab, the idp client plugin in the krb5.conf its krb5_child reads,
 * and `pam_sss` in a PAM service driven by `pamtester`. Everything runs in a
 * private mount namespace (`unshare -m`): the temporary directory's files
 * are bind-mounted over /etc/sssd, /etc/pam.d, /etc/krb5.conf, /var/lib/sss
 * and /var/log/sssd for sssd and pamtester only, so the machine's own
 * configuration is never read or changed and nothing remains afterwards.
 * Users are resolved by SSSD's files provider from a private passwd file,
 * or, given a domain section (the sssd.conf dirid writes for hosts), by the
 * LDAP id provider from dirid's LDAP service; `exec` then runs getent and id
 * against it through a private nsswitch.conf, whose `sudoers: files sss`
 * sends sudo to SSSD's sudo responder too (with `sudo`, the distribution's
 * own /etc/pam.d files, pam-auth-update's profiles with pam_sss, serve
 * sudo's PAM service, and the machine's /etc/sudoers is read as it is).
 */
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pty, type PtyRun } from './pty.js';

export interface SssdHostOptions {
  realm: string;
  /** the realm's data directory (krb5.conf, host.keytab) */
  dataDir: string;
  /** host principal of the keytab, used for FAST armor */
  hostPrincipal: string;
  /** local users: name and uid */
  users: Array<{ name: string; uid: number }>;
  /** krb5_auth_timeout in seconds (SSSD's default is 6; docs/sssd-host.md recommends more for IdP logins) */
  authTimeout?: number;
  /**
   * The whole sssd.conf instead of the files-provider one: called with the
   * paths of this host's keytab, CA file and ccache directory.
   */
  sssdConf?: (paths: { keytab: string; caFile: string; ccDir: string }) => string;
  /** the realm CA, for an LDAP id provider */
  caFile?: string;
  /** for sudo: the distribution's /etc/pam.d (sudo's service and the common-* files pam-auth-update wrote) beside the test's service */
  sudo?: boolean;
  /** the host's keytab (default the realm's host.keytab, host/localhost's) */
  keytab?: string;
  /** PAM services besides dirid-test, each with the same pam_sss stack (`sshd`, `su`: the names SSSD's access checks see) */
  pamServices?: readonly string[];
}

export interface SssdHost {
  dir: string;
  /**
   * Runs `pamtester <service> <user> authenticate` against a fresh sssd, all
   * in one private mount namespace; `onOutput` sees the PAM conversation.
   */
  authenticate(user: string, onOutput: (out: string, write: (s: string) => void) => void, timeoutMs?: number): Promise<PtyRun & { sssdLog: string }>;
  /**
   * Runs `pamtester <service> <user> OPERATION...` (authenticate, acct_mgmt,
   * open_session, chauthtok...) the same way: every phase of the PAM
   * service goes through pam_sss.
   */
  pam(user: string, operations: readonly string[], onOutput: (out: string, write: (s: string) => void) => void, timeoutMs?: number): Promise<PtyRun & { sssdLog: string }>;
  /**
   * Runs shell commands (getent, id, or pamtester as a user of the host
   * through setpriv) in the namespace once sssd answers; their output and
   * sssd's log. `onOutput` may answer their prompts.
   */
  exec(commands: string, timeoutMs?: number, onOutput?: (out: string, write: (s: string) => void) => void): Promise<PtyRun & { sssdLog: string }>;
  remove(): void;
}

/** Answers the prompts that appear on a host's terminal, in order, each once (an onOutput for authenticate, pam and exec). */
export function answers(steps: Array<[RegExp, string]>): (out: string, write: (s: string) => void) => void {
  let next = 0;
  let seen = 0;
  return (out, write) => {
    while (next < steps.length) {
      const [prompt, answer] = steps[next]!;
      const m = prompt.exec(out.slice(seen));
      if (!m) return;
      seen += m.index + m[0].length;
      next++;
      write(answer);
    }
  };
}

/** Types `pw` at the first password prompt. */
export const typePassword = (pw: string): ((out: string, write: (s: string) => void) => void) => answers([[/Password: ?$/m, `${pw}\n`]]);

export const PAM_SERVICE = 'dirid-test';

export function sssdHost(o: SssdHostOptions): SssdHost {
  const dir = mkdtempSync(join(tmpdir(), 'dirid-sssd-'));
  const etcSssd = join(dir, 'etc-sssd');
  const pamd = join(dir, 'pam.d');
  const lib = join(dir, 'lib-sss');
  const logDir = join(dir, 'log');
  for (const d of [etcSssd, pamd, logDir, join(dir, 'cc'), ...['db', 'pipes/private', 'mc', 'pubconf/krb5.include.d', 'gpo_cache', 'secrets', 'deskprofile'].map((s) => join(lib, s))]) mkdirSync(d, { recursive: true });
  // krb5_child writes the user's ccache as the user: the directory must be reachable and the cache directory sticky and writable, like /tmp
  chmodSync(dir, 0o755);
  chmodSync(join(dir, 'cc'), 0o1777);
  writeFileSync(join(dir, 'passwd'), o.users.map((u) => `${u.name}:x:${u.uid}:${u.uid}:${u.name}:/nonexistent:/usr/sbin/nologin\n`).join(''));
  writeFileSync(join(dir, 'group'), o.users.map((u) => `${u.name}:x:${u.uid}:\n`).join(''));
  const krb5conf = readFileSync(join(o.dataDir, 'krb5.conf'), 'utf8');
  // the KDC as the realm's krb5.conf names it: SSSD asks it directly (without it SSSD looks for DNS SRV records, finds none and goes offline)
  const kdc = /^\s*kdc = (\S+)/m.exec(krb5conf)?.[1];
  if (!kdc) throw new Error('the realm krb5.conf names no KDC');
  writeFileSync(join(dir, 'krb5.conf'), krb5conf);
  copyFileSync(o.keytab ?? join(o.dataDir, 'host.keytab'), join(dir, 'host.keytab'));
  chmodSync(join(dir, 'host.keytab'), 0o600);
  if (o.caFile) copyFileSync(o.caFile, join(dir, 'ca.crt'));
  writeFileSync(join(dir, 'nsswitch.conf'), 'passwd: files sss\ngroup: files sss\nnetgroup: sss\nservices: files sss\nshadow: files\nhosts: files\nsudoers: files sss\n');
  const conf = o.sssdConf ? o.sssdConf({ keytab: join(dir, 'host.keytab'), caFile: join(dir, 'ca.crt'), ccDir: join(dir, 'cc') }) : `[sssd]
services = nss, pam
domains = test

[nss]

[pam]

[domain/test]
id_provider = files
passwd_files = ${join(dir, 'passwd')}
group_files = ${join(dir, 'group')}
auth_provider = krb5
krb5_realm = ${o.realm}
krb5_server = ${kdc}
krb5_use_fast = demand
krb5_fast_principal = ${o.hostPrincipal}
krb5_keytab = ${join(dir, 'host.keytab')}
krb5_validate = false
krb5_auth_timeout = ${o.authTimeout ?? 6}
krb5_ccname_template = FILE:${join(dir, 'cc')}/krb5cc_%U
krb5_store_password_if_offline = false
cache_credentials = false
`;
  writeFileSync(join(etcSssd, 'sssd.conf'), conf, { mode: 0o600 });
  chmodSync(join(etcSssd, 'sssd.conf'), 0o600);
  if (o.sudo) for (const f of readdirSync('/etc/pam.d')) if (statSync(join('/etc/pam.d', f)).isFile()) copyFileSync(join('/etc/pam.d', f), join(pamd, f));
  // every phase through pam_sss, as pam-auth-update sets a host up (without the local pam_unix beside it)
  for (const service of [PAM_SERVICE, ...(o.pamServices ?? [])]) {
    writeFileSync(join(pamd, service), 'auth required pam_sss.so\naccount required pam_sss.so\npassword required pam_sss.so\nsession required pam_sss.so\n');
  }
  const script = join(dir, 'run.sh');
  const commands = join(dir, 'commands.sh');
  writeFileSync(
    script,
    `#!/bin/sh
# runs inside the private mount and UTS namespaces: the host is called localhost,
# as the realm's ldap/ and host/ principals name it (libldap names a server it
# reaches over loopback by the machine's own name otherwise); a host is who its keytab says
set -e
hostname localhost
mount --bind ${etcSssd} /etc/sssd
mount --bind ${pamd} /etc/pam.d
mount --bind ${join(dir, 'krb5.conf')} /etc/krb5.conf
mount --bind ${join(dir, 'nsswitch.conf')} /etc/nsswitch.conf
mount --bind ${lib} /var/lib/sss
mount --bind ${logDir} /var/log/sssd
mount -t tmpfs tmpfs /run
rm -f /var/lib/sss/pipes/pam /var/lib/sss/pipes/nss /var/lib/sss/mc/*
/usr/sbin/sssd -i -d 0x3ff0 --logger=files &
SSSD=$!
trap 'kill $SSSD 2>/dev/null; wait $SSSD 2>/dev/null' EXIT
i=0
while [ ! -S /var/lib/sss/pipes/pam ] || [ ! -S /var/lib/sss/pipes/nss ]; do i=$((i+1)); [ $i -gt 100 ] && { echo "sssd did not start"; exit 3; }; sleep 0.1; done
# and the sudo responder, when sssd.conf asks for it
if grep -q '^services *=.*sudo' /etc/sssd/sssd.conf; then
  while [ ! -S /var/lib/sss/pipes/sudo ]; do i=$((i+1)); [ $i -gt 100 ] && { echo "the sudo responder did not start"; exit 3; }; sleep 0.1; done
fi
# pam_sss asks the responder what to prompt for (here: the idp challenge) only where this file says it may
touch /var/lib/sss/pubconf/pam_preauth_available
if [ "$1" = --exec ]; then . ${commands}; else pamtester -v ${PAM_SERVICE} "$@"; fi
`,
    { mode: 0o755 },
  );
  const run = async (arg: string, onOutput: (out: string, write: (s: string) => void) => void, timeoutMs: number) => {
    // a PID namespace too: when the script ends or is killed, sssd and its children go with it
    const r = await pty(`unshare --mount --uts --propagation private --pid --fork --kill-child ${script} ${arg}`, {}, onOutput, timeoutMs);
    let sssdLog = '';
    for (const f of readdirSync(logDir)) {
      try {
        sssdLog += `==> ${f}\n${readFileSync(join(logDir, f), 'utf8')}`;
      } catch {
        // not written
      }
    }
    return { ...r, sssdLog };
  };
  return {
    dir,
    authenticate: (user, onOutput, timeoutMs = 90_000) => run(`${user} authenticate`, onOutput, timeoutMs),
    pam: (user, operations, onOutput, timeoutMs = 90_000) => run([user, ...operations].join(' '), onOutput, timeoutMs),
    async exec(text, timeoutMs = 60_000, onOutput = () => {}) {
      writeFileSync(commands, text + '\n');
      return run('--exec', onOutput, timeoutMs);
    },
    remove() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
