/**
 * The sudo rules as hosts read them (objects/sudo-roles.ts), in process
 * over a SQLite directory holding the realm's schema: each enabled rule is
 * one sudoRole entry below ou=sudoers with its users (`%group` for a
 * group), its hosts (a host group's hosts, nested groups' too), its
 * commands (a command group's, then the denied ones with `!`), whom they run
 * as, its options and order; a disabled rule has none. The view answers the
 * filters SSSD's ldap sudo provider sends (full refresh by host name, smart
 * refresh by modifyTimestamp), follows a renamed user and a deleted host,
 * shows a change of a host group or command group in the rule's
 * modifyTimestamp, finds by its values what a scan finds, and is built
 * once per state of the directory. Host
 * groups are the registry's `hostgroup` object, or, in a tree without one,
 * a minimal declaration made here.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openSqliteDirectory } from '../../src/directory/sqlite.js';
import { matches, parseFilter } from '../../src/directory/filter.js';
import { generalizedTime } from '../../src/directory/schema.js';
import type { Directory, Entry } from '../../src/directory/types.js';
import { defineObject } from '../../src/framework/object.js';
import type { ObjectDef } from '../../src/framework/command.js';
import { highestUsn, viewSnapshot } from '../../src/framework/view.js';
import { buildRegistry, objectsOf, realmTree, REGISTERED, schemaOf, type Registered } from '../../src/objects/index.js';
import { sudoersView } from '../../src/objects/sudo-roles.js';

const BASE = 'dc=example,dc=test';
const SUDOERS = `ou=sudoers,${BASE}`;

/** A host group as FreeIPA has one (member hosts and host groups), for a tree whose registry has none. */
const minimalHostgroup = defineObject({
  name: 'hostgroup',
  label: 'host groups',
  labelSingular: 'host group',
  doc: 'Groups of hosts (test).',
  container: 'cn=hostgroups,cn=accounts',
  readBy: 'authenticated',
  schema: { attributeTypes: [], objectClasses: [{ name: 'dirTestHostGroup', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description'] }] },
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirTestHostGroup'],
  pkey: 'name',
  params: { name: { attr: 'cn', type: 'str', label: 'Host group', doc: 'Host group' } },
  defaultAttributes: ['name'],
  searchAttributes: ['name'],
});

const hasHostgroup = objectsOf(REGISTERED).some((o) => o.name === 'hostgroup');
const registered: readonly Registered[] = hasHostgroup ? REGISTERED : [...REGISTERED, minimalHostgroup];
const hostgroupObject = objectsOf(registered).find((o) => o.name === 'hostgroup')! as ObjectDef;

const user = (uid: string) => `uid=${uid},cn=users,cn=accounts,${BASE}`;
const group = (cn: string) => `cn=${cn},cn=groups,cn=accounts,${BASE}`;
const host = (fqdn: string) => `fqdn=${fqdn},cn=computers,cn=accounts,${BASE}`;
const hostgroup = (cn: string) => `cn=${cn},${hostgroupObject.container},${BASE}`;
const cmd = (c: string) => `sudoCmd=${c},cn=sudocmds,cn=sudo,${BASE}`;
const cmdgroup = (cn: string) => `cn=${cn},cn=sudocmdgroups,cn=sudo,${BASE}`;
const rule = (cn: string) => `cn=${cn},cn=sudorules,cn=sudo,${BASE}`;

/** SSSD 2.8's full refresh filter for a host (sdap_sudo_refresh.c): its names and addresses, rules without sudoHost, ALL, netgroups. */
const fullRefresh = (...names: string[]) => parseFilter(`(&(objectClass=sudoRole)(|(!(sudoHost=*))(sudoHost=ALL)${names.map((n) => `(sudoHost=${n})`).join('')}(sudoHost=+*)))`);
/** Its smart refresh: what changed after the latest modifyTimestamp seen, for the same host. */
const smartRefresh = (since: string, ...names: string[]) =>
  parseFilter(`(&(&(objectclass=sudoRole)(modifyTimestamp>=${since})(!(modifyTimestamp=${since})))(|(!(sudoHost=*))(sudoHost=ALL)${names.map((n) => `(sudoHost=${n})`).join('')}(sudoHost=+*)))`);

describe('sudo rules as sudoRole entries (ou=sudoers)', () => {
  let tmp: string;
  let dir: Directory;
  const registry = buildRegistry({}, registered);
  const view = async () => viewSnapshot(sudoersView, { dir, registry });
  const search = async (filter: ReturnType<typeof parseFilter>) => (await view()).search(SUDOERS, 'sub', filter).entries;
  const names = (entries: Entry[]) => entries.map((e) => e.attrs.cn![0]).sort();
  const role = async (cn: string) => (await view()).get(`cn=${cn},${SUDOERS}`);
  const nextSecond = async () => {
    const now = generalizedTime();
    while (generalizedTime() === now) await new Promise((r) => setTimeout(r, 50));
  };

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'sudo-roles-'));
    dir = await openSqliteDirectory({ path: join(tmp, 'db'), baseDn: BASE, schema: schemaOf(registered), masterKey: randomBytes(32), create: true });
    const tree = realmTree({ baseDn: BASE, realm: 'EXAMPLE.TEST' }, registered);
    await dir.batch([...tree.containers, ...tree.entries]);
    for (const uid of ['alice', 'bob']) await dir.add(user(uid), { objectClass: ['top', 'person', 'dirUser'], uid: [uid], cn: [uid], sn: [uid] });
    await dir.add(group('ops'), { objectClass: ['top', 'dirGroup'], cn: ['ops'] });
    for (const h of ['web1.example.test', 'web2.example.test', 'db1.example.test']) await dir.add(host(h), { objectClass: ['top', 'dirHost'], fqdn: [h], cn: [h] });
    const hg = (cn: string, member: string[]) => dir.add(hostgroup(cn), { objectClass: [...hostgroupObject.objectClasses], cn: [cn], member });
    await hg('frontends', [host('web2.example.test')]);
    await hg('webservers', [host('web1.example.test'), hostgroup('frontends')]);
    for (const c of ['/usr/bin/less', '/usr/bin/systemctl restart nginx', '/bin/su']) await dir.add(cmd(c), { objectClass: ['top', 'dirSudoCmd'], sudoCmd: [c] });
    await dir.add(cmdgroup('viewers'), { objectClass: ['top', 'dirSudoCmdGroup'], cn: ['viewers'], member: [cmd('/usr/bin/less')] });
    const r = (cn: string, attrs: Record<string, string[]>) => dir.add(rule(cn), { objectClass: ['top', 'dirSudoRule'], cn: [cn], ipaEnabledFlag: ['TRUE'], ...attrs });
    await r('web-admins', {
      memberUser: [user('alice'), group('ops')],
      memberHost: [hostgroup('webservers')],
      memberAllowCmd: [cmdgroup('viewers'), cmd('/usr/bin/systemctl restart nginx')],
      memberDenyCmd: [cmd('/bin/su')],
      ipaSudoRunAs: [user('bob')],
      ipaSudoOpt: ['!authenticate'],
      sudoOrder: ['10'],
    });
    await r('everyone-less', { userCategory: ['all'], hostCategory: ['all'], memberAllowCmd: [cmd('/usr/bin/less')] });
    await r('db', { memberUser: [user('bob')], memberHost: [host('db1.example.test')], cmdCategory: ['all'], ipaSudoRunAsUserCategory: ['all'], ipaSudoRunAsGroupCategory: ['all'], memberDenyCmd: [cmd('/bin/su')] });
    await r('switched-off', { userCategory: ['all'], hostCategory: ['all'], cmdCategory: ['all'], ipaEnabledFlag: ['FALSE'] });
  });
  after(async () => {
    await dir?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('renders each enabled rule with its users, hosts, commands, run-as, options and order', async () => {
    const e = await role('web-admins');
    assert.ok(e);
    const { modifyTimestamp, createTimestamp, entryUSN, ...attrs } = e.attrs;
    assert.ok(modifyTimestamp?.[0] && createTimestamp?.[0]);
    assert.match(entryUSN?.[0] ?? '', /^[1-9]\d*$/);
    assert.deepEqual(attrs, {
      objectClass: ['top', 'sudoRole'],
      cn: ['web-admins'],
      sudoUser: ['alice', '%ops'],
      sudoHost: ['web1.example.test', 'web2.example.test'],
      sudoCommand: ['/usr/bin/less', '/usr/bin/systemctl restart nginx', '!/bin/su'],
      sudoRunAsUser: ['bob'],
      sudoOption: ['!authenticate'],
      sudoOrder: ['10'],
    });
    const db = (await role('db'))!.attrs;
    assert.deepEqual([db.sudoUser, db.sudoHost, db.sudoCommand, db.sudoRunAsUser, db.sudoRunAsGroup], [['bob'], ['db1.example.test'], ['ALL', '!/bin/su'], ['ALL'], ['ALL']]);
    const all = (await role('everyone-less'))!.attrs;
    assert.deepEqual([all.sudoUser, all.sudoHost, all.sudoCommand, all.sudoRunAsUser], [['ALL'], ['ALL'], ['/usr/bin/less'], undefined], 'no run-as: root alone');
    assert.equal(await role('switched-off'), undefined, 'a disabled rule is not served');
    assert.deepEqual((await view()).get(SUDOERS)?.attrs, { objectClass: ['top', 'organizationalUnit'], ou: ['sudoers'] });
  });

  it("answers SSSD's full refresh with the rules of the host, through nested host groups", async () => {
    assert.deepEqual(names(await search(fullRefresh('web2.example.test', 'web2', '192.0.2.7'))), ['everyone-less', 'web-admins']);
    assert.deepEqual(names(await search(fullRefresh('db1.example.test', 'db1'))), ['db', 'everyone-less']);
    assert.deepEqual(names(await search(fullRefresh('other.example.test'))), ['everyone-less']);
    // a rules refresh (by name) and one level below the root
    assert.deepEqual(names((await view()).search(SUDOERS, 'one', parseFilter('(&(objectClass=sudoRole)(|(cn=db)(cn=switched-off)))')).entries), ['db']);
    // a filter naming what no sudoRole entry has finds nothing without looking further
    assert.deepEqual((await view()).search(SUDOERS, 'sub', parseFilter('(&(uid=alice)(objectClass=posixAccount))')).entries, []);
    assert.deepEqual((await view()).search(SUDOERS, 'base', parseFilter('(objectClass=*)')).entries.map((e) => e.dn), [SUDOERS]);
  });

  it('finds by its values what a scan of every entry finds', async () => {
    const v = await view();
    const t = (await role('web-admins'))!.attrs.modifyTimestamp![0]!;
    const u = (await role('web-admins'))!.attrs.entryUSN![0]!;
    for (const text of [
      '(objectClass=*)',
      '(objectClass=sudoRole)',
      '(sudoHost=web1.example.test)',
      '(sudoHost=WEB1.example.test)',
      '(sudoUser=%ops)',
      '(sudoHost=web*)',
      '(sudoHost=*.example.*)',
      '(sudoCommand=*nginx)',
      '(sudoCommand=!*)',
      '(sudoHost=+*)',
      '(sudoOrder>=10)',
      '(sudoOrder<=9)',
      '(sudoOrder=010)',
      `(modifyTimestamp>=${t})`,
      `(modifyTimestamp<=${t})`,
      `(&(modifyTimestamp>=${t})(!(modifyTimestamp=${t})))`,
      '(&(sudoOrder>=10)(!(sudoOrder=010)))',
      '(&(sudoOrder>=9)(!(sudoOrder=10)))',
      '(&(sudoOrder>=10)(!(cn=10)))',
      `(&(entryUSN>=${u})(!(entryUSN=${u})))`,
      `(&(entryUSN>=${Number(u) - 1})(!(entryUSN=${Number(u) - 1})))`,
      '(modifyTimestamp>=nonsense)',
      '(!(sudoHost=*))',
      '(|(sudoUser=ALL)(!(sudoRunAsUser=*)))',
      '(&(sudoUser=alice)(|(sudoHost=ALL)(sudoHost=web2.example.test)))',
      '(&(objectClass=sudoRole)(noSuchAttribute=x))',
      '(|(noSuchAttribute=x)(cn=db))',
      '(ou=sudoers)',
      '(&)',
      '(|)',
    ]) {
      const f = parseFilter(text);
      const scanned = v.entries.filter((e) => matches(dir.schema, f, { attrs: e.attrs, secrets: new Set() })).map((e) => e.dn);
      assert.deepEqual(v.search(SUDOERS, 'sub', f).entries.map((e) => e.dn), scanned, text);
      assert.deepEqual(v.search(SUDOERS, 'one', f).entries.map((e) => e.dn), scanned.filter((dn) => dn !== SUDOERS), text);
    }
  });

  it('is built again only after a write to what it is computed from', async () => {
    const first = await view();
    assert.equal(await view(), first, 'no write: the same entries');
    await dir.modify(user('bob'), [{ op: 'replace', attr: 'description', values: ['any write'] }]);
    await dir.modify(host('db1.example.test'), [{ op: 'replace', attr: 'description', values: ['another'] }]);
    assert.equal(await view(), first, 'writes elsewhere: the same entries');
    await dir.modify(rule('db'), [{ op: 'replace', attr: 'description', values: ['a rule'] }]);
    const second = await view();
    assert.notEqual(second, first, 'a rule written: built again');
    await dir.modify(hostgroup('frontends'), [{ op: 'replace', attr: 'description', values: ['a host group'] }]);
    const third = await view();
    assert.notEqual(third, second, 'a host group written: built again');
    await dir.modify(cmdgroup('viewers'), [{ op: 'replace', attr: 'description', values: ['a command group'] }]);
    assert.notEqual(await view(), third, 'a command group written: built again');
  });

  it("shows a change of a host group or command group in the rule's modifyTimestamp, which smart refresh asks for", async () => {
    const before = (await role('web-admins'))!.attrs.modifyTimestamp![0]!;
    assert.deepEqual(names(await search(smartRefresh(before, 'db1.example.test'))), [], 'nothing changed since');
    await nextSecond();
    await dir.modify(hostgroup('frontends'), [{ op: 'add', attr: 'member', values: [host('db1.example.test')] }]);
    const after = (await role('web-admins'))!.attrs;
    assert.ok(after.modifyTimestamp![0]! > before);
    assert.deepEqual(after.sudoHost, ['web1.example.test', 'web2.example.test', 'db1.example.test']);
    assert.deepEqual(names(await search(smartRefresh(before, 'db1.example.test'))), ['web-admins']);
    await nextSecond();
    const t = after.modifyTimestamp![0]!;
    await dir.modify(cmdgroup('viewers'), [{ op: 'add', attr: 'member', values: [cmd('/bin/su')] }]);
    const third = (await role('web-admins'))!.attrs;
    assert.ok(third.modifyTimestamp![0]! > t);
    assert.deepEqual(third.sudoCommand, ['/usr/bin/less', '/bin/su', '/usr/bin/systemctl restart nginx', '!/bin/su']);
  });

  it("gives each change an entryUSN above every earlier one, so SSSD's smart refresh by USN sees a change in the same second as the last it saw", async () => {
    const usn = (e: Entry | undefined) => Number(e!.attrs.entryUSN![0]);
    const maxUsn = async () => Math.max(...(await search(fullRefresh('db1.example.test'))).map(usn));
    const maxTime = async () => (await search(fullRefresh('db1.example.test'))).map((e) => e.attrs.modifyTimestamp![0]!).sort().at(-1)!;
    const byUsn = (since: number) => parseFilter(`(&(&(objectclass=sudoRole)(entryUSN>=${since})(!(entryUSN=${since})))(|(!(sudoHost=*))(sudoHost=ALL)(sudoHost=db1.example.test)(sudoHost=+*)))`);
    const unchanged = usn(await role('web-admins'));
    // a host reads after one change, and another change follows in the same second (tried again if the second turns between them)
    let seenUsn = 0;
    let seenTime = '';
    for (let tries = 0; ; tries++) {
      const second = generalizedTime();
      await dir.modify(rule('db'), [{ op: 'replace', attr: 'description', values: [`first ${tries}`] }]);
      seenUsn = await maxUsn();
      seenTime = await maxTime();
      await dir.modify(rule('everyone-less'), [{ op: 'replace', attr: 'sudoOrder', values: [String(20 + tries)] }]);
      await view();
      if (generalizedTime() === second || tries === 5) break;
    }
    assert.deepEqual(names(await search(byUsn(seenUsn))), ['everyone-less'], 'by entryUSN: the later change, and only it');
    // what modifyTimestamp gave: the later change has the time the host saw, and (>=T)(!(=T)) leaves it out
    assert.deepEqual(names(await search(smartRefresh(seenTime, 'db1.example.test'))), [], 'by modifyTimestamp the same-second change is missed');
    assert.equal(usn(await role('web-admins')), unchanged, 'an entry whose content did not change keeps its entryUSN');
    assert.ok(usn(await role('everyone-less')) > seenUsn);
    assert.ok(highestUsn() >= usn(await role('everyone-less')), "the root DSE's lastUSN is at least every entry's");
  });

  it('follows a renamed user and group into the rules, and drops a deleted host', async () => {
    const before = (await role('web-admins'))!.attrs.modifyTimestamp![0]!;
    await nextSecond();
    await dir.rename(user('alice'), 'uid=alicia');
    await dir.rename(group('ops'), 'cn=operators');
    await dir.rename(user('bob'), 'uid=robert');
    const e = (await role('web-admins'))!.attrs;
    assert.deepEqual(e.sudoUser, ['alicia', '%operators']);
    assert.deepEqual(e.sudoRunAsUser, ['robert']);
    assert.ok(e.modifyTimestamp![0]! > before, 'smart refresh sees the rename');
    assert.deepEqual((await role('db'))!.attrs.sudoUser, ['robert']);
    await dir.delete(host('web1.example.test'));
    assert.deepEqual((await role('web-admins'))!.attrs.sudoHost, ['web2.example.test', 'db1.example.test']);
    await dir.delete(host('db1.example.test'));
    assert.equal((await role('db'))!.attrs.sudoHost, undefined, 'a rule left with no host applies nowhere');
  });
});

describe('where hosts look for the rules', () => {
  it('the sssd.conf hosts get searches the sudoRole view where the LDAP service serves it', async () => {
    const { sudoersDn } = await import('../../src/objects/sudo-roles.js');
    const { sudoSearchBase } = await import('../../src/host/sssd-conf.js');
    assert.equal(sudoSearchBase('dc=example,dc=test'), sudoersDn('dc=example,dc=test'));
  });
});
