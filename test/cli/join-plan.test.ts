/**
 * The rules of `dirid join` that need no root: the files it writes for a
 * realm and a host (every one naming the CA at the same path; the host's
 * own principal in sssd.conf; the account check asked of LDAP at each
 * login), the nsswitch edit, the check of the PAM order, a second plan
 * against a joined host changing nothing, the realm's facts from DNS
 * records, the CA fingerprint's forms, and the record that lets `dirid
 * leave` put files back.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SrvRecord } from 'node:dns';
import { spawnSync } from 'node:child_process';
import { joinFiles, pendingChanges, lineDiff } from '../../src/cli/join-plan.js';
import { discoverRealm, type DnsLookup } from '../../src/cli/join-facts.js';
import { normalizeFingerprint } from '../../src/cli/join-trust.js';
import { StateDir, type JoinState } from '../../src/cli/join-state.js';
import { withSss } from '../../src/host/nsswitch.js';
import { pamSssFirst, PAM_PROFILE_TEXT } from '../../src/host/pam-profile.js';
import { HOST_PATHS, type RealmFacts } from '../../src/host/realm-facts.js';
import { CliError } from '../../src/cli/errors.js';

const FACTS: RealmFacts = {
  realm: 'EXAMPLE.TEST',
  domain: 'example.test',
  baseDn: 'dc=example,dc=test',
  servers: [
    { hostname: 'ipa1.example.test', https: 443, kdc: 88, kpasswd: 464, ldap: 389 },
    { hostname: 'ipa2.example.test', https: 8443, kdc: 8088, kpasswd: 8464, ldap: 8389 },
  ],
};
const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

/** Debian 12's /etc/nsswitch.conf once libnss-sss and libsss-sudo are installed. */
const DEBIAN_NSSWITCH = `# /etc/nsswitch.conf
passwd:         files systemd sss
group:          files systemd sss
shadow:         files systemd sss
gshadow:        files systemd

hosts:          files dns
netgroup:       nis sss
sudoers: files  sss
`;

const STOCK_COMMON_AUTH = `auth	[success=2 default=ignore]	pam_unix.so nullok
auth	[success=1 default=ignore]	pam_sss.so use_first_pass
auth	requisite			pam_deny.so
auth	required			pam_permit.so
`;

function filesFor(read: (p: string) => string | null = (p) => (p === HOST_PATHS.nsswitch ? DEBIAN_NSSWITCH : null)) {
  return joinFiles({ facts: FACTS, fqdn: 'client.example.test', caPem: CA, read });
}

