/**
 * SSH public keys in the directory (objects/ssh-public-key.ts): `--sshpubkey`
 * on users and hosts, several per entry, checked and stored canonically,
 * shown by fingerprints that equal `ssh-keygen -l`'s for keys ssh-keygen
 * made here; bad input (truncated data, an unknown type, DSA, a private key
 * pasted by mistake) refused with a message that never repeats it, nor
 * does the log. Who may set them: administrators and a User Administrator
 * for users they manage, not the user (docs/access.md). Served over LDAP
 * as SSSD's ldap provider reads them, checked with OpenLDAP's ldapsearch
 * bound as a host with its keytab (SASL GSSAPI): a user's `sshPublicKey`,
 * and a host found by `(&(objectClass=ipHost)(fqdn=H))`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { grantRole, startAdminRealm, userSession, type TestRealm, addActiveUser } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { runTool } from '../support/mit-tools.js';
import { ldapTools, type LdapTools } from '../support/ldap-tools.js';
import { rpcError } from '../support/expect.js';

const BASE = 'dc=example,dc=test';

interface Key {
  line: string;
  /** ssh-keygen -l: `SHA256:… comment (TYPE)` */
  fingerprint: string;
  type: string;
  privateKey: string;
}

describe('SSH public keys of users and hosts', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let tools: LdapTools;
  const keys: Record<string, Key> = {};

  /** A key pair made by ssh-keygen; its fingerprint as ssh-keygen -l prints it. */
  async function keygen(name: string, args: string[], comment: string): Promise<Key> {
    const dir = join(realm.dataDir, 'ssh');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, name);
    const made = await runTool('ssh-keygen', ['-q', ...args, '-N', '', '-C', comment, '-f', file], {});
    assert.equal(made.code, 0, made.stderr);
    const listed = await runTool('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${file}.pub`], {});
    assert.equal(listed.code, 0, listed.stderr);
    // "256 SHA256:xxx comment (ED25519)"
    const m = /^\d+ (SHA256:\S+) (.*) \((\w+)\)\n$/.exec(listed.stdout);
    assert.ok(m, listed.stdout);
    const line = readFileSync(`${file}.pub`, 'utf8').trim();
    return { line, fingerprint: m[1]!, type: line.split(' ')[0]!, privateKey: readFileSync(file, 'utf8') };
  }

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    tools = ldapTools(realm);
    keys.ed = await keygen('ed', ['-t', 'ed25519'], 'alice@laptop');
    keys.ec = await keygen('ec', ['-t', 'ecdsa', '-b', '384'], 'alice@desktop');
    keys.rsa = await keygen('rsa', ['-t', 'rsa', '-b', '2048'], 'alice old key');
    keys.host = await keygen('host', ['-t', 'ed25519'], 'root@web');
    await addActiveUser(admin, 'alice', 'Alice-pass-1', { first: 'Alice', last: 'Liddell' });
    await addActiveUser(admin, 'uadm', 'Uadm-pass-1', { first: 'U', last: 'Adm' });
    await grantRole(admin, 'helpdesk', 'User Administrators', { users: ['uadm'] });
  });
  after(async () => realm.stop());

  it('user-mod --sshpubkey takes several keys; user-show shows their fingerprints as ssh-keygen -l does', async () => {
    const mod = await admin.call('user_mod', ['alice'], { sshpubkey: [keys.ed!.line, `  ${keys.ec!.line.replace(' ', '   ')}  `, keys.rsa!.line] });
    const expected = [keys.ed!, keys.ec!, keys.rsa!].map((k) => `${k.fingerprint} ${k.line.split(' ').slice(2).join(' ')} (${k.type})`);
    assert.deepEqual(mod.result.sshpubkeyfp, expected);
    // the key lines themselves only with --all, as given (blanks made single)
    assert.equal(mod.result.sshpublickey, undefined);
    const shown = await admin.call('user_show', ['alice'], { all: true });
    assert.deepEqual(shown.result.sshpublickey, [keys.ed!.line, keys.ec!.line, keys.rsa!.line]);
    assert.deepEqual(shown.result.sshpubkeyfp, expected);
    assert.ok(shown.result.objectclass.includes('ldapPublicKey'));
  });

  it('takes the FIDO security-key types, with the fingerprints ssh-keygen -l gives them', async () => {
    // made here: ssh-keygen makes these only with a security key attached (PROTOCOL.u2f's public key forms)
    const str = (b: Buffer | string) => {
      const v = Buffer.from(b);
      const n = Buffer.alloc(4);
      n.writeUInt32BE(v.length);
      return Buffer.concat([n, v]);
    };
    const ed = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' });
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
    const point = Buffer.concat([Buffer.from([4]), Buffer.from(ec.x!, 'base64url'), Buffer.from(ec.y!, 'base64url')]);
    const lines = [
      `sk-ssh-ed25519@openssh.com ${Buffer.concat([str('sk-ssh-ed25519@openssh.com'), str(Buffer.from(ed.x!, 'base64url')), str('ssh:')]).toString('base64')} yubikey`,
      `sk-ecdsa-sha2-nistp256@openssh.com ${Buffer.concat([str('sk-ecdsa-sha2-nistp256@openssh.com'), str('nistp256'), str(point), str('ssh:')]).toString('base64')} token`,
    ];
    const expected: string[] = [];
    for (const [i, line] of lines.entries()) {
      const file = join(realm.dataDir, `sk${i}.pub`);
      writeFileSync(file, `${line}\n`);
      const listed = await runTool('ssh-keygen', ['-l', '-E', 'sha256', '-f', file], {});
      assert.equal(listed.code, 0, listed.stderr);
      const m = /^\d+ (SHA256:\S+) /.exec(listed.stdout);
      assert.ok(m, listed.stdout);
      expected.push(`${m[1]} ${line.split(' ')[2]} (${line.split(' ')[0]})`);
    }
    await admin.call('user_add', ['fido'], { first: 'Fi', last: 'Do', sshpubkey: lines });
    assert.deepEqual((await admin.call('user_show', ['fido'], {})).result.sshpubkeyfp, expected);
  });

  it('refuses bad keys with a message that does not repeat them', async () => {
    const ed = keys.ed!.line;
    const [type, data] = ed.split(' ') as [string, string];
    const oneLinePrivate = keys.ed!.privateKey.replace(/\n/g, ' ');
    const privateBody = keys.ed!.privateKey.split('\n')[1]!;
    const cases: Array<[string, RegExp]> = [
      [`${type} ${data.slice(0, 40)}`, /not base64 \(or is cut short\)|truncated or damaged/],
      [`${type} ${data.slice(0, 48)}`, /truncated or damaged/],
      [`ssh-foo ${data} x`, /unknown key type/],
      [`ssh-dss ${data}`, /DSA keys/],
      [`ssh-rsa ${data}`, /key type does not match/],
      [oneLinePrivate, /this is a private key/],
      [privateBody, /this is a private key/],
      [keys.ed!.privateKey, /control characters|private key/],
      [`no-such-option ${ed}`, /options name one sshd does not know/],
    ];
    for (const [value, why] of cases) {
      const { http, response } = await admin.raw('user_mod', ['alice'], { sshpubkey: [value] });
      assert.equal(response.error?.name, 'ValidationError', `${value.slice(0, 30)}: ${http.body}`);
      assert.match(response.error!.message, why);
      assert.match(response.error!.message, /^invalid 'sshpubkey': /);
      for (const piece of [data.slice(0, 40), privateBody.slice(0, 40), 'ssh-foo', 'no-such-option']) assert.ok(!http.body.includes(piece), `${piece} came back: ${http.body}`);
    }
    // nor through --addattr, nor in the log
    const { response } = await admin.raw('user_mod', ['alice'], { addattr: [`sshPublicKey=${oneLinePrivate}`] });
    assert.match(response.error!.message, /this is a private key/);
    assert.ok(!realm.log.some((l) => l.includes(privateBody.slice(0, 40))));
    // what was stored is unchanged
    assert.equal((await admin.call('user_show', ['alice'], {})).result.sshpubkeyfp.length, 3);
  });

  it('takes authorized_keys options on a user key, refuses the same key twice, and drops the class with the last key', async () => {
    const withOptions = `from="10.0.0.0/8,192.0.2.1",no-pty ${keys.ed!.line}`;
    const r = await admin.call('user_mod', ['alice'], { sshpubkey: [withOptions], all: true });
    assert.deepEqual(r.result.sshpublickey, [withOptions]);
    const twice = await rpcError(admin.call('user_mod', ['alice'], { sshpubkey: [keys.ed!.line, `${keys.ed!.line.split(' ').slice(0, 2).join(' ')} other comment`] }));
    assert.match(twice.message, new RegExp(`the key ${keys.ed!.fingerprint.replace(/[+/]/g, '\\$&')} is given twice`));
    const cleared = await admin.call('user_mod', ['alice'], { sshpubkey: [], all: true });
    assert.equal(cleared.result.sshpublickey, undefined);
    assert.ok(!cleared.result.objectclass.includes('ldapPublicKey'));
    await admin.call('user_mod', ['alice'], { sshpubkey: [keys.ed!.line] });
  });

  it('user-add --sshpubkey; a User Administrator sets the keys of users they manage, not an administrator\'s; a user not their own', async () => {
    const added = await admin.call('user_add', ['bob'], { first: 'Bob', last: 'B', sshpubkey: [keys.rsa!.line] });
    assert.deepEqual(added.result.sshpubkeyfp, [`${keys.rsa!.fingerprint} alice old key (ssh-rsa)`]);
    const helpdesk = await userSession(realm, 'uadm', 'Uadm-pass-1');
    const set = await helpdesk.call('user_mod', ['bob'], { sshpubkey: [keys.ec!.line] });
    assert.deepEqual(set.result.sshpubkeyfp, [`${keys.ec!.fingerprint} alice@desktop (ecdsa-sha2-nistp384)`]);
    const onAdmin = await rpcError(helpdesk.call('user_mod', ['admin'], { sshpubkey: [keys.ec!.line] }));
    assert.equal(onAdmin.code, 2100);
    const alice = await userSession(realm, 'alice', 'Alice-pass-1');
    const own = await rpcError(alice.call('user_mod', ['alice'], { sshpubkey: [keys.ec!.line] }));
    assert.equal(own.code, 2100);
  });

  it('host-mod --sshpubkey takes host keys, without options', async () => {
    await admin.call('host_add', ['web.example.test'], {});
    const r = await admin.call('host_mod', ['web.example.test'], { sshpubkey: [keys.host!.line], all: true });
    assert.deepEqual(r.result.sshpubkeyfp, [`${keys.host!.fingerprint} root@web (ssh-ed25519)`]);
    assert.ok(r.result.objectclass.includes('ipHost') && r.result.objectclass.includes('ldapPublicKey'));
    const withOptions = await rpcError(admin.call('host_mod', ['web.example.test'], { sshpubkey: [`no-pty ${keys.host!.line}`] }));
    assert.match(withOptions.message, /a host key takes no options/);
  });

  it('serves the keys over LDAP as SSSD reads them: a host bound with its keytab finds a user\'s sshPublicKey and a host by ipHost and fqdn', async () => {
    await admin.call('host_add', ['client.example.test'], {});
    const kt = join(realm.dataDir, 'client.keytab');
    const got = await admin.call('keytab_get', ['host/client.example.test'], {});
    writeFileSync(kt, got.result.keytab as Buffer);
    const cc = `FILE:${join(realm.dataDir, 'client.cc')}`;
    const k = await runTool('kinit', ['-k', '-t', kt, '-c', cc, 'host/client.example.test'], tools.env);
    assert.equal(k.code, 0, k.stderr);
    const search = async (base: string, filter: string, attrs: string[]) => {
      const r = await tools.run('ldapsearch', ['-LLL', '-o', 'ldif-wrap=no', '-Y', 'GSSAPI', '-ZZ', '-H', realm.ldapUrl, '-b', base, filter, ...attrs], { env: { KRB5CCNAME: cc } });
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    };
    const user = await search(`cn=users,cn=accounts,${BASE}`, '(&(objectClass=posixAccount)(uid=alice))', ['uid', 'sshPublicKey']);
    assert.match(user, new RegExp(`^sshPublicKey: ${keys.ed!.line.replace(/[+/]/g, '\\$&')}$`, 'm'));
    const host = await search(`cn=computers,cn=accounts,${BASE}`, '(&(objectClass=ipHost)(fqdn=web.example.test))', ['cn', 'fqdn', 'sshPublicKey']);
    assert.match(host, /^dn: fqdn=web\.example\.test,cn=computers,cn=accounts,dc=example,dc=test$/m);
    assert.match(host, new RegExp(`^sshPublicKey: ${keys.host!.line.replace(/[+/]/g, '\\$&')}$`, 'm'));
    // a host without keys is no ipHost: SSSD finds nothing for it
    assert.equal(await search(`cn=computers,cn=accounts,${BASE}`, '(&(objectClass=ipHost)(fqdn=client.example.test))', ['cn']), '');
  });
});
