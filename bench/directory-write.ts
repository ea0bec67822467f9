/**
 * Directory write benchmark: user-style entries (dirid's schema, a sealed
 * password, indexed names, a Kerberos principal name) written through the
 * store's Directory API, in batches of 500 and one write per transaction,
 * then modifies the same way, then renames and deletes of group members
 * (each rewrites or drops a 'remove' reference in the member's group).
 *   node --import tsx bench/directory-write.ts [--users N] [--single N]
 * Prints entries per second of each phase and the process's CPU time per
 * entry (steadier than wall time on a shared machine: fsync waits and other
 * processes do not count), and, as a reference measured in the same run,
 * the ratio to raw better-sqlite3 statements writing the same JSON rows into
 * a table of the same shape, with the same pragmas and the same
 * transactions (no rules, no indexes beyond the unique keys): the ratio is
 * what the directory's rules and indexes cost.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { openSqliteDirectory } from '../src/directory/sqlite.js';
import type { Attributes, WriteOp } from '../src/directory/types.js';
import { realmSchema } from '../src/objects/index.js';

const { values } = parseArgs({ options: { users: { type: 'string', default: '20000' }, single: { type: 'string', default: '1000' } } });
const USERS = Number(values.users);
const SINGLE = Number(values.single);
const BATCH = 500;
const BASE = 'dc=bench,dc=test';
const USERS_DN = `cn=users,${BASE}`;
const GROUPS_DN = `cn=groups,${BASE}`;

const tmp = mkdtempSync(join(tmpdir(), 'bench-dir-write-'));
const dir = await openSqliteDirectory({ path: join(tmp, 'store.db'), baseDn: BASE, schema: realmSchema, masterKey: randomBytes(32), create: true });
await dir.batch([
  { kind: 'add', dn: USERS_DN, attrs: { objectClass: ['top', 'dirContainer'] } },
  { kind: 'add', dn: GROUPS_DN, attrs: { objectClass: ['top', 'dirContainer'] } },
]);

const userDn = (i: number) => `uid=user${i},${USERS_DN}`;
function userAttrs(i: number): Attributes {
  return {
    objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'dirUser', 'krbPrincipalAux'],
    uid: [`user${i}`],
    cn: [`Given${i} Family${i % 977}`],
    givenName: [`Given${i}`],
    sn: [`Family${i % 977}`],
    mail: [`user${i}@bench.test`],
    uidNumber: [String(100000 + i)],
    krbPrincipalName: [`user${i}@BENCH.TEST`],
    userPassword: [`password-${i}`],
  };
}
const modsOf = (i: number, round: number) => [
  { op: 'replace' as const, attr: 'mail', values: [`user${i}.${round}@bench.test`] },
  { op: 'replace' as const, attr: 'krbLoginFailedCount', values: [String(round)] },
];

/** The raw reference: the same rows as JSON text, in a table shaped like the store's. */
const raw = new Database(join(tmp, 'raw.db'));
raw.pragma('journal_mode = WAL');
raw.pragma('synchronous = FULL');
raw.exec('CREATE TABLE entries (id INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE, dn TEXT NOT NULL, ndn TEXT NOT NULL UNIQUE, parent INTEGER, attrs TEXT NOT NULL, secrets TEXT)');
const rawInsert = raw.prepare('INSERT INTO entries (uuid, dn, ndn, parent, attrs, secrets) VALUES (?, ?, ?, ?, ?, ?)');
const rawUpdate = raw.prepare('UPDATE entries SET attrs = ? WHERE ndn = ?');
const rawMove = raw.prepare('UPDATE entries SET dn = ?, ndn = ? WHERE ndn = ?');
const rawDelete = raw.prepare('DELETE FROM entries WHERE ndn = ?');
const now = '20260101000000Z';
function rawRow(i: number): [string, string, string, number, string, string] {
  const { userPassword, ...rest } = userAttrs(i);
  const uuid = randomUUID();
  const attrs = { ...rest, entryUUID: [uuid], createTimestamp: [now], modifyTimestamp: [now] };
  return [uuid, userDn(i), userDn(i).toLowerCase(), 2, JSON.stringify(attrs), JSON.stringify({ userPassword: [`v1:${userPassword![0]}`] })];
}
function rawModified(i: number, round: number): string {
  const { userPassword, ...rest } = userAttrs(i);
  void userPassword;
  return JSON.stringify({ ...rest, mail: [`user${i}.${round}@bench.test`], krbLoginFailedCount: [String(round)], modifyTimestamp: [now] });
}

