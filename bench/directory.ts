/**
 * Directory store benchmark: a temporary SQLite store with dirid's schema,
 * 100,000 user-like entries (uid, cn, givenName, sn, mail, object classes)
 * and 1,000 IdP-reference-like entries, then median and p95 latency of a get
 * by DN, an indexed equality search on uid, a substring search over uid and
 * cn with sizeLimit 100, and filters that no index can answer: one that
 * reads and tests every entry, one that SQL pre-selection (entries holding
 * the attribute) answers without reading any.
 *   node --import tsx bench/directory.ts [--users N]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { openSqliteDirectory } from '../src/directory/sqlite.js';
import type { WriteOp } from '../src/directory/types.js';
import { realmSchema } from '../src/objects/index.js';
import { prng } from '../test/support/prng.js';

const { values } = parseArgs({ options: { users: { type: 'string', default: '100000' } } });
const USERS = Number(values.users);
const IDPS = 1000;
const BASE = 'dc=bench,dc=test';
const ORG = ['top', 'dirContainer'];

const tmp = mkdtempSync(join(tmpdir(), 'bench-dir-'));
const path = join(tmp, 'store.db');
const dir = await openSqliteDirectory({ path, baseDn: BASE, schema: realmSchema, masterKey: randomBytes(32), create: true });

/** deterministic, so that runs are comparable */
const rnd = prng(12345);
const letters = 'abcdefghijklmnopqrstuvwxyz';
const word = (len: number) => Array.from({ length: len }, () => letters[rnd(26)]).join('');
const uidOf = (i: number) => `u${i}${word(3)}`;

const users = `cn=users,${BASE}`;
const idps = `cn=idp,${BASE}`;
const t0 = performance.now();
await dir.batch([
  { kind: 'add', dn: users, attrs: { objectClass: ORG } },
  { kind: 'add', dn: idps, attrs: { objectClass: ORG } },
]);
const idpDns: string[] = [];
{
  const ops: WriteOp[] = [];
  for (let i = 0; i < IDPS; i++) {
    const dn = `cn=idp${i},${idps}`;
    idpDns.push(dn);
    ops.push({
      kind: 'add',
      dn,
      attrs: {
        objectClass: ['top', 'dirIdp'],
        dirIdpClientId: [`client-${i}`],
        dirIdpClientSecret: [`secret-${i}-${word(12)}`],
        dirIdpProvider: ['keycloak'],
        dirIdpTokenEndpoint: [`https://idp${i}.example.test/token`],
        dirIdpDevAuthEndpoint: [`https://idp${i}.example.test/device`],
        dirIdpScope: ['openid email'],
      },
    });
  }
  await dir.batch(ops);
}
const userDns: string[] = [];
const uids: string[] = [];
for (let start = 0; start < USERS; start += 5000) {
  const ops: WriteOp[] = [];
  for (let i = start; i < Math.min(USERS, start + 5000); i++) {
    const uid = uidOf(i);
    const given = word(5);
    const sn = word(7);
    const dn = `uid=${uid},${users}`;
    userDns.push(dn);
    uids.push(uid);
    const attrs: Record<string, string[]> = {
      objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'dirUser'],
      uid: [uid],
      cn: [`${given} ${sn}`],
      givenName: [given],
      sn: [sn],
      mail: [`${uid}@bench.test`],
      uidNumber: [String(100000 + i)],
    };
    if (i % 10 === 0) {
      attrs.objectClass!.push('dirIdpUser');
      attrs.dirIdpSub = [`sub-${i}`];
      attrs.dirIdpConfigLink = [idpDns[i % IDPS]!];
    }
    ops.push({ kind: 'add', dn, attrs });
  }
  await dir.batch(ops);
}
const loadSeconds = (performance.now() - t0) / 1000;

type Row = { name: string; runs: number; median: number; p95: number; found: string };
const rows: Row[] = [];
async function measure(name: string, runs: number, op: (i: number) => Promise<number>): Promise<void> {
  const times: number[] = [];
  let found = 0;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    found += await op(i);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
  rows.push({ name, runs, median: q(0.5), p95: q(0.95), found: (found / runs).toFixed(1) });
}

await measure('get by DN', 5000, async () => ((await dir.get(userDns[rnd(USERS)]!)) ? 1 : 0));
await measure('search (uid=X), indexed', 5000, async () => (await dir.search({ base: BASE, scope: 'sub', filter: `(uid=${uids[rnd(USERS)]})` })).entries.length);
await measure('search (|(uid=*abc*)(cn=*abc*)), size 100', 300, async () => {
  const w = word(3);
  return (await dir.search({ base: BASE, scope: 'sub', filter: `(|(uid=*${w}*)(cn=*${w}*))`, sizeLimit: 100 })).entries.length;
});
await measure('search (&(objectClass=dirIdp)(cn=idp1*)), indexed', 300, async () => (await dir.search({ base: BASE, scope: 'sub', filter: '(&(objectClass=dirIdp)(cn=idp1*))' })).entries.length);
await measure('search (|(description=x)(givenName>=zzzzz)), scan', 10, async () => (await dir.search({ base: BASE, scope: 'sub', filter: '(|(description=x)(givenName>=zzzzz))' })).entries.length);
await measure('search (description=*x*), scan, no entry has it', 10, async () => (await dir.search({ base: BASE, scope: 'sub', filter: `(description=*${word(2)}*)` })).entries.length);

const size = statSync(path).size + (() => {
  try {
    return statSync(path + '-wal').size;
  } catch {
    return 0;
  }
})();
console.log(`store: ${USERS} users + ${IDPS} IdP references, loaded in ${loadSeconds.toFixed(1)} s, ${(size / 2 ** 20).toFixed(0)} MiB`);
console.log('operation'.padEnd(52) + 'runs'.padStart(6) + 'median ms'.padStart(12) + 'p95 ms'.padStart(10) + 'entries'.padStart(9));
for (const r of rows) {
  console.log(r.name.padEnd(52) + String(r.runs).padStart(6) + r.median.toFixed(3).padStart(12) + r.p95.toFixed(3).padStart(10) + r.found.padStart(9));
}
await dir.close();
rmSync(tmp, { recursive: true, force: true });