describe('dirid join: the files of a joined host', () => {
  it('every file names the CA at /etc/dirid/ca.crt, where the CA is written', () => {
    const files = filesFor();
    const named = files.flatMap((f) => [...f.after.matchAll(/(?:FILE:|= )(\/\S*\.crt)/g)].map((m) => `${f.path}: ${m[1]}`));
    assert.deepEqual(named, ['/etc/dirid/default.conf: /etc/dirid/ca.crt', '/etc/krb5.conf: /etc/dirid/ca.crt', '/etc/sssd/sssd.conf: /etc/dirid/ca.crt']);
    assert.equal(files.find((f) => f.path === '/etc/dirid/ca.crt')?.after, CA);
  });

  it('sssd.conf: the host reads and armors as itself, every server named, the account asked of LDAP at each login', () => {
    const sssd = filesFor().find((f) => f.path === '/etc/sssd/sssd.conf')!;
    assert.equal(sssd.mode, 0o600);
    assert.match(sssd.after, /^ldap_sasl_authid = host\/client\.example\.test@EXAMPLE\.TEST$/m);
    assert.match(sssd.after, /^krb5_fast_principal = host\/client\.example\.test@EXAMPLE\.TEST$/m);
    assert.match(sssd.after, /^ldap_uri = ldap:\/\/ipa1\.example\.test, ldap:\/\/ipa2\.example\.test:8389$/m);
    assert.match(sssd.after, /^krb5_server = ipa1\.example\.test, ipa2\.example\.test:8088$/m);
    assert.match(sssd.after, /^services = nss, pam, ssh, sudo$/m);
    assert.match(sssd.after, /^pam_initgroups_scheme = always$/m);
    assert.match(sssd.after, /^ldap_access_order = filter, expire, host, authorized_service$/m);
    assert.match(sssd.after, /^ldap_access_filter = \(!\(nsAccountLock=TRUE\)\)$/m);
  });

  it('krb5.conf: the realm, every KDC, the idp plugin; default.conf: the first server', () => {
    const files = filesFor();
    const krb5 = files.find((f) => f.path === '/etc/krb5.conf')!.after;
    assert.match(krb5, /default_realm = EXAMPLE\.TEST/);
    assert.match(krb5, /kdc = ipa1\.example\.test\n {2}kdc = ipa2\.example\.test:8088\n/);
    assert.match(krb5, /module = idp:\/usr\/lib\/x86_64-linux-gnu\/sssd\/modules\/sssd_krb5_idp_plugin\.so/);
    assert.match(files.find((f) => f.path === '/etc/dirid/default.conf')!.after, /^xmlrpc_uri = https:\/\/ipa1\.example\.test\/dirid\/xml$/m);
  });

  it("Debian's nsswitch.conf already has sss for passwd, group and sudoers: unchanged; a bare one gets them", () => {
    assert.equal(withSss(DEBIAN_NSSWITCH), DEBIAN_NSSWITCH);
    assert.equal(withSss('passwd: files # local\ngroup: files\n'), 'passwd: files sss # local\ngroup: files sss\nsudoers:        files sss\n');
  });

  it('a second plan against the files the first wrote changes nothing', () => {
    const first = filesFor();
    const on = new Map(first.map((f) => [f.path, f.after]));
    const second = filesFor((p) => on.get(p) ?? null);
    assert.deepEqual(pendingChanges(second), []);
    assert.equal(pendingChanges(first).length, first.length - 1, 'all but nsswitch.conf are new');
  });

  it('the PAM order: pam_sss first once, as the profile makes it; not as Debian ships it', () => {
    assert.equal(pamSssFirst(STOCK_COMMON_AUTH), false);
    assert.equal(pamSssFirst('auth\t[success=2 new_authtok_reqd=done user_unknown=ignore authinfo_unavail=ignore default=die]\tpam_sss.so forward_pass\nauth\t[success=1 default=ignore]\tpam_unix.so nullok try_first_pass\n'), true);
    assert.match(PAM_PROFILE_TEXT, /^Priority: 320$/m, 'above unix (256), so pam_sss prompts first');
    assert.match(PAM_PROFILE_TEXT, /^Conflicts: sss$/m);
  });

  it('lineDiff shows the lines removed and added', () => {
    assert.equal(lineDiff('a\nb\nc\n', 'a\nB\nc\nd\n'), '+B\n-b\n+d');
  });
});

