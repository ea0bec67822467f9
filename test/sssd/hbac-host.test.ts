/**
 * Host-based access enforced on the hosts (docs/hbac.md): two hosts of the
 * realm, web1 and db1, each SSSD (Debian's 2.8) with the sssd.conf
 * dirid-server writes and its own host keytab (which is who the host is to
 * the realm), in a private namespace (test/support/sssd.ts). PAM's account phase
 * (pamtester acct_mgmt, which every login runs: password, device flow,
 * GSSAPI, SSH key) refuses or allows as hbactest answers, per host and per
 * service: while allow_all is enabled everyone passes; with it disabled, a
 * rule for the group devs on web1 through sshd lets alice and the
 * IdP-linked frank in on web1 through sshd only, not through su, and
 * nowhere on db1, even with alice's right password. A rule change reaches
 * a running SSSD within the stated bound (pam_id_timeout, 5 s).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm, addActiveUser } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { startTestIdp, type TestIdp, idpReference } from '../support/oidc-idp.js';
import { sssdHost, type SssdHost } from '../support/sssd.js';
import { PAM_ID_TIMEOUT } from '../../src/host/sssd-conf.js';

const HOSTS = ['web1.example.test', 'db1.example.test'] as const;

/** The outcome of each `pamtester SERVICE USER acct_mgmt` a script ran, in order: `ok` or `denied`. */
function outcomes(out: string): string[] {
  return [...out.matchAll(/^acct (\S+) (\S+) rc=(\d+)\r?$/gm)].map((m) => `${m[1]} ${m[2]} ${m[3] === '0' ? 'ok' : 'denied'}`);
}
// (the script runs under set -e: a refusal is caught, not the end of it)
const acct = (service: string, user: string) => `rc=0; pamtester ${service} ${user} acct_mgmt >/dev/null 2>&1 || rc=$?; echo "acct ${service} ${user} rc=$rc"`;

