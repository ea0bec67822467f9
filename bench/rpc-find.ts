/**
 * Benchmark: idp-find and user-find through the HTTPS RPC layer on a realm
 * with 100,000 users and 1,000 IdP references.
 *   node --import tsx bench/rpc-find.ts [--users N] [--idps N] [--rounds N]
 * Prints median and p95 latency per query; as a reference in the same run it
 * also times the RPC `ping` (the fixed cost of HTTPS + session + dispatch), so
 * the ratio find/ping shows what the search itself costs.
 */
import { parseArgs } from 'node:util';
import { startTestRealm } from '../test/support/realm.js';
import { RpcSession } from '../test/support/rpc-client.js';
import { containers } from '../src/directory/layout.js';
import type { WriteOp } from '../src/directory/types.js';

const { values } = parseArgs({ options: { users: { type: 'string', default: '100000' }, idps: { type: 'string', default: '1000' }, rounds: { type: 'string', default: '200' } } });
const USERS = Number(values.users);
const IDPS = Number(values.idps);
const ROUNDS = Number(values.rounds);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

const realm = await startTestRealm({ realm: 'BENCH.TEST', domain: 'bench.test' });
const dir = realm.server.dir;
const c = containers(dir.baseDn);
let t0 = performance.now();
for (let i = 0; i < IDPS; i += 500) {
  const ops: WriteOp[] = [];
  for (let j = i; j < Math.min(IDPS, i + 500); j++) {
    ops.push({
      kind: 'add',
      dn: `cn=idp${j},${c.idp}`,
      attrs: {
        objectClass: ['top', 'dirIdp'],
        cn: [`idp${j}`],
        dirIdpClientId: [`client-${j}`],
        dirIdpClientSecret: [`secret-${j}`],
        dirIdpAuthEndpoint: [`https://idp${j}.example/auth`],
        dirIdpTokenEndpoint: [`https://idp${j}.example/token`],
        dirIdpScope: ['openid email'],
      },
    });
  }
  await dir.batch(ops);
}
for (let i = 0; i < USERS; i += 2000) {
  const ops: WriteOp[] = [];
  for (let j = i; j < Math.min(USERS, i + 2000); j++) {
    ops.push({
      kind: 'add',
      dn: `uid=user${j},${c.users}`,
      attrs: {
        objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'dirUser'],
        uid: [`user${j}`],
        givenName: [`Given${j}`],
        sn: [`Family${j % 977}`],
        cn: [`Given${j} Family${j % 977}`],
        mail: [`user${j}@bench.test`],
      },
    });
  }
  await dir.batch(ops);
}
const loadMs = performance.now() - t0;

const s = new RpcSession(realm.url, realm.ca);
await s.login('admin', realm.adminPassword);
// Node's global HTTPS agent keeps connections alive (Node 19+), so the
// numbers are about the server, not TLS handshakes.

async function time(label: string, fn: () => Promise<unknown>): Promise<{ label: string; median: number; p95: number }> {
  for (let i = 0; i < 5; i++) await fn();
  const xs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    t0 = performance.now();
    await fn();
    xs.push(performance.now() - t0);
  }
  return { label, median: pct(xs, 50), p95: pct(xs, 95) };
}

let k = 0;
const rows = [
  await time('ping (reference)', () => s.call('ping')),
  await time('idp-find (all, sizelimit 100)', () => s.call('idp_find')),
  await time('idp-find --name idpN', () => s.call('idp_find', [], { name: `idp${k++ % IDPS}` })),
  await time('idp-show idpN', () => s.call('idp_show', [`idp${k++ % IDPS}`])),
  await time('user-find --login userN', () => s.call('user_find', [], { login: `user${k++ % USERS}` })),
  await time('user-find CRITERIA (substring, sizelimit 100)', () => s.call('user_find', [`ven${(k++ % 90) + 10}`])),
  await time('user-show userN', () => s.call('user_show', [`user${k++ % USERS}`])),
];
const ping = rows[0]!.median;
console.log(`dirid RPC find benchmark: ${USERS} users, ${IDPS} IdP references (loaded in ${(loadMs / 1000).toFixed(1)} s), ${ROUNDS} rounds each`);
console.log('query'.padEnd(48) + 'median ms'.padStart(10) + 'p95 ms'.padStart(10) + '  ratio to ping');
for (const r of rows) console.log(r.label.padEnd(48) + r.median.toFixed(2).padStart(10) + r.p95.toFixed(2).padStart(10) + `  ${(r.median / ping).toFixed(2)}`);
await realm.stop();
