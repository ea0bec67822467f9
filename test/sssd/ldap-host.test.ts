/**
 * A Linux host of the realm as dirid configures it: SSSD with the sssd.conf
 * dirid-server writes for hosts (id_provider = ldap over StartTLS with the
 * host's own key through SASL GSSAPI, auth_provider = krb5 with FAST armor,
 * user private groups derived by SSSD), in a private namespace
 * (test/support/sssd.ts). Users and groups resolve from dirid's LDAP
 * service (getent, id), a password user logs in through pam_sss, and an
 * IdP-linked user logs in with the device flow: the PAM conversation shows
 * the URL and code, the user approves at oidc-provider, and SSSD gets the
 * user's TGT from our KDC.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp, idpReference } from '../support/oidc-idp.js';
import { sssdHost, type SssdHost } from '../support/sssd.js';

const BASE = 700_000;

describe('a host of the realm: SSSD with the LDAP id provider and the krb5 auth provider', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let host: SssdHost;
  let idpCa: string;

  before(async () => {
    idp = await startTestIdp({ accounts: ['frank-sub'] });
    idpCa = join(process.env.TMPDIR ?? '/tmp', `sssd-ldap-idp-ca-${process.pid}.pem`);
    writeFileSync(idpCa, idp.caPem);
    let admin;
    ({ realm, admin } = await startAdminRealm({ idpCaFile: idpCa, idStart: BASE }));
    await admin.call('idp_add', ['hostidp'], idpReference(idp));
    await addActiveUser(admin, 'alice', 'Alice-pw-1234', { first: 'Alice', last: 'Liddell' });
    await admin.call('user_add', ['frank'], { first: 'Frank', last: 'Idp', user_auth_type: ['idp'], idp: 'hostidp', idp_user_id: 'frank-sub' });
    await admin.call('group_add', ['developers']);
    await admin.call('group_add_member', ['developers'], { users: ['alice', 'frank'] });
    const data = join(realm.dataDir, 'realm');
    host = sssdHost({
      realm: 'EXAMPLE.TEST',
      dataDir: data,
      hostPrincipal: 'host/localhost@EXAMPLE.TEST',
      users: [],
      caFile: join(data, 'ca.crt'),
      // the file dirid-server wrote for hosts, with this host's paths
      sssdConf: ({ keytab, caFile, ccDir }) => {
        const text = readFileSync(join(data, 'sssd.conf'), 'utf8')
          .replaceAll(join(data, 'host.keytab'), keytab)
          .replaceAll(join(data, 'ca.crt'), caFile)
          .replace(/^(\[domain\/[^\]]+\])$/m, `$1\nkrb5_ccname_template = FILE:${ccDir}/krb5cc_%U\ncache_credentials = false\ndebug_level = 6`);
        return text;
      },
    });
  });
  after(async () => {
    host?.remove();
    await realm?.stop();
    await idp?.stop();
    rmSync(idpCa, { force: true });
  });

  it('dirid-server wrote an sssd.conf naming its LDAP and KDC ports and the CA its krb5.conf and default.conf name', () => {
    const conf = readFileSync(join(realm.dataDir, 'realm', 'sssd.conf'), 'utf8');
    assert.match(conf, new RegExp(`^ldap_uri = ldap://localhost:${realm.server.ldapPort}$`, 'm'));
    assert.match(conf, new RegExp(`^krb5_server = localhost:${realm.server.kdcPort}$`, 'm'));
    assert.match(conf, /^\[prompting\//m);
    // the files of the data directory agree on the CA: the one beside them
    const ca = join(realm.dataDir, 'realm', 'ca.crt');
    assert.match(conf, new RegExp(`^ldap_tls_cacert = ${ca.replace(/[.]/g, '\\.')}$`, 'm'));
    assert.match(readFileSync(join(realm.dataDir, 'realm', 'krb5.conf'), 'utf8'), new RegExp(`pkinit_anchors = FILE:${ca.replace(/[.]/g, '\\.')}\n`));
    assert.match(readFileSync(join(realm.dataDir, 'realm', 'default.conf'), 'utf8'), new RegExp(`^ca_file = ${ca.replace(/[.]/g, '\\.')}$`, 'm'));
  });

  it('getent and id resolve users, private groups and groups from dirid', async () => {
    const r = await host.exec('getent passwd alice; getent passwd frank; getent group alice; getent group developers; getent group admins; id alice; echo done');
    const tail = `${r.out}\n${r.sssdLog.slice(-6000)}`;
    assert.match(r.out, /^alice:\*:700002:700002:Alice Liddell:\/home\/alice:\/bin\/bash\r?$/m, tail);
    assert.match(r.out, /^frank:\*:700003:700003:Frank Idp:\/home\/frank:\/bin\/bash\r?$/m, tail);
    assert.match(r.out, /^alice:\*:700002:\r?$/m, tail);
    assert.match(r.out, /^developers:\*:700004:(alice,frank|frank,alice)\r?$/m, tail);
    assert.match(r.out, /^admins:\*:700000:admin\r?$/m, tail);
    assert.match(r.out, /uid=700002\(alice\) gid=700002\(alice\) groups=700002\(alice\),700004\(developers\)/, tail);
  });

  it('a password user logs in through pam_sss', async () => {
    let sent = false;
    const r = await host.authenticate('alice', (out, write) => {
      if (!sent && /Password: ?$/m.test(out)) {
        sent = true;
        write('Alice-pw-1234\n');
      }
    });
    assert.match(r.out, /successfully authenticated/, `${r.out}\n${r.sssdLog.slice(-6000)}`);
  });

  it('an IdP-linked user logs in through pam_sss with the device flow', async () => {
    let prompts = 0;
    const r = await host.authenticate('frank', (out, write) => {
      const codes = [...out.matchAll(/Authenticate at (\S+) and press ENTER/g)].map((m) => new URL(m[1]!).searchParams.get('user_code')!);
      if (codes.length > prompts) {
        prompts = codes.length;
        if (prompts === 1) void idp.approveDevice(codes[0]!, 'frank-sub').then(() => write('\n'));
      }
    });
    assert.match(r.out, /successfully authenticated/, `${r.out}\n${r.sssdLog.slice(-6000)}`);
    assert.equal(prompts, 1, r.out);
    assert.ok(realm.log.some((l) => /client=frank@EXAMPLE\.TEST .*outcome=ISSUE/.test(l)), realm.log.filter((l) => l.includes('client=frank@')).join('\n'));
  });
});
