/**
 * The upgrade at start (src/server/upgrade.ts) of a realm the previous
 * release made: test/data/upgrade/release-2026-11-stop25.tar, built by
 * scripts/make-upgrade-fixture.sh through that release's own init, `dirid`
 * CLI and MIT kinit (what it holds and the passwords are listed there).
 * Started on this code (`dirid-server start`, a process of its own), the
 * directory goes from version 0 to DIRECTORY_VERSION, logged; every entry,
 * password, key and sealed secret is as it was, MIT kinit takes alice's
 * password and the service's keytab, and the realm's tree holds what the
 * registry declares, the access rule allow_all among them (once: deleted,
 * it stays deleted at the next start); a second start changes and logs
 * nothing; a directory recorded at a newer version is refused, naming both
 * versions. In
 * process: an object registered after the realm was made (declared here,
 * one registry line each, a one-of-a-kind policy among them) gets its
 * containers, schema and default entries from the upgrade, and its
 * commands and the read rule work. On PostgreSQL the same upgrade runs;
 * no store there was made by the previous release, so the test takes a
 * store made by this code's init and removes what the previous release's
 * init did not make (the version record, cn=servers) and what realms
 * older still lack (kadmin/changepw, the ID range).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Attributes, Directory } from '../../src/directory/types.js';
import { openSqliteDirectory } from '../../src/directory/sqlite.js';
import { globalPwpolicyDn, idRangeDn, realmContainerDn, realmPrincipalDn } from '../../src/directory/layout.js';
import { tgsPrincipal } from '../../src/kerberos/principal.js';
import { findPrincipal } from '../../src/account/lookup.js';
import { dataPaths, readServerConfig } from '../../src/server/config.js';
import { openRealmStore, readMasterKey } from '../../src/server/store.js';
import { DIRECTORY_VERSION, recordedVersion, upgradeDirectory, versionRecordDn } from '../../src/server/upgrade.js';
import { SERVER_VERSION } from '../../src/server/version.js';
import { initRealm } from '../../src/server/init.js';
import { startServer } from '../../src/server/start.js';
import { buildRegistry, realmTree, REGISTERED, schemaOf } from '../../src/objects/index.js';
import { defineObject } from '../../src/framework/object.js';
import { dispatch } from '../../src/framework/dispatch.js';
import { readability, readableLayout } from '../../src/framework/access.js';
import type { CallContext } from '../../src/framework/command.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { runTool } from '../support/mit-tools.js';
import { createDatabase, startPostgres, stopPostgres } from '../support/postgres.js';
import { capturedLog, parseTextLine, untimed } from '../support/log-lines.js';

const FIXTURE = new URL('../data/upgrade/release-2026-11-stop25.tar', import.meta.url).pathname;
const REALM = 'UPGRADE.TEST';
const BASE = 'dc=upgrade,dc=test';

/** A fresh copy of the fixture: `realm/` (the data directory) and `app.keytab`. */
function unpack(): string {
  const tmp = mkdtempSync(join(tmpdir(), 'dirid-upgrade-'));
  execFileSync('tar', ['-xf', FIXTURE, '-C', tmp]);
  return tmp;
}

interface Stored {
  attrs: Attributes;
  secrets: Record<string, string[]>;
}

/** Every entry of the directory with its attributes and its secrets opened (passwords, keys, the IdP client secret), by DN. */
async function snapshot(dir: Directory): Promise<Map<string, Stored>> {
  const secretAttrs = dir.schema.definition.attributeTypes.filter((a) => a.syntax === 'secret').map((a) => a.name);
  const out = new Map<string, Stored>();
  for (const e of (await dir.search({ base: dir.baseDn, scope: 'sub' })).entries) {
    const secrets: Record<string, string[]> = {};
    for (const a of secretAttrs) {
      const v = await dir.readSecret(e.dn, a);
      if (v.length > 0) secrets[a] = v;
    }
    out.set(e.dn.toLowerCase(), { attrs: e.attrs, secrets });
  }
  return out;
}

/** The data directory's store, opened in this process (no server running on it). */
async function withStore<T>(data: string, use: (dir: Directory) => Promise<T>): Promise<T> {
  const paths = dataPaths(data);
  const dir = await openRealmStore(paths, readServerConfig(paths));
  try {
    return await use(dir);
  } finally {
    await dir.close();
  }
}

