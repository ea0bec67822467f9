/**
 * A Debian host joined with `dirid join`, tested as a host really is: the
 * host (test/support/debian-host.ts) starts from the distribution's files
 * (the PAM stack pam-auth-update makes from the installed profiles,
 * openssh-server's sshd_config) with a real sshd already running; `dirid
 * join` runs there as root, finding the realm through DNS SRV records (the
 * ones dirid-server writes to dns-srv.zone, served by dnsmasq), trusting
 * the server by its CA's fingerprint and enrolling with the one-time
 * password an administrator made (`host-add --random`).
 * Then users log in over `ssh` from outside the host as users would: a
 * realm password user and a local one (keyboard-interactive), an IdP user
 * through the device flow (the URL and code shown, approved at the test
 * IdP), `login`, `su` and `sudo` at the console, GSSAPI with a ticket got outside, an SSH key
 * from the directory; with allow_all disabled, the host-based access rules
 * decide (docs/hbac.md): a rule for alice through sshd lets her in over
 * ssh with GSSAPI and her key, not through su, and refuses dave's key and
 * the IdP user after the device flow; a user
 * disabled in dirid while a process of theirs runs on the host is refused
 * at the next login on every path; `dirid leave` puts /etc back as it was.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm, addActiveUser } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { startTestIdp, idpReference, type TestIdp } from '../support/oidc-idp.js';
import { startSrvDns, type SrvDns, type SrvRecord } from '../support/srv-dns.js';
import { freeTcpPort, startDebianHost, type DebianHost } from '../support/debian-host.js';
import { pty, type PtyRun } from '../support/pty.js';
import { PAM_ID_TIMEOUT } from '../../src/host/sssd-conf.js';

const HOST = 'client.example.test';
const SERVER = 'dirid.example.test';
const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

/** The SRV and TXT records of a dns-srv.zone file. */
function zoneRecords(text: string): { srv: SrvRecord[]; txt: Array<{ name: string; text: string }> } {
  const origin = /^\$ORIGIN (\S+?)\.?$/m.exec(text)![1]!;
  const srv: SrvRecord[] = [];
  const txt: Array<{ name: string; text: string }> = [];
  for (const line of text.split('\n')) {
    const s = /^(\S+)\s+\d+\s+IN\s+SRV\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+?)\.?$/.exec(line);
    if (s) srv.push({ name: `${s[1]}.${origin}`, priority: Number(s[2]), weight: Number(s[3]), port: Number(s[4]), target: s[5]! });
    const t = /^(\S+)\s+\d+\s+IN\s+TXT\s+"([^"]*)"$/.exec(line);
    if (t) txt.push({ name: `${t[1]}.${origin}`, text: t[2]! });
  }
  return { srv, txt };
}

/** Files of two digests of /etc that differ. */
function differences(a: Map<string, string>, b: Map<string, string>): string[] {
  const out: string[] = [];
  for (const k of new Set([...a.keys(), ...b.keys()])) if (a.get(k) !== b.get(k)) out.push(`${k}: ${a.get(k) ?? '(none)'} -> ${b.get(k) ?? '(none)'}`);
  return out;
}

