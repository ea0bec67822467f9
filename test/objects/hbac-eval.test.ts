/**
 * The evaluation of host-based access (objects/hbac-eval.ts), in process on
 * a SQLite directory with the realm's tree: access is granted when one
 * enabled rule matches the user (directly, through nested groups, or every
 * user), the host (directly, through nested host groups, or every host) and
 * the service (directly, through a service group, or every service). What
 * the LDAP service tells a host (grantedServices) agrees with hbactest for
 * every user, host and service, and a change is seen at once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSqliteDirectory } from '../../src/directory/sqlite.js';
import type { Directory, WriteOp } from '../../src/directory/types.js';
import { realmSchema, realmTree } from '../../src/objects/index.js';
import { grantedServices, hbacIndex, hbacTest } from '../../src/objects/hbac-eval.js';
import { membershipIndex } from '../../src/objects/membership.js';

const BASE = 'dc=example,dc=test';
const USERS = `cn=users,cn=accounts,${BASE}`;
const GROUPS = `cn=groups,cn=accounts,${BASE}`;
const HOSTS = `cn=computers,cn=accounts,${BASE}`;
const HOSTGROUPS = `cn=hostgroups,cn=accounts,${BASE}`;
const SERVICES = `cn=hbacservices,cn=hbac,${BASE}`;
const SVCGROUPS = `cn=hbacservicegroups,cn=hbac,${BASE}`;
const RULES = `cn=rules,cn=hbac,${BASE}`;

const user = (u: string) => `uid=${u},${USERS}`;
const group = (g: string) => `cn=${g},${GROUPS}`;
const host = (h: string) => `fqdn=${h},${HOSTS}`;
const hostgroup = (g: string) => `cn=${g},${HOSTGROUPS}`;
const svc = (s: string) => `cn=${s},${SERVICES}`;
const svcgroup = (g: string) => `cn=${g},${SVCGROUPS}`;
const rule = (r: string) => `cn=${r},${RULES}`;

const add = (dn: string, attrs: Record<string, string[]>): WriteOp => ({ kind: 'add', dn, attrs });
const ruleEntry = (name: string, attrs: Record<string, string[]>) => add(rule(name), { objectClass: ['top', 'dirHbacRule'], cn: [name], ipaEnabledFlag: ['TRUE'], ...attrs });

const USER_NAMES = ['alice', 'bob', 'carol', 'dave'];
const HOST_NAMES = ['web1.example.test', 'web2.example.test', 'db1.example.test'];
const SERVICE_NAMES = ['sshd', 'su', 'sudo', 'sudo-i', 'login', 'systemd-user', 'no-such-service'];

describe('host-based access: the evaluation', () => {
  let tmp: string;
  let dir: Directory;
  const test = (u: string, h: string, service: string, rules?: string[]) => hbacTest(dir, { userDn: user(u), hostDn: host(h), service, ...(rules ? { rules } : {}) });

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-hbac-'));
    dir = await openSqliteDirectory({ path: join(tmp, 'db'), baseDn: BASE, schema: realmSchema, masterKey: randomBytes(32), create: true });
    const tree = realmTree({ baseDn: BASE, realm: 'EXAMPLE.TEST' });
    await dir.batch([...tree.containers, ...tree.entries, ...tree.initial]);
    await dir.batch([
      ...USER_NAMES.map((u) => add(user(u), { objectClass: ['top', 'person', 'dirUser'], uid: [u], cn: [u], sn: [u] })),
      ...HOST_NAMES.map((h) => add(host(h), { objectClass: ['top', 'dirHost'], fqdn: [h], cn: [h] })),
      // alice is in devs, devs in staff: a rule for staff reaches her
      add(group('devs'), { objectClass: ['top', 'dirGroup'], cn: ['devs'], member: [user('alice')] }),
      add(group('staff'), { objectClass: ['top', 'dirGroup'], cn: ['staff'], member: [group('devs')] }),
      // web2 is in frontends, frontends in webservers; web1 directly in webservers
      add(hostgroup('frontends'), { objectClass: ['top', 'dirHostGroup'], cn: ['frontends'], member: [host('web2.example.test')] }),
      add(hostgroup('webservers'), { objectClass: ['top', 'dirHostGroup'], cn: ['webservers'], member: [host('web1.example.test'), hostgroup('frontends')] }),
      ruleEntry('staff_ssh_web', { memberUser: [group('staff')], memberHost: [hostgroup('webservers')], memberService: [svc('sshd')] }),
      ruleEntry('bob_sudo_db', { memberUser: [user('bob')], memberHost: [host('db1.example.test')], memberService: [svcgroup('Sudo')] }),
      ruleEntry('carol_su_everywhere', { memberUser: [user('carol')], hostCategory: ['all'], memberService: [svc('su')] }),
      ruleEntry('everyone_ssh_db_disabled', { ipaEnabledFlag: ['FALSE'], userCategory: ['all'], memberHost: [host('db1.example.test')], memberService: [svc('sshd')] }),
      ruleEntry('dave_everything_web1', { memberUser: [user('dave')], memberHost: [host('web1.example.test')], serviceCategory: ['all'] }),
    ]);
  });
  after(async () => {
    await dir?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('a new realm grants everyone everything through allow_all, and systemd-user also through allow_systemd-user', async () => {
    const a = await test('bob', 'web1.example.test', 'sshd');
    assert.equal(a.granted, true);
    assert.deepEqual(a.matched, ['allow_all']);
    assert.ok(a.notMatched.includes('allow_systemd-user') && a.notMatched.includes('staff_ssh_web'), a.notMatched.join());
    assert.ok(!a.notMatched.includes('everyone_ssh_db_disabled'), 'a disabled rule is not tested');
    assert.deepEqual((await test('bob', 'db1.example.test', 'systemd-user')).matched, ['allow_all', 'allow_systemd-user']);
    assert.deepEqual(await grantedServices(dir, user('carol'), host('db1.example.test')), { all: true, services: [] });
  });

  it('with allow_all disabled: users through nested groups, hosts through nested host groups, services through service groups', async () => {
    await dir.modify(rule('allow_all'), [{ op: 'replace', attr: 'ipaEnabledFlag', values: ['FALSE'] }]);
    // alice: devs ⊂ staff; web2 ∈ frontends ⊂ webservers
    assert.deepEqual((await test('alice', 'web2.example.test', 'sshd')).matched, ['staff_ssh_web']);
    assert.deepEqual((await test('alice', 'web1.example.test', 'sshd')).matched, ['staff_ssh_web']);
    assert.equal((await test('alice', 'db1.example.test', 'sshd')).granted, false);
    assert.equal((await test('alice', 'web1.example.test', 'su')).granted, false);
    // bob: sudo and sudo-i through the service group Sudo, on db1 only
    assert.deepEqual((await test('bob', 'db1.example.test', 'sudo-i')).matched, ['bob_sudo_db']);
    assert.deepEqual((await test('bob', 'db1.example.test', 'sudo')).matched, ['bob_sudo_db']);
    assert.equal((await test('bob', 'db1.example.test', 'sshd')).granted, false);
    assert.equal((await test('bob', 'web1.example.test', 'sudo')).granted, false);
    // carol: su on every host; dave: every service (even one no HBAC service names) on web1
    for (const h of HOST_NAMES) assert.deepEqual((await test('carol', h, 'su')).matched, ['carol_su_everywhere'], h);
    assert.deepEqual((await test('dave', 'web1.example.test', 'no-such-service')).matched, ['dave_everything_web1']);
    assert.equal((await test('dave', 'web2.example.test', 'sshd')).granted, false);
    // the disabled rule grants nothing, unless tested by name
    const denied = await test('dave', 'db1.example.test', 'sshd');
    assert.equal(denied.granted, false);
    assert.ok(!denied.notMatched.includes('everyone_ssh_db_disabled'));
    const tried = await test('dave', 'db1.example.test', 'sshd', ['everyone_ssh_db_disabled', 'bob_sudo_db']);
    assert.deepEqual(tried, { granted: true, matched: ['everyone_ssh_db_disabled'], notMatched: ['bob_sudo_db'], unknown: [] });
    assert.deepEqual((await test('dave', 'db1.example.test', 'sshd', ['nothing-of-that-name'])).unknown, ['nothing-of-that-name']);
    // systemd-user stays granted to everyone everywhere
    for (const u of USER_NAMES) assert.deepEqual((await test(u, 'db1.example.test', 'systemd-user')).matched, ['allow_systemd-user']);
  });

  it('what a host is told (granted services) is what hbactest answers, for every user, host and service', async () => {
    for (const u of USER_NAMES) {
      for (const h of HOST_NAMES) {
        const g = await grantedServices(dir, user(u), host(h));
        for (const s of SERVICE_NAMES) {
          const t = await test(u, h, s);
          assert.equal(g.all || g.services.includes(s), t.granted, `${u} ${h} ${s}: ${JSON.stringify(g)} ${JSON.stringify(t)}`);
        }
      }
    }
    assert.deepEqual(await grantedServices(dir, user('bob'), host('db1.example.test')), { all: false, services: ['sudo', 'sudo-i', 'systemd-user'] });
    assert.deepEqual(await grantedServices(dir, user('dave'), host('web1.example.test')), { all: true, services: [] });
  });

  it('a change is seen by the next evaluation: a group member removed, a rule enabled, a host group loop', async () => {
    assert.equal((await test('alice', 'web1.example.test', 'sshd')).granted, true);
    await dir.modify(group('devs'), [{ op: 'delete', attr: 'member', values: [user('alice')] }]);
    assert.equal((await test('alice', 'web1.example.test', 'sshd')).granted, false);
    assert.deepEqual(await grantedServices(dir, user('alice'), host('web1.example.test')), { all: false, services: ['systemd-user'] });
    await dir.modify(rule('everyone_ssh_db_disabled'), [{ op: 'replace', attr: 'ipaEnabledFlag', values: ['TRUE'] }]);
    assert.deepEqual((await test('alice', 'db1.example.test', 'sshd')).matched, ['everyone_ssh_db_disabled']);
    // a loop of host groups ends where it started
    await dir.modify(hostgroup('frontends'), [{ op: 'add', attr: 'member', values: [hostgroup('webservers')] }]);
    assert.equal((await test('carol', 'web2.example.test', 'sshd')).granted, false);
    await dir.modify(group('devs'), [{ op: 'add', attr: 'member', values: [user('alice'), group('staff')] }]);
    assert.equal((await test('alice', 'web2.example.test', 'sshd')).granted, true);
  });

  it('deleting what a rule names drops it from the rule, which then grants less', async () => {
    await dir.delete(user('bob'));
    const r = await dir.get(rule('bob_sudo_db'));
    assert.equal(r?.attrs.memberUser, undefined);
    await dir.delete(hostgroup('webservers'));
    assert.equal((await test('alice', 'web1.example.test', 'sshd')).granted, false);
  });

  it('is read again after a write to what it is read from, not after any write', async () => {
    const first = await hbacIndex(dir);
    // a failed login's counter, a user's name: the rules, host groups and services stand
    await dir.modify(user('alice'), [{ op: 'replace', attr: 'sn', values: ['Changed'] }]);
    assert.equal(await hbacIndex(dir), first);
    await dir.modify(rule('allow_all'), [{ op: 'replace', attr: 'description', values: ['changed'] }]);
    const second = await hbacIndex(dir);
    assert.notEqual(second, first);
    // a group's write moves the membership index the evaluation reads users' groups from, not the rules' index
    const membership = await membershipIndex(dir);
    await dir.modify(group('devs'), [{ op: 'replace', attr: 'description', values: ['changed'] }]);
    assert.equal(await hbacIndex(dir), second);
    assert.notEqual(await membershipIndex(dir), membership);
  });
});
