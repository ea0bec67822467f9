/**
 * Host-based access benchmark (docs/hbac.md): `hbactest` at the size issue
 * 31 names (100,000 users, 1,000 groups, 1,000 hosts, 1,000 access rules),
 * run in process through dispatch (access check, input check, the user's
 * and the host's look-ups, the evaluation of objects/hbac-eval.ts) on a
 * temporary SQLite store with the realm's schema and tree. The HTTPS
 * round trip around it is the API's, not the rule's, and is left out.
 *
 * Data: the users and groups of bench/ldap.ts (test/support/ldap-data.ts:
 * userN, groupG of --members users each, one user in one group or so), and
 * the hosts, 100 nested host groups and --rules rules of
 * test/support/hbac-data.ts (allow_all disabled, so that every rule is
 * tested and few grant).
 *
 * Measured, each over --samples calls with a random user, host and service:
 * hbactest (p50, p90, p99, max), with the index of the rules built; the
 * first hbactest after a rule's write (the rules read again), over 20
 * writes; the first after a group's write (the membership index built
 * again), over 20 writes; and grantedServices, what the LDAP service works
 * out per user entry it sends a host.
 *   node --import tsx bench/hbac.ts [--users N] [--groups N] [--members N] [--hosts N] [--rules N] [--samples N]
 *
 * Figures on the shared 2-core development machine (Node 24), 100,000
 * users, 1,000 groups of 100, 1,000 hosts, 1,000 rules: hbactest p50
 * 0.067 ms, p99 0.12 ms; first after a rule's write p50 2.3 ms, p99 5.8 ms;
 * first after a group's write p50 25 ms, p99 50 ms; grantedServices p50
 * 0.003 ms, p99 0.06 ms (docs/hbac.md, "Performance").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { openSqliteDirectory } from '../src/directory/sqlite.js';
import { dispatch } from '../src/framework/dispatch.js';
import type { CallContext } from '../src/framework/command.js';
import { buildRegistry, realmSchema, realmTree } from '../src/objects/index.js';
import { grantedServices } from '../src/objects/hbac-eval.js';
import { prng } from '../test/support/prng.js';
import { BASE_DN, BENCH_REALM, DATA_SIZE_OPTIONS, dataSize, diridGroupBatches, diridUserBatches, groupDn, memberships, userDn, userName, type DataSize } from '../test/support/ldap-data.js';
import { hbacBatches, hostDn, hostName, ruleDn } from '../test/support/hbac-data.js';

const { values } = parseArgs({
  options: {
    ...DATA_SIZE_OPTIONS,
    samples: { type: 'string', default: '20000' },
  },
});
const SIZE: DataSize = dataSize(values);
const SAMPLES = Number(values.samples);

const ASKED = ['sshd', 'login', 'su', 'sudo', 'sudo-i', 'systemd-user', 'cron'];

const tmp = mkdtempSync(join(tmpdir(), 'bench-hbac-'));
const dir = await openSqliteDirectory({ path: join(tmp, 'store.db'), baseDn: BASE_DN, schema: realmSchema, masterKey: randomBytes(32), create: true });
try {
  const t0 = performance.now();
  const tree = realmTree({ baseDn: BASE_DN, realm: BENCH_REALM });
  await dir.batch([...tree.containers, ...tree.entries, ...tree.initial]);
  // every user with the same (unused) password hash: the bench never binds
  for (const ops of diridUserBatches(SIZE, '{SCRYPT}unused')) await dir.batch(ops);
  for (const ops of diridGroupBatches(memberships(SIZE))) await dir.batch(ops);
  for (const ops of hbacBatches(SIZE)) await dir.batch(ops);
  console.log(`loaded ${SIZE.users} users, ${SIZE.groups} groups of ${SIZE.members}, ${SIZE.hosts} hosts, ${Math.min(100, SIZE.hosts)} host groups, ${SIZE.rules} rules in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const rand = prng(0x7e57);
  const registry = buildRegistry();
  const ctx = (): CallContext => ({
    dir,
    principal: { name: `admin@${BENCH_REALM}`, dn: `uid=admin,cn=users,cn=accounts,${BASE_DN}`, uid: 'admin' },
    server: { version: '0', apiVersion: '1', realm: BENCH_REALM, domain: 'bench.test', searchSizeLimit: 100, searchTimeLimit: 2 },
    cache: new Map(),
    registry,
  });
  const call = () => {
    const u = rand(SIZE.users);
    const h = rand(SIZE.hosts);
    return dispatch(ctx(), 'hbactest', [], { user: userName(u), host: hostName(h), service: ASKED[rand(ASKED.length)]! });
  };
  const stats = (ms: number[]) => {
    const s = [...ms].sort((a, b) => a - b);
    const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!.toFixed(3);
    return `p50 ${q(0.5)} ms, p90 ${q(0.9)} ms, p99 ${q(0.99)} ms, max ${s[s.length - 1]!.toFixed(3)} ms (${s.length} calls)`;
  };

  await call();
  for (let i = 0; i < 500; i++) await call();
  const times: number[] = [];
  let granted = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    const r = await call();
    times.push(performance.now() - t);
    if (r.value === true) granted++;
  }
  console.log(`hbactest, index built: ${stats(times)}; access granted in ${granted}`);

  const cold: number[] = [];
  for (let i = 0; i < 20; i++) {
    await dir.modify(ruleDn(`rule${i}`), [{ op: 'replace', attr: 'description', values: [`changed ${i}`] }]);
    const t = performance.now();
    await call();
    cold.push(performance.now() - t);
  }
  console.log(`hbactest, first after a rule's write (the rules read again): ${stats(cold)}`);

  const afterGroup: number[] = [];
  for (let i = 0; i < 20; i++) {
    await dir.modify(groupDn(i), [{ op: 'add', attr: 'member', values: [userDn(SIZE.users - 1 - i)] }]);
    const t = performance.now();
    await call();
    afterGroup.push(performance.now() - t);
  }
  console.log(`hbactest, first after a group's write (the memberships read again): ${stats(afterGroup)}`);

  const per: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now();
    await grantedServices(dir, userDn(rand(SIZE.users)), hostDn(rand(SIZE.hosts)));
    per.push(performance.now() - t);
  }
  console.log(`grantedServices per user entry a host reads (LDAP): ${stats(per)}`);
} finally {
  await dir.close();
  rmSync(tmp, { recursive: true, force: true });
}