function stop(p: ServerProcess): Promise<void> {
  return new Promise((resolve) => {
    if (p.child.exitCode !== null) return resolve();
    p.child.once('exit', () => resolve());
    p.child.kill('SIGTERM');
  });
}

/**
 * An entry as stored after a start, less what a login there recorded (the
 * last successful login, to the hour, and so the modification time), when
 * the entry as it was had none: what the test's own kinit wrote.
 */
function withoutLoginRecord(now: Stored | undefined, was: Stored): Stored | undefined {
  if (!now || now.attrs.krbLastSuccessfulAuth === undefined || was.attrs.krbLastSuccessfulAuth !== undefined) return now;
  const { krbLastSuccessfulAuth: _login, modifyTimestamp: _modified, ...attrs } = now.attrs;
  return { ...now, attrs: { ...attrs, ...(was.attrs.modifyTimestamp ? { modifyTimestamp: was.attrs.modifyTimestamp } : {}) } };
}

/** The upgrade's log lines (the realm's name, UPGRADE.TEST, is not one). */
const UPGRADE_LINE = / upgrade (?:start|added|step|done) realm=/;

/** Entries the server rewrites at every start (its own record among the realm's servers, with the ports it got) are left out of comparisons. */
const rewrittenAtStart = (dn: string) => dn.endsWith(`,cn=servers,cn=etc,${BASE}`);