type Phase = { name: string; n: number; ms: number; cpuMs: number; rawMs: number; rawCpuMs: number };
const phases: Phase[] = [];
const cpuMs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};
async function phase(name: string, n: number, run: () => Promise<void>, reference: () => void): Promise<void> {
  let t = performance.now();
  let c = process.cpuUsage();
  await run();
  const ms = performance.now() - t;
  const cpu = cpuMs(c);
  t = performance.now();
  c = process.cpuUsage();
  reference();
  phases.push({ name, n, ms, cpuMs: cpu, rawMs: performance.now() - t, rawCpuMs: cpuMs(c) });
}
const inBatches = (n: number, from: number, op: (i: number) => WriteOp) => async () => {
  for (let s = from; s < from + n; s += BATCH) {
    await dir.batch(Array.from({ length: Math.min(BATCH, from + n - s) }, (_, k) => op(s + k)));
  }
};
const rawInBatches = (n: number, from: number, op: (i: number) => void) => () => {
  for (let s = from; s < from + n; s += BATCH) raw.transaction(() => { for (let i = s; i < Math.min(from + n, s + BATCH); i++) op(i); })();
};

await phase('add, batches of 500', USERS, inBatches(USERS, 0, (i) => ({ kind: 'add', dn: userDn(i), attrs: userAttrs(i) })), rawInBatches(USERS, 0, (i) => rawInsert.run(...rawRow(i))));
await phase('modify, batches of 500', USERS, inBatches(USERS, 0, (i) => ({ kind: 'modify', dn: userDn(i), mods: modsOf(i, 1) })), rawInBatches(USERS, 0, (i) => rawUpdate.run(rawModified(i, 1), userDn(i).toLowerCase())));
const S0 = USERS;
await phase(
  'add, one per transaction',
  SINGLE,
  async () => {
    for (let i = S0; i < S0 + SINGLE; i++) await dir.add(userDn(i), userAttrs(i));
  },
  () => {
    for (let i = S0; i < S0 + SINGLE; i++) raw.transaction(() => rawInsert.run(...rawRow(i)))();
  },
);
await phase(
  'modify, one per transaction',
  SINGLE,
  async () => {
    for (let i = S0; i < S0 + SINGLE; i++) await dir.modify(userDn(i), modsOf(i, 2));
  },
  () => {
    for (let i = S0; i < S0 + SINGLE; i++) raw.transaction(() => rawUpdate.run(rawModified(i, 2), userDn(i).toLowerCase()))();
  },
);
// groups of 10 members: a rename rewrites the member's value in its group, a delete drops it
const groupDn = (g: number) => `cn=group${g},${GROUPS_DN}`;
for (let g = 0; g * 10 < SINGLE; g++) {
  const members = Array.from({ length: Math.min(10, SINGLE - g * 10) }, (_, k) => userDn(S0 + g * 10 + k));
  await dir.add(groupDn(g), { objectClass: ['top', 'dirGroup'], member: members });
}
const renamedDn = (i: number) => `uid=renamed${i},${USERS_DN}`;
await phase(
  'rename a group member, one per transaction',
  SINGLE,
  async () => {
    for (let i = S0; i < S0 + SINGLE; i++) await dir.rename(userDn(i), `uid=renamed${i}`);
  },
  () => {
    for (let i = S0; i < S0 + SINGLE; i++) raw.transaction(() => rawMove.run(renamedDn(i), renamedDn(i).toLowerCase(), userDn(i).toLowerCase()))();
  },
);
await phase(
  'delete a group member, one per transaction',
  SINGLE,
  async () => {
    for (let i = S0; i < S0 + SINGLE; i++) await dir.delete(renamedDn(i));
  },
  () => {
    for (let i = S0; i < S0 + SINGLE; i++) raw.transaction(() => rawDelete.run(renamedDn(i).toLowerCase()))();
  },
);
const left = (await dir.search({ base: GROUPS_DN, scope: 'one', filter: '(member=*)' })).entries.length;
if (left !== 0) throw new Error(`${left} groups still hold members after their deletion`);

console.log(`dirid directory write benchmark: ${USERS} batched users, ${SINGLE} single writes (SQLite, synchronous=FULL)`);
console.log('phase'.padEnd(46) + 'entries'.padStart(8) + 'entries/s'.padStart(11) + 'raw/s'.padStart(9) + 'ratio'.padStart(7) + 'cpu µs/entry'.padStart(14) + 'raw'.padStart(6) + 'ratio'.padStart(7));
for (const p of phases) {
  const rate = (p.n / p.ms) * 1000;
  const rawRate = (p.n / p.rawMs) * 1000;
  const cpu = (p.cpuMs / p.n) * 1000;
  const rawCpu = (p.rawCpuMs / p.n) * 1000;
  console.log(
    p.name.padEnd(46) +
      String(p.n).padStart(8) +
      rate.toFixed(0).padStart(11) +
      rawRate.toFixed(0).padStart(9) +
      (p.ms / p.rawMs).toFixed(2).padStart(7) +
      cpu.toFixed(0).padStart(14) +
      rawCpu.toFixed(0).padStart(6) +
      (p.cpuMs / p.rawCpuMs).toFixed(2).padStart(7),
  );
}
await dir.close();
raw.close();
rmSync(tmp, { recursive: true, force: true });