describe('host-based access on the hosts: SSSD allows the account phase as hbactest answers', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let idp: TestIdp;
  let idpCa: string;
  const hosts = new Map<string, SssdHost>();
  const run = async (fqdn: string, script: string, onOutput?: (out: string, write: (s: string) => void) => void) => {
    const r = await hosts.get(fqdn)!.exec(script, 90_000, onOutput);
    return { ...r, tail: `${r.out}\n${r.sssdLog.slice(-8000)}` };
  };
  const hbactest = async (user: string, host: string, service: string) => (await admin.call('hbactest', [], { user, host, service })).value as boolean;

  before(async () => {
    idp = await startTestIdp({ accounts: ['frank-sub'] });
    idpCa = join(process.env.TMPDIR ?? '/tmp', `sssd-hbac-idp-ca-${process.pid}.pem`);
    writeFileSync(idpCa, idp.caPem);
    ({ realm, admin } = await startAdminRealm({ idpCaFile: idpCa, idStart: 720_000 }));
    await admin.call('idp_add', ['hostidp'], idpReference(idp));
    for (const u of ['alice', 'bob']) await admin.call('user_add', [u], { first: u, last: 'L', password: `${u}-Pass-1234` });
    await admin.call('user_add', ['frank'], { first: 'Frank', last: 'Idp', user_auth_type: ['idp'], idp: 'hostidp', idp_user_id: 'frank-sub' });
    await admin.call('group_add', ['devs']);
    await admin.call('group_add_member', ['devs'], { users: ['alice', 'frank'] });
    const data = join(realm.dataDir, 'realm');
    for (const fqdn of HOSTS) {
      await admin.call('host_add', [fqdn]);
      const keytab = join(realm.dataDir, `${fqdn}.keytab`);
      writeFileSync(keytab, (await admin.call('keytab_get', [`host/${fqdn}`])).result.keytab as Buffer);
      hosts.set(
        fqdn,
        sssdHost({
          realm: 'EXAMPLE.TEST',
          dataDir: data,
          hostPrincipal: `host/${fqdn}@EXAMPLE.TEST`,
          users: [],
          caFile: join(data, 'ca.crt'),
          keytab,
          pamServices: ['sshd', 'su'],
          // the file dirid-server wrote for hosts, with this host's name and paths, as docs/sssd-host.md says
          sssdConf: ({ keytab: kt, caFile, ccDir }) =>
            readFileSync(join(data, 'sssd.conf'), 'utf8')
              .replaceAll('host/localhost@', `host/${fqdn}@`)
              .replaceAll(join(data, 'host.keytab'), kt)
              .replaceAll(join(data, 'ca.crt'), caFile)
              .replace(/^(\[domain\/[^\]]+\])$/m, `$1\nkrb5_ccname_template = FILE:${ccDir}/krb5cc_%U\ncache_credentials = false\ndebug_level = 6`),
        }),
      );
    }
  });
  after(async () => {
    for (const h of hosts.values()) h.remove();
    await realm?.stop();
    await idp?.stop();
    rmSync(idpCa, { force: true });
  });

  it('dirid-server writes the access order and the refresh that enforce the rules', () => {
    const conf = readFileSync(join(realm.dataDir, 'realm', 'sssd.conf'), 'utf8');
    assert.match(conf, /^ldap_access_order = filter, expire, host, authorized_service$/m);
    assert.match(conf, /^pam_initgroups_scheme = always$/m);
    assert.match(conf, new RegExp(`^pam_id_timeout = ${PAM_ID_TIMEOUT}$`, 'm'));
  });

  it('while allow_all is enabled, every user passes on every host', async () => {
    const r = await run('db1.example.test', [acct('sshd', 'alice'), acct('su', 'bob')].join('\n'));
    assert.deepEqual(outcomes(r.out), ['sshd alice ok', 'su bob ok'], r.tail);
  });

  it('with allow_all disabled, per host and per service, IdP-linked users alike, exactly as hbactest answers', async () => {
    await admin.call('hbacrule_disable', ['allow_all']);
    await admin.call('hbacrule_add', ['devs_ssh_web1']);
    await admin.call('hbacrule_add_user', ['devs_ssh_web1'], { groups: ['devs'] });
    await admin.call('hbacrule_add_host', ['devs_ssh_web1'], { hosts: ['web1.example.test'] });
    await admin.call('hbacrule_add_service', ['devs_ssh_web1'], { hbacsvcs: ['sshd'] });
    const cases = [
      ['sshd', 'alice'],
      ['su', 'alice'],
      ['sshd', 'frank'],
      ['su', 'frank'],
      ['sshd', 'bob'],
    ] as const;
    for (const fqdn of HOSTS) {
      const r = await run(fqdn, cases.map(([s, u]) => acct(s, u)).join('\n'));
      const expected: string[] = [];
      for (const [s, u] of cases) expected.push(`${s} ${u} ${(await hbactest(u, fqdn, s)) ? 'ok' : 'denied'}`);
      assert.deepEqual(outcomes(r.out), expected, `${fqdn}\n${r.tail}`);
    }
    // what hbactest answered, spelled out
    assert.deepEqual(
      await Promise.all(HOSTS.map((h) => hbactest('alice', h, 'sshd'))),
      [true, false],
    );
  });

  it("a correct password does not get alice through on the host the rules refuse her: pam_sss's account phase says no", async () => {
    const r = await run('db1.example.test', 'rc=0; echo alice-Pass-1234 | pamtester sshd alice authenticate acct_mgmt || rc=$?; echo "rc=$rc"');
    assert.match(r.out, /pamtester: successfully authenticated/, r.tail);
    assert.match(r.out, /Permission denied/, r.tail);
    assert.match(r.out, /^rc=1\r?$/m, r.tail);
  });

  it(`a rule change reaches a running SSSD within ${PAM_ID_TIMEOUT} s (pam_id_timeout)`, async () => {
    // bob, refused on web1; once allowed, SSSD answers from the entry it read at most pam_id_timeout ago
    let changed = 0;
    let allowedAfter = -1;
    const script = [
      acct('sshd', 'bob'),
      'echo READY; read go',
      'i=0; while [ $i -lt 40 ]; do if pamtester sshd bob acct_mgmt >/dev/null 2>&1; then echo "ALLOWED"; break; fi; i=$((i+1)); sleep 0.25; done; echo DONE',
    ].join('\n');
    const r = await run('web1.example.test', script, (out, write) => {
      if (changed === 0 && /^READY\r?$/m.test(out)) {
        changed = -1;
        void admin.call('hbacrule_add_user', ['devs_ssh_web1'], { users: ['bob'] }).then(() => {
          changed = performance.now();
          write('\n');
        });
      }
      if (allowedAfter < 0 && changed > 0 && /^ALLOWED\r?$/m.test(out)) allowedAfter = performance.now() - changed;
    });
    assert.deepEqual(outcomes(r.out), ['sshd bob denied'], r.tail);
    assert.match(r.out, /^ALLOWED\r?$/m, r.tail);
    assert.ok(allowedAfter >= 0 && allowedAfter <= (PAM_ID_TIMEOUT + 1.5) * 1000, `allowed ${Math.round(allowedAfter)} ms after the change`);
    assert.equal(await hbactest('bob', 'web1.example.test', 'sshd'), true);
  });
});
