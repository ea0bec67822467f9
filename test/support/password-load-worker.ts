/**
 * The password AS-REQ load of bench/idp-flows.ts in a worker thread of its
 * own: the bench's main thread also runs the clients that answer the
 * pending flows (each answer an armored request made and read in
 * JavaScript, some 0.1 to 0.2 ms), and sharing one event loop with them,
 * the load's replies waited behind that work while the KDC ran out of
 * requests (13% of the KDC's time idle in the busy phase, with the load's
 * core half busy). Messages: `{ prepare: n }` makes n requests ahead and
 * answers `{ ready: true }`; `{ run: seconds }` runs the load (kdc-load.ts's
 * generator) and answers its result and whether the requests made ahead
 * ran out.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { asPasswordMaker, udpLoad } from './kdc-load.js';

const { port, realm, user, password, concurrency } = workerData as { port: number; realm: string; user: string; password: string; concurrency: number };
/** one password AS-REQ with a nonce of its own, so the KDC's lookaside cache never answers it */
const request = asPasswordMaker(user, realm, password, 18);

let pool: Buffer[] = [];
parentPort!.on('message', async (m: { prepare?: number; run?: number }) => {
  if (m.prepare !== undefined) {
    pool = Array.from({ length: m.prepare }, request);
    parentPort!.postMessage({ ready: true });
    return;
  }
  let used = 0;
  const next = () => (used < pool.length ? pool[used++]! : request());
  const r = await udpLoad({ seconds: m.run!, concurrency, prepared: 0 })([port], next, 0);
  parentPort!.postMessage({ rps: r.rps, errors: r.errors, ranOut: used >= pool.length, made: pool.length });
});