describe('dirid join: the realm from DNS', () => {
  const records: Record<string, SrvRecord[]> = {
    '_dirid._tcp.example.test': [{ name: 'ipa1.example.test', port: 8443, priority: 0, weight: 100 }],
    '_kerberos._udp.example.test': [{ name: 'ipa1.example.test', port: 8088, priority: 0, weight: 100 }],
    '_kpasswd._udp.example.test': [{ name: 'ipa1.example.test', port: 8464, priority: 0, weight: 100 }],
    '_ldap._tcp.example.test': [{ name: 'ipa1.example.test', port: 8389, priority: 0, weight: 100 }],
  };
  const dns = (txt: string[][] = [['CORP.TEST']]): DnsLookup => ({
    resolveSrv: async (n) => {
      const r = records[n];
      if (!r) throw Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' });
      return r;
    },
    resolveTxt: async () => txt,
  });

  it('servers and ports from the SRV records, the realm from the _kerberos TXT record, the domain from the host name', async () => {
    const f = await discoverRealm({ fqdn: 'client.example.test' }, dns());
    assert.deepEqual(f, { realm: 'CORP.TEST', domain: 'example.test', baseDn: 'dc=example,dc=test', servers: [{ hostname: 'ipa1.example.test', https: 8443, kdc: 8088, kpasswd: 8464, ldap: 8389 }] });
  });

  it('--server first, with the usual ports when no record names it; --realm wins', async () => {
    const f = await discoverRealm({ fqdn: 'client.example.test', server: 'ipa9.example.test:9443', realm: 'EXAMPLE.TEST' }, dns());
    assert.deepEqual(f.servers[0], { hostname: 'ipa9.example.test', https: 9443, kdc: 88, kpasswd: 464, ldap: 389 });
    assert.equal(f.servers[1]?.hostname, 'ipa1.example.test');
    assert.equal(f.realm, 'EXAMPLE.TEST');
  });

  it('no record and no --server: a clear error', async () => {
    await assert.rejects(discoverRealm({ fqdn: 'client.other.test' }, dns()), (e: unknown) => e instanceof CliError && /no dirid server found: DNS has no _dirid\._tcp\.other\.test SRV record; give --server HOST/.test(e.message));
  });
});

describe('dirid join: the CA fingerprint', () => {
  it('takes the forms openssl and node print, colons optional', () => {
    const hex = 'ab'.repeat(32);
    const want = 'AB:'.repeat(31) + 'AB';
    assert.equal(normalizeFingerprint(hex), want);
    assert.equal(normalizeFingerprint(`SHA256 Fingerprint=${want}`), want);
    assert.equal(normalizeFingerprint(`sha256:${hex}`), want);
    assert.throws(() => normalizeFingerprint('ab:cd'), /expected the CA certificate's SHA-256 fingerprint/);
  });
});

describe('dirid join: the record dirid leave undoes', () => {
  it('a file saved before it changed is put back with its mode; a file the join made is removed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'dirid-join-state-'));
    try {
      const existing = join(dir, 'existing.conf');
      const made = join(dir, 'made.conf');
      writeFileSync(existing, 'as it was\n', { mode: 0o640 });
      const state = new StateDir(join(dir, 'state'));
      const record: JoinState = { version: 1, realm: 'EXAMPLE.TEST', domain: 'example.test', host: 'client.example.test', status: 'joining', files: [], dirs: [], keytabExisted: false };
      state.save(record, existing);
      state.save(record, made);
      state.save(record, existing);
      writeFileSync(existing, 'joined\n', { mode: 0o600 });
      writeFileSync(made, 'new\n');
      assert.deepEqual(state.read()?.files.map((f) => [f.path, f.existed]), [
        [existing, true],
        [made, false],
      ]);
      state.restore(state.read()!);
      assert.equal(readFileSync(existing, 'utf8'), 'as it was\n');
      assert.equal(statSync(existing).mode & 0o777, 0o640);
      assert.equal(existsSync(made), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('dirid join: what it refuses before it touches anything', () => {
  const dirid = (...args: string[]) => spawnSync(process.execPath, [new URL('../../bin/dirid.js', import.meta.url).pathname, ...args], { encoding: 'utf8', env: { ...process.env, DIRID_DNS_SERVER: '127.0.0.1:9' } });

  it('no CA to trust the server by: never blindly', () => {
    const r = dirid('join', '--dry-run', '--server', 'ipa1.example.test');
    assert.equal(r.status, 1);
    assert.match(r.stderr, /dirid join trusts the server only through its CA: give --ca-file FILE .* or --ca-fingerprint SHA256/);
  });

  it('both ways of trusting, or both ways of logging in: one of each', () => {
    assert.match(dirid('join', '--dry-run', '--ca-file', 'a', '--ca-fingerprint', 'b').stderr, /give --ca-file or --ca-fingerprint, not both/);
    assert.match(dirid('join', '--dry-run', '--ca-file', 'a', '--otp', '--principal', 'admin').stderr, /give --otp .* or --principal .*, not both/);
  });
});