describe('a Debian host joined with dirid join: logins over ssh and at the console, GSSAPI, SSH keys, a disabled user, dirid leave', () => {
  let idp: TestIdp;
  let idpCa: string;
  let realm: TestRealm;
  let admin: RpcSession;
  let dns: SrvDns;
  let host: DebianHost;
  let sshPort: number;
  let fingerprint: string;
  let outsideKrb5: string;
  let stock: Map<string, string>;
  let joined: Map<string, string>;
  let otp: string;

  before(async () => {
    idp = await startTestIdp({ accounts: ['frank-sub'] });
    idpCa = join(process.env.TMPDIR ?? '/tmp', `join-idp-ca-${process.pid}.pem`);
    writeFileSync(idpCa, idp.caPem);
    ({ realm, admin } = await startAdminRealm({ idpCaFile: idpCa, idStart: 730_000, hostname: SERVER }));
    await admin.call('idp_add', ['hostidp'], idpReference(idp));
    // SSH keys of alice and dave, in the directory
    for (const u of ['alice', 'dave']) {
      const k = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${u}@outside`, '-f', join(realm.dataDir, `${u}_key`)]);
      assert.equal(k.status, 0, k.stderr?.toString());
    }
    const pub = (u: string) => readFileSync(join(realm.dataDir, `${u}_key.pub`), 'utf8').trim();
    await addActiveUser(admin, 'alice', 'Alice-pw-1234', { first: 'Alice', last: 'Liddell', sshpubkey: [pub('alice')] });
    await admin.call('user_add', ['frank'], { first: 'Frank', last: 'Idp', user_auth_type: ['idp'], idp: 'hostidp', idp_user_id: 'frank-sub' });
    await addActiveUser(admin, 'dave', 'Dave-pw-1234', { first: 'Dave', last: 'Gone', sshpubkey: [pub('dave')] });
    // the host an administrator added with a one-time password, which it joins with
    const added = (await admin.call('host_add', [HOST], { random: true })) as { result: { randompassword?: string } };
    otp = added.result.randompassword!;
    const data = join(realm.dataDir, 'realm');
    const { srv, txt } = zoneRecords(readFileSync(join(data, 'dns-srv.zone'), 'utf8'));
    dns = await startSrvDns(srv, txt);
    fingerprint = new X509Certificate(readFileSync(join(data, 'ca.crt'))).fingerprint256;
    // a user's machine outside the host: the realm's krb5.conf, the server reached on loopback
    outsideKrb5 = join(realm.dataDir, 'outside-krb5.conf');
    writeFileSync(outsideKrb5, readFileSync(join(data, 'krb5.conf'), 'utf8').replaceAll(`${SERVER}:`, '127.0.0.1:'));
    host = await startDebianHost({ hostname: HOST, hosts: { [SERVER]: '127.0.0.1', [HOST]: '127.0.1.1' } });
    // a local user of the host, a sudo rule of its administrator's, and its sshd, running before the join as on any server
    sshPort = await freeTcpPort();
    const setup = await host.exec(
      `useradd -m -s /bin/bash localbob && echo 'localbob:Local-pw-1234' | chpasswd && echo 'frank ALL=(ALL) ALL' > /etc/sudoers.d/frank && chmod 440 /etc/sudoers.d/frank && /usr/sbin/sshd -p ${sshPort} -o ListenAddress=127.0.0.1`,
    );
    assert.equal(setup.code, 0, setup.stderr);
    stock = await host.etcDigest();
  });
  after(async () => {
    host?.stop();
    dns?.stop();
    await realm?.stop();
    await idp?.stop();
    rmSync(idpCa, { force: true });
  });

  const dirid = (args: string, input = '') => host.exec(`${process.execPath} ${DIRID} ${args}`, { input, env: { DIRID_DNS_SERVER: dns.server, XDG_CACHE_HOME: join(host.dir, 'cache') }, timeoutMs: 90_000 });

  /** `ssh` from outside the host with one authentication method, answering its prompts. */
  function ssh(user: string, method: string, answer: (out: string) => string | null | Promise<string | null>, env: NodeJS.ProcessEnv = {}, extra: string[] = []): Promise<PtyRun> {
    let answered = 0;
    const cmd = `ssh -F /dev/null ${extra.join(' ')} -p ${sshPort} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o NumberOfPasswordPrompts=1 -o PreferredAuthentications=${method} -o GSSAPIAuthentication=yes -o GSSAPIServerIdentity=${HOST} ${user}@127.0.0.1 'echo LOGGED-IN as $(id -un) in $(pwd)'`;
    return pty(cmd, { KRB5_CONFIG: outsideKrb5, ...env }, (out, write) => {
      const prompts = out.match(/([Pp]assword: ?|press ENTER\.?:? ?)$/gm) ?? [];
      if (prompts.length <= answered) return;
      answered = prompts.length;
      void Promise.resolve(answer(out)).then((a) => a !== null && write(a));
    }, 60_000);
  }
  const password = (pw: string) => () => `${pw}\r`;
  /** Approves the device code shown at the IdP as `account`, then presses ENTER. */
  const approve = (account: string) => async (out: string) => {
    const code = [...out.matchAll(/user_code=([A-Z0-9-]+) and press ENTER/g)].pop()?.[1];
    if (!code) return null;
    await idp.approveDevice(code, account);
    return '\r';
  };
  const kinit = (user: string, pw: string, cc: string) =>
    new Promise<number | null>((resolve) => {
      const p = spawn('kinit', ['-c', `FILE:${cc}`, user], { env: { ...process.env, KRB5_CONFIG: outsideKrb5 } });
      p.stdin.end(`${pw}\n`);
      p.on('exit', resolve);
    });

  it('refuses a server whose CA is not the one given, and changes nothing', async () => {
    const wrong = fingerprint.replace(/^../, fingerprint.startsWith('00') ? '11' : '00');
    const r = await dirid(`join --ca-fingerprint ${wrong} --principal admin`, `${realm.adminPassword}\n`);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /did not show a certificate with the SHA-256 fingerprint/);
    assert.deepEqual(differences(stock, await host.etcDigest()), []);
  });

  it('--dry-run prints what it would change and changes nothing', async () => {
    const r = await dirid(`join --dry-run --ca-fingerprint ${fingerprint}`);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /would create \/etc\/sssd\/sssd\.conf/);
    assert.match(r.stdout, new RegExp(`ldap_sasl_authid = host/${HOST}@EXAMPLE\\.TEST`));
    assert.match(r.stdout, /would change \/etc\/krb5\.conf/);
    assert.match(r.stdout, /would run pam-auth-update --package --enable dirid --disable sss/);
    assert.deepEqual(differences(stock, await host.etcDigest()), []);
  });

  it("joins: the realm from DNS SRV records, the CA by its fingerprint, the host's one-time password", async () => {
    const r = await dirid(`join --ca-fingerprint ${fingerprint} --otp --mkhomedir`, `${otp}\n`);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`Realm EXAMPLE\\.TEST \\(domain example\\.test\\), server ${SERVER.replace(/\./g, '\\.')}:${realm.server.httpsPort}`));
    assert.match(r.stdout, /Enrolled host client\.example\.test with the host's one-time password: keys of host\/client\.example\.test@EXAMPLE\.TEST/);
    assert.doesNotMatch(r.stdout + r.stderr, new RegExp(otp));
    assert.match(r.stdout, /This host is joined to realm EXAMPLE\.TEST as host\/client\.example\.test/);
    const check = await host.exec('klist -k /etc/krb5.keytab; stat -c %a /etc/sssd/sssd.conf; getent passwd alice; grep -v "^#" /etc/pam.d/common-auth');
    assert.match(check.stdout, /host\/client\.example\.test@EXAMPLE\.TEST/);
    assert.match(check.stdout, /^600$/m);
    assert.match(check.stdout, /^alice:\*:\d+:\d+:Alice Liddell:\/home\/alice:\/bin\/bash$/m, `${check.stdout}${check.stderr}`);
    // pam_sss first, pam_unix after it for local users
    assert.match(check.stdout, /^auth\s+\[success=2 [^\]]*default=die\]\s+pam_sss\.so forward_pass\nauth\s+\[success=1 default=ignore\]\s+pam_unix\.so nullok try_first_pass$/m, check.stdout);
    // every file names the CA where it is
    const paths = await host.exec('grep -h -E "ca.crt|cacert|anchors" /etc/krb5.conf /etc/sssd/sssd.conf /etc/dirid/default.conf');
    assert.deepEqual([...new Set(paths.stdout.match(/\/\S*ca\.crt/g))], ['/etc/dirid/ca.crt'], paths.stdout);
    joined = await host.etcDigest();
  });

  it('a second join says the host is joined and changes nothing', async () => {
    const r = await dirid(`join --ca-fingerprint ${fingerprint} --principal admin`, `${realm.adminPassword}\n`);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /already joined to realm EXAMPLE\.TEST as host\/client\.example\.test; nothing was changed/);
    assert.deepEqual(differences(joined, await host.etcDigest()), []);
  });

  it('a realm password user logs in over ssh (keyboard-interactive), with a home made at the first login', async () => {
    const r = await ssh('alice', 'keyboard-interactive', password('Alice-pw-1234'));
    assert.match(r.out, /LOGGED-IN as alice in \/home\/alice/, r.out);
  });

  it('a local password user still logs in over ssh', async () => {
    const r = await ssh('localbob', 'keyboard-interactive', password('Local-pw-1234'));
    assert.match(r.out, /LOGGED-IN as localbob in \/home\/localbob/, r.out);
  });

  it('an IdP user sees the URL and code over ssh, not "Password:", and logs in after approving', async () => {
    const r = await ssh('frank', 'keyboard-interactive', approve('frank-sub'));
    assert.match(r.out, /Authenticate at https:\/\/\S+user_code=\S+ and press ENTER/, r.out);
    assert.doesNotMatch(r.out, /Password:/);
    assert.match(r.out, /LOGGED-IN as frank in \/home\/frank/, r.out);
  });

  it('an IdP login refused at the IdP is refused at the host: no "Password:" asked after it, the reason in the server log', async () => {
    let denied = false;
    const r = await ssh('frank', 'keyboard-interactive', async (out) => {
      const code = /user_code=([A-Z0-9-]+) and press ENTER/.exec(out)?.[1];
      if (code && !denied) {
        denied = true;
        await idp.denyDevice(code);
      }
      return '\r';
    });
    assert.ok(denied, r.out);
    assert.doesNotMatch(r.out, /Password:|LOGGED-IN/, r.out);
    assert.match(r.out, /Permission denied/, r.out);
    assert.ok(realm.log.some((l) => /client=frank@EXAMPLE\.TEST .*outcome=KDC_ERR_PREAUTH_FAILED preauth="idp: .*refused or cancelled at the IdP \(access_denied/.test(l)), realm.log.filter((l) => l.includes('client=frank@')).join('\n'));
  });

  it("the trap it closes: with Debian's stock order (libpam-sss's profile after pam_unix) the same IdP user only sees Password:", async () => {
    const stockOrder = await host.exec('DEBIAN_FRONTEND=noninteractive pam-auth-update --package --disable dirid --enable sss');
    assert.equal(stockOrder.code, 0, stockOrder.stderr);
    try {
      const r = await ssh('frank', 'keyboard-interactive', () => '\r');
      assert.match(r.out, /Password:/, r.out);
      assert.doesNotMatch(r.out, /Authenticate at|LOGGED-IN/, r.out);
    } finally {
      const back = await host.exec('DEBIAN_FRONTEND=noninteractive pam-auth-update --package --disable sss --enable dirid');
      assert.equal(back.code, 0, back.stderr);
    }
  });

  /** Runs `script` on the host's console (a pseudo-terminal), approving the device code it shows as frank, then `then` once. */
  const console = (script: string, then?: string) => {
    let approved = false;
    let sent = false;
    return host.pty(script, (out, write) => {
      const code = /user_code=([A-Z0-9-]+) and press ENTER/.exec(out)?.[1];
      if (code && !approved) {
        approved = true;
        void idp.approveDevice(code, 'frank-sub').then(() => write('\r'));
      }
      if (then && !sent && /\$ $/.test(out)) {
        sent = true;
        write(then);
      }
    });
  };

  it('at the console, login, su and sudo show an IdP user the device flow', async () => {
    const login = await console('login frank', 'echo LOGIN-AS $(id -un); exit\r');
    assert.match(login.out, /Authenticate at \S+ and press ENTER[\s\S]*LOGIN-AS frank/, login.out);
    const su = await console('setpriv --reuid=65534 --regid=65534 --clear-groups su - frank -c "echo SU-AS \\$(id -un)"');
    assert.match(su.out, /Authenticate at \S+ and press ENTER[\s\S]*SU-AS frank/, su.out);
    // sudo asks when a rule says so (the host's own sudoers, written before the join)
    const sudo = await console('setpriv --reuid=frank --regid=frank --init-groups sudo -k sh -c "echo SUDO-AS \\$(id -un)"');
    assert.match(sudo.out, /Authenticate at \S+ and press ENTER[\s\S]*SUDO-AS root/, sudo.out);
  });

  it('GSSAPI: a ticket got outside the host logs in over ssh without a prompt', async () => {
    const cc = join(realm.dataDir, 'alice.cc');
    assert.equal(await kinit('alice', 'Alice-pw-1234', cc), 0);
    const r = await ssh('alice', 'gssapi-with-mic', () => null, { KRB5CCNAME: `FILE:${cc}` });
    assert.match(r.out, /LOGGED-IN as alice/, r.out);
  });

  it('an SSH key from the directory logs in over ssh', async () => {
    const r = await ssh('alice', 'publickey', () => null, {}, ['-i', join(realm.dataDir, 'alice_key'), '-o', 'IdentitiesOnly=yes']);
    assert.match(r.out, /LOGGED-IN as alice/, r.out);
  });

  it("the host's own key, kept in the directory, is what ssh on a joined host checks: no first-use prompt, no known_hosts of its own", async () => {
    const hostKey = (await host.exec('cat /etc/ssh/ssh_host_ed25519_key.pub')).stdout.trim();
    // the host reached by its name (127.0.1.1 in its /etc/hosts), as another host of the realm would reach it
    const byName = await freeTcpPort();
    // no PidFile: dirid leave reloads the sshd of /run/sshd.pid, the one the other tests log in to
    await host.exec(`/usr/sbin/sshd -p ${byName} -o ListenAddress=127.0.1.1 -o PidFile=none`);
    // as the realm's ssh client reaches it: the stock ssh_config with the join's drop-in, no file of known hosts but SSSD's
    const reach = () => host.exec(`ssh -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=/dev/null -o HostKeyAlgorithms=ssh-ed25519 -o PreferredAuthentications=none -p ${byName} nobody@${HOST} true 2>&1; true`);
    const unknown = await reach();
    assert.match(unknown.stdout, /Host key verification failed|No ED25519 host key is known/, `no key in the directory yet: ${unknown.stdout}`);
    await admin.call('host_mod', [HOST], { sshpubkey: [hostKey] });
    const known = await reach();
    assert.doesNotMatch(known.stdout, /Host key verification failed|No ED25519 host key is known|REMOTE HOST IDENTIFICATION HAS CHANGED/, known.stdout);
    assert.match(known.stdout, /Permission denied/, `the key checked, the login (with no method) refused: ${known.stdout}`);
  });

  it('host-based access over ssh: with allow_all disabled, a rule for alice through sshd lets her in (GSSAPI, SSH key) but not through su; dave and the IdP user are refused', async () => {
    const settle = () => new Promise((r) => setTimeout(r, (PAM_ID_TIMEOUT + 1) * 1000));
    await admin.call('hbacrule_add', ['alice_ssh']);
    await admin.call('hbacrule_add_user', ['alice_ssh'], { users: ['alice'] });
    await admin.call('hbacrule_add_host', ['alice_ssh'], { hosts: [HOST] });
    await admin.call('hbacrule_add_service', ['alice_ssh'], { hbacsvcs: ['sshd'] });
    await admin.call('hbacrule_disable', ['allow_all']);
    try {
      // the bound (docs/hbac.md): SSSD reads a user again once pam_id_timeout has passed since its last read
      await settle();
      const cc = join(realm.dataDir, 'alice.cc');
      const gssapi = await ssh('alice', 'gssapi-with-mic', () => null, { KRB5CCNAME: `FILE:${cc}` });
      assert.match(gssapi.out, /LOGGED-IN as alice/, gssapi.out);
      const key = await ssh('alice', 'publickey', () => null, {}, ['-i', join(realm.dataDir, 'alice_key'), '-o', 'IdentitiesOnly=yes']);
      assert.match(key.out, /LOGGED-IN as alice/, key.out);
      let sent = false;
      const su = await host.pty('setpriv --reuid=65534 --regid=65534 --clear-groups su - alice -c "echo SU-AS \\$(id -un)"', (out, write) => {
        if (!sent && /Password: ?$/.test(out)) {
          sent = true;
          write('Alice-pw-1234\r');
        }
      });
      assert.ok(sent, su.out);
      assert.doesNotMatch(su.out, /SU-AS/, su.out);
      const dave = await ssh('dave', 'publickey', () => null, {}, ['-i', join(realm.dataDir, 'dave_key'), '-o', 'IdentitiesOnly=yes']);
      assert.doesNotMatch(dave.out, /LOGGED-IN/, dave.out);
      const frank = await ssh('frank', 'keyboard-interactive', async (out) => (await approve('frank-sub')(out)) ?? '\r');
      assert.match(frank.out, /user_code=/, frank.out);
      assert.doesNotMatch(frank.out, /LOGGED-IN/, frank.out);
      assert.equal((await admin.call('hbactest', [], { user: 'frank', host: HOST, service: 'sshd' })).value, false);
    } finally {
      await admin.call('hbacrule_enable', ['allow_all']);
      await settle();
    }
  });

  it('a user disabled in dirid while a process of theirs runs on the host is refused at once: GSSAPI, SSH key, password; an IdP user too', async () => {
    const cc = join(realm.dataDir, 'dave.cc');
    assert.equal(await kinit('dave', 'Dave-pw-1234', cc), 0);
    const first = await ssh('dave', 'gssapi-with-mic', () => null, { KRB5CCNAME: `FILE:${cc}` });
    assert.match(first.out, /LOGGED-IN as dave/, first.out);
    const firstKey = await ssh('dave', 'publickey', () => null, {}, ['-i', join(realm.dataDir, 'dave_key'), '-o', 'IdentitiesOnly=yes']);
    assert.match(firstKey.out, /LOGGED-IN as dave/, firstKey.out);
    const proc = await host.exec('setpriv --reuid=dave --regid=dave --clear-groups sleep 600 >/dev/null 2>&1 & sleep 0.2; pgrep -u dave sleep');
    assert.match(proc.stdout, /^\d+$/m, proc.stderr);
    await admin.call('user_mod', ['dave'], { disabled: true });
    const gssapi = await ssh('dave', 'gssapi-with-mic', () => null, { KRB5CCNAME: `FILE:${cc}` });
    assert.doesNotMatch(gssapi.out, /LOGGED-IN/, gssapi.out);
    const key = await ssh('dave', 'publickey', () => null, {}, ['-i', join(realm.dataDir, 'dave_key'), '-o', 'IdentitiesOnly=yes']);
    assert.doesNotMatch(key.out, /LOGGED-IN/, key.out);
    const pw = await ssh('dave', 'keyboard-interactive', password('Dave-pw-1234'));
    assert.doesNotMatch(pw.out, /LOGGED-IN/, pw.out);
    // and an IdP user, disabled after logging in once: no device flow starts
    await admin.call('user_mod', ['frank'], { disabled: true });
    const idpUser = await ssh('frank', 'keyboard-interactive', async (out) => (await approve('frank-sub')(out)) ?? '\r');
    assert.doesNotMatch(idpUser.out, /LOGGED-IN|user_code=/, idpUser.out);
    assert.match(idpUser.out, /Permission denied/, idpUser.out);
  });

  it('dirid leave puts every file back as it was and removes the host keys', async () => {
    const dry = await dirid('leave --dry-run');
    assert.match(dry.stdout, /would put back \/etc\/krb5\.conf[\s\S]*would remove \/etc\/sssd\/sssd\.conf[\s\S]*would remove the keys of host\/client\.example\.test@EXAMPLE\.TEST/, dry.stdout + dry.stderr);
    assert.deepEqual(differences(joined, await host.etcDigest()), []);
    const r = await dirid('leave');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /This host has left realm EXAMPLE\.TEST/);
    assert.deepEqual(differences(stock, await host.etcDigest()), []);
    const after = await host.exec('ls /etc/krb5.keytab 2>&1; getent passwd alice || echo "no alice"; for p in $(pgrep -x sssd); do grep -q "^State:.*Z" /proc/$p/status || echo "sssd runs: $p"; done');
    assert.match(after.stdout, /No such file[\s\S]*no alice/, after.stdout);
    assert.doesNotMatch(after.stdout, /sssd runs/, after.stdout);
    // sshd as Debian ships it again: passwords, no keyboard-interactive
    const pw = await ssh('localbob', 'password', password('Local-pw-1234'));
    assert.match(pw.out, /LOGGED-IN as localbob/, pw.out);
    const kbd = await ssh('localbob', 'keyboard-interactive', password('Local-pw-1234'));
    assert.match(kbd.out, /Permission denied \(publickey,password\)/, kbd.out);
  });
});