describe('a realm made by release-2026-11-stop25, started on this code', () => {
  let tmp: string;
  let data: string;
  let before0: Map<string, Stored>;
  let server: ServerProcess | undefined;
  const env = () => ({ KRB5_CONFIG: join(data, 'krb5.conf') });

  before(async () => {
    tmp = unpack();
    data = join(tmp, 'realm');
    before0 = await withStore(data, snapshot);
  });
  after(async () => {
    if (server) await stop(server);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('holds what the fixture script made', () => {
    for (const dn of [`uid=alice,cn=users,cn=accounts,${BASE}`, `uid=bob,cn=users,cn=accounts,${BASE}`, `cn=testidp,cn=idp,${BASE}`, `cn=staff,cn=groups,cn=accounts,${BASE}`]) {
      assert.ok(before0.has(dn), dn);
    }
    assert.equal(before0.has(versionRecordDn(BASE)), false, 'the previous release recorded no version');
  });

  it('is upgraded at start from version 0, logged, keeping every entry, password, key and secret', async () => {
    server = await startServerProcess(data);
    const out = server.out();
    assert.match(out, new RegExp(` upgrade start realm=${REALM} from=0 to=${DIRECTORY_VERSION}\\n`));
    assert.match(out, / upgrade step realm=UPGRADE\.TEST version=1 name="the password service's principal kadmin\/changepw, for realms made before it" did="nothing to do"\n/);
    assert.match(out, / upgrade step realm=UPGRADE\.TEST version=2 name="the POSIX ID range, for realms made before it" did="nothing to do"\n/);
    // the HBAC services, service groups and privileges the rules come after, then the rules
    assert.match(
      out,
      new RegExp(
        ` upgrade step realm=${REALM} version=3 name="the entries a realm starts with \\(the HBAC rules allow_all and allow_systemd-user\\), for realms made before them, once" did="added cn=sshd,cn=hbacservices,cn=hbac,${BASE}; .*; cn=allow_all,cn=rules,cn=hbac,${BASE}; cn=allow_systemd-user,cn=rules,cn=hbac,${BASE}"\n`,
      ),
    );
    assert.match(out, new RegExp(` upgrade done realm=${REALM} from=0 to=${DIRECTORY_VERSION}\\n`));

    // the password and the keys, through MIT kinit against the upgraded realm's KDC
    const alice = await runTool('kinit', ['-c', `FILE:${join(tmp, 'alice.cc')}`, `alice@${REALM}`], env(), 'Alice-pass-1\n');
    assert.equal(alice.code, 0, alice.stderr);
    const admin = await runTool('kinit', ['-c', `FILE:${join(tmp, 'admin.cc')}`, `admin@${REALM}`], env(), 'Upgrade-admin-1\n');
    assert.equal(admin.code, 0, admin.stderr);
    const keytab = await runTool('kinit', ['-k', '-t', join(tmp, 'app.keytab'), '-c', `FILE:${join(tmp, 'app.cc')}`, `HTTP/app.upgrade.test@${REALM}`], env());
    assert.equal(keytab.code, 0, keytab.stderr);
    await stop(server);
    server = undefined;

    const after1 = await withStore(data, snapshot);
    for (const [dn, was] of before0) {
      if (rewrittenAtStart(dn)) continue;
      assert.deepEqual(withoutLoginRecord(after1.get(dn), was), was, `${dn} is as the previous release left it`);
    }
    assert.deepEqual(after1.get(`cn=testidp,cn=idp,${BASE}`)?.secrets.dirIdpClientSecret, ['Upgrade-idp-secret-1'], 'the IdP client secret still opens with the master key');
    // what this code needs: the version record, and every container and entry the registry declares
    const record = after1.get(versionRecordDn(BASE));
    assert.deepEqual(record?.attrs.dirVersion, [String(DIRECTORY_VERSION)]);
    assert.deepEqual(record?.attrs.dirRelease, [SERVER_VERSION]);
    const tree = realmTree({ baseDn: BASE, realm: REALM });
    const added = new Set([...tree.containers, ...tree.entries, ...tree.initial].map((op) => op.dn.toLowerCase()));
    for (const dn of added) assert.ok(after1.has(dn), `${dn} is there`);
    // the realm grants what it granted: allow_all, enabled
    assert.deepEqual(after1.get(`cn=allow_all,cn=rules,cn=hbac,${BASE}`)?.attrs.ipaEnabledFlag, ['TRUE']);
    for (const dn of after1.keys()) if (!before0.has(dn)) assert.ok(dn === versionRecordDn(BASE) || added.has(dn), `only the version record and what the registry declares since (the HBAC and sudo objects among them) are new (${dn})`);
    // step 4: the global password policy, with the lockout figures of releases before policies
    assert.match(out, new RegExp(` upgrade step realm=${REALM} version=4 name="the global password policy, with the lockout figures the realm container held" did="added cn=global_policy,cn=pwpolicies,cn=accounts,${BASE}`));
  });

  it('a second start runs no step and changes nothing', async () => {
    const before2 = await withStore(data, snapshot);
    server = await startServerProcess(data);
    const out = server.out();
    await stop(server);
    server = undefined;
    assert.doesNotMatch(out, UPGRADE_LINE);
    const after2 = await withStore(data, snapshot);
    for (const [dn, was] of before2) if (!rewrittenAtStart(dn)) assert.deepEqual(after2.get(dn), was, dn);
    assert.equal(after2.size, before2.size);
  });

  it('allow_all, once deleted, stays deleted at the next start, while a deleted built-in HBAC service comes back', async () => {
    const allowAll = `cn=allow_all,cn=rules,cn=hbac,${BASE}`;
    const gdm = `cn=gdm,cn=hbacservices,cn=hbac,${BASE}`;
    await withStore(data, (dir) => dir.batch([{ kind: 'delete', dn: allowAll }, { kind: 'delete', dn: gdm }]));
    server = await startServerProcess(data);
    const out = server.out();
    await stop(server);
    server = undefined;
    assert.ok(out.includes(` upgrade added realm=${REALM} entries="${gdm}"\n`), out);
    await withStore(data, async (dir) => {
      assert.equal(await dir.get(allowAll), null, 'an administrator deleted it: it stays deleted');
      assert.ok(await dir.get(gdm));
    });
  });

  it('a directory recorded at a newer version is refused, naming both versions', async () => {
    await withStore(data, (dir) =>
      dir.modify(versionRecordDn(BASE), [
        { op: 'replace', attr: 'dirVersion', values: ['99'] },
        { op: 'replace', attr: 'dirRelease', values: ['9.9.9'] },
      ]),
    );
    await assert.rejects(startServerProcess(data), (e: Error) => {
      assert.match(e.message, /server exited with 1/);
      assert.match(e.message, /dirid-server: ERROR: the directory is at version 99 \(written by dirid 9\.9\.9\), newer than this server/);
      assert.match(e.message, new RegExp(`dirid ${SERVER_VERSION.replace(/\./g, '\\.')} knows directory versions up to ${DIRECTORY_VERSION}`));
      return true;
    });
    assert.deepEqual(await withStore(data, async (dir) => (await recordedVersion(dir)).version), 99, 'the refused start left the directory alone');
  });
});

/**
 * Objects registered after the realm was made, as the next issues add
 * them: a note (container cn=notes,cn=misc, readable, a schema of its own,
 * one built-in entry) and a one-of-a-kind realm-wide note policy in the
 * realm's Kerberos container (FreeIPA's global policy), each declared once
 * and added to the registry with one line.
 */
const noteObject = defineObject({
  name: 'note',
  label: 'notes',
  labelSingular: 'note',
  doc: 'Notes.',
  container: 'cn=notes,cn=misc',
  readBy: 'authenticated',
  schema: {
    attributeTypes: [{ name: 'dirNoteText', syntax: 'string', singleValue: true, indexed: true }],
    objectClasses: [{ name: 'dirNote', kind: 'structural', sup: 'top', must: ['cn'], may: ['dirNoteText'] }],
  },
  defaults: ({ baseDn }) => [{ dn: `cn=welcome,cn=notes,cn=misc,${baseDn}`, attrs: { objectClass: ['top', 'dirNote'], cn: ['welcome'], dirNoteText: ['Welcome'] } }],
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirNote'],
  pkey: 'name',
  params: {
    name: { attr: 'cn', type: 'str', label: 'Name', doc: 'Note name' },
    text: { attr: 'dirNoteText', type: 'str', label: 'Text', doc: 'Note text' },
  },
  defaultAttributes: ['name', 'text'],
  searchAttributes: ['name', 'text'],
});

const notePolicyObject = defineObject({
  name: 'note_policy',
  label: 'note policy',
  labelSingular: 'note policy',
  doc: 'The realm-wide note policy.',
  singleton: ({ baseDn, realm }) => `cn=note policy,${realmContainerDn(baseDn, realm)}`,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [{ name: 'dirNoteMaxLength', syntax: 'integer', singleValue: true }],
    objectClasses: [{ name: 'dirNotePolicy', kind: 'structural', sup: 'top', must: ['cn'], may: ['dirNoteMaxLength'] }],
  },
  defaults: ({ baseDn, realm }) => [{ dn: `cn=note policy,${realmContainerDn(baseDn, realm)}`, attrs: { objectClass: ['top', 'dirNotePolicy'], cn: ['note policy'], dirNoteMaxLength: ['100'] } }],
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirNotePolicy'],
  pkey: 'name',
  params: {
    name: { attr: 'cn', type: 'str', label: 'Name', doc: 'Policy name', noUpdate: true },
    max_length: { attr: 'dirNoteMaxLength', type: 'int', label: 'Maximum length', doc: 'Longest note text' },
  },
  defaultAttributes: ['name', 'max_length'],
  searchAttributes: [],
});

describe('an object registered after the realm was made', () => {
  let tmp: string;
  let dir: Directory;
  const registered = [...REGISTERED, noteObject, notePolicyObject];

  before(async () => {
    tmp = unpack();
    const paths = dataPaths(join(tmp, 'realm'));
    dir = await openSqliteDirectory({ path: paths.store, baseDn: BASE, schema: schemaOf(registered), masterKey: readMasterKey(paths) });
  });
  after(async () => {
    await dir?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('gets its containers and default entries from the upgrade, and its commands and the read rule work', async () => {
    const { lines: log, log: logger } = capturedLog();
    await upgradeDirectory(dir, { realm: REALM, log: logger.child({ component: 'upgrade' }), registered });
    // (with what this release's own objects add to a realm the previous release made)
    const addedDns = (what: 'containers' | 'entries') => log.map(parseTextLine).find((l) => l.event === 'added' && l.fields[what] !== undefined)?.fields[what] ?? '';
    assert.ok(addedDns('containers').endsWith(`,cn=misc,${BASE},cn=notes,cn=misc,${BASE}`), log.join('\n'));
    assert.ok(addedDns('entries').endsWith(`,cn=welcome,cn=notes,cn=misc,${BASE},cn=note policy,${realmContainerDn(BASE, REALM)}`), log.join('\n'));

    const registry = buildRegistry({}, registered);
    const ctx: CallContext = {
      dir,
      principal: { name: `admin@${REALM}`, dn: `uid=admin,cn=users,cn=accounts,${BASE}`, uid: 'admin' },
      server: { version: SERVER_VERSION, apiVersion: '1.0', realm: REALM, domain: 'upgrade.test', searchSizeLimit: 100, searchTimeLimit: 2 },
      cache: new Map(),
      registry,
    };
    const added = await dispatch(ctx, 'note_add', ['first'], { text: 'Hello' });
    assert.deepEqual(added.result, { cn: ['first'], dirnotetext: ['Hello'] });
    const found = await dispatch(ctx, 'note_find', [], {});
    assert.deepEqual((found.result as Array<{ cn: string[] }>).map((e) => e.cn[0]), ['first', 'welcome']);
    assert.equal(registry.get('note_policy_show').args.length, 0, 'a one-of-a-kind object is shown without a name');
    assert.deepEqual((await dispatch(ctx, 'note_policy_show', [], {})).result, { cn: ['note policy'], dirnotemaxlength: [100] });
    assert.deepEqual((await dispatch(ctx, 'note_policy_mod', [], { max_length: 50 })).result, { cn: ['note policy'], dirnotemaxlength: [50] });
    assert.equal(registry.has('note_policy_add') || registry.has('note_policy_find') || registry.has('note_policy_del'), false);

    const layout = readableLayout(registry, { baseDn: BASE, realm: REALM });
    const alice = { name: `alice@${REALM}`, dn: `uid=alice,cn=users,cn=accounts,${BASE}`, uid: 'alice' };
    assert.equal(readability(alice, `cn=first,cn=notes,cn=misc,${BASE}`, layout), 'subtree');
    assert.equal(readability(alice, `cn=note policy,${realmContainerDn(BASE, REALM)}`, layout), 'subtree');
    assert.equal(readability(alice, realmPrincipalDn(BASE, REALM, tgsPrincipal(REALM)), layout), 'none', 'the policy beside krbtgt opens nothing else of the realm container');
    assert.equal(readability(alice, realmContainerDn(BASE, REALM), layout), 'path');
    assert.equal(readability(alice, `uid=alice,cn=users,cn=accounts,${BASE}`, readableLayout(buildRegistry(), { baseDn: BASE, realm: REALM })), 'subtree');

    const again = capturedLog();
    await upgradeDirectory(dir, { realm: REALM, log: again.log, registered });
    assert.deepEqual(again.lines, [], 'nothing left to add');
  });
});

describe('the upgrade on PostgreSQL', () => {
  let tmp: string;
  let database: string;
  const data = () => join(tmp, 'realm');
  const start = (log: string[]) => startServer({ dataDir: data(), listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: (l) => log.push(l) });
  const upgradeLines = (log: string[]) => log.filter((l) => UPGRADE_LINE.test(l));

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-upgrade-pg-'));
    database = await createDatabase(await startPostgres(), 'upgrade');
    await initRealm({ dataDir: data(), realm: REALM, domain: 'upgrade.test', hostname: 'localhost', adminPassword: 'Upgrade-admin-1', database });
  });
  after(() => {
    stopPostgres();
    rmSync(tmp, { recursive: true, force: true });
  });

  /** The store as a realm made before looks: no version record, no cn=servers (the previous release made it at start), no kadmin/changepw nor ID range (older realms). */
  const downgrade = () =>
    withStore(data(), async (dir) => {
      const changepw = await findPrincipal(dir, `kadmin/changepw@${REALM}`);
      assert.ok(changepw);
      const servers = await dir.search({ base: `cn=servers,cn=etc,${BASE}`, scope: 'one', attrs: ['1.1'] });
      await dir.batch([
        ...servers.entries.map((e) => ({ kind: 'delete' as const, dn: e.dn })),
        { kind: 'delete', dn: `cn=servers,cn=etc,${BASE}` },
        { kind: 'delete', dn: changepw.dn },
        { kind: 'delete', dn: idRangeDn(BASE, REALM) },
        { kind: 'delete', dn: versionRecordDn(BASE) },
        // releases before password policies: no global policy, lockout figures (set by hand) on the realm container
        { kind: 'delete', dn: globalPwpolicyDn(BASE) },
        { kind: 'modify', dn: realmContainerDn(BASE, REALM), mods: [{ op: 'replace', attr: 'krbPwdMaxFailure', values: ['3'] }, { op: 'replace', attr: 'krbPwdLockoutDuration', values: ['0'] }] },
      ]);
    });

  it('runs the same steps, once, and refuses a newer directory', async () => {
    assert.equal(await withStore(data(), async (dir) => (await recordedVersion(dir)).version), DIRECTORY_VERSION, 'init records its version');
    await downgrade();
    const log: string[] = [];
    const server = await start(log);
    try {
      assert.ok(await findPrincipal(server.dir, `kadmin/changepw@${REALM}`));
      assert.ok(await server.dir.get(idRangeDn(BASE, REALM)));
      const policy = await server.dir.get(globalPwpolicyDn(BASE));
      assert.deepEqual([policy?.attrs.krbPwdMaxFailure, policy?.attrs.krbPwdFailureCountInterval, policy?.attrs.krbPwdLockoutDuration, policy?.attrs.krbPwdMinLength], [['3'], ['60'], ['0'], ['8']]);
      const realmEntry = await server.dir.get(realmContainerDn(BASE, REALM));
      assert.equal(realmEntry?.attrs.krbPwdMaxFailure, undefined, 'moved, not copied');
    } finally {
      await server.stop();
    }
    const lines = upgradeLines(log).map(untimed);
    assert.equal(lines.length, 7, lines.join('\n'));
    assert.equal(lines[0], `upgrade start realm=${REALM} from=0 to=${DIRECTORY_VERSION}`);
    assert.equal(lines[1], `upgrade added realm=${REALM} containers="cn=servers,cn=etc,${BASE}"`);
    assert.equal(lines[2], `upgrade step realm=${REALM} version=1 name="the password service's principal kadmin/changepw, for realms made before it" did="added kadmin/changepw@${REALM}"`);
    assert.match(lines[3]!, new RegExp(`^upgrade step realm=${REALM} version=2 name="the POSIX ID range, for realms made before it" did="added cn=${REALM}_id_range,cn=ranges,cn=etc,${BASE}, IDs \\d+ to \\d+"$`));
    assert.match(lines[4]!, /^upgrade step realm=UPGRADE\.TEST version=3 name="the entries a realm starts with .*" did="nothing to do"$/);
    assert.equal(
      lines[5],
      `upgrade step realm=${REALM} version=4 name="the global password policy, with the lockout figures the realm container held" did="added ${globalPwpolicyDn(BASE)}; moved krbPwdMaxFailure 3, krbPwdLockoutDuration 0 from ${realmContainerDn(BASE, REALM)} to it"`,
    );
    assert.equal(lines[6], `upgrade done realm=${REALM} from=0 to=${DIRECTORY_VERSION}`);

    const second: string[] = [];
    await (await start(second)).stop();
    assert.deepEqual(upgradeLines(second), []);

    await withStore(data(), (dir) => dir.modify(versionRecordDn(BASE), [{ op: 'replace', attr: 'dirVersion', values: [String(DIRECTORY_VERSION + 1)] }]));
    await assert.rejects(start([]), new RegExp(`the directory is at version ${DIRECTORY_VERSION + 1} \\(written by dirid .*\\), newer than this server: dirid .* knows directory versions up to ${DIRECTORY_VERSION}`));
    await withStore(data(), (dir) => dir.modify(versionRecordDn(BASE), [{ op: 'replace', attr: 'dirVersion', values: [String(DIRECTORY_VERSION)] }]));
  });

  it('two servers upgrading at once end with one directory, recorded once', async () => {
    await downgrade();
    const paths = dataPaths(data());
    const config = readServerConfig(paths);
    const [a, b] = await Promise.all([openRealmStore(paths, config), openRealmStore(paths, config)]);
    try {
      const logs = [capturedLog(), capturedLog()];
      await Promise.all([a, b].map((dir, i) => upgradeDirectory(dir, { realm: REALM, log: logs[i]!.log.child({ component: 'upgrade' }) })));
      const all = logs.flatMap((l) => l.lines);
      assert.equal(all.filter((l) => l.endsWith(`upgrade done realm=${REALM} from=0 to=${DIRECTORY_VERSION}`)).length, 1, all.join('\n'));
      assert.equal((await recordedVersion(a)).version, DIRECTORY_VERSION);
      const changepw = await a.search({ base: BASE, scope: 'sub', filter: `(krbPrincipalName=kadmin/changepw@${REALM})`, attrs: ['1.1'] });
      assert.equal(changepw.entries.length, 1);
      const ranges = await a.search({ base: `cn=ranges,cn=etc,${BASE}`, scope: 'one', attrs: ['1.1'] });
      assert.equal(ranges.entries.length, 1, 'one range, whichever server added it');
      assert.ok(await a.get(`cn=servers,cn=etc,${BASE}`));
    } finally {
      await a.close();
      await b.close();
    }
  });
});
