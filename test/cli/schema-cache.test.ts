/**
 * The per-user, per-server schema cache (specification §9.3): reuse while
 * the TTL runs, revalidate with known_fingerprints after it, refresh when
 * the cache directory is deleted, ignore and replace damaged files.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RpcResponse, WireValue } from '../../src/rpc/codec/types.js';
import { currentSchema, isFresh, readCachedSchema, schemaFileFor } from '../../src/cli/schema-cache.js';
import { CliError } from '../../src/cli/errors.js';

const SERVER = 'https://ipa1.example.test/dirid/xml';
const contract = { api_version: '1.1', commands: [{ name: 'ping', cli_name: 'ping', doc: 'Ping', object: null, output: 'summary', access: 'authenticated', args: [], options: [] }], objects: [] };

/** A stand-in for the server's `schema` command that records what it was asked. */
function fakeServer(fingerprint: string) {
  const asked: string[][] = [];
  return {
    asked,
    fingerprint,
    async fetch(known: string[]): Promise<RpcResponse> {
      asked.push(known);
      const result: WireValue = known.includes(this.fingerprint) ? { fingerprint: this.fingerprint, ttl: 60, unchanged: true } : { fingerprint: this.fingerprint, ttl: 60, unchanged: false, ...contract };
      return { result: { result, value: null, summary: null }, error: null, id: 0, principal: 'admin@EXAMPLE.TEST', version: '0.1.0' };
    },
  };
}

describe('schema cache', () => {
  let dir: string;
  const saved = process.env.XDG_CACHE_HOME;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'dirid-schema-'));
    process.env.XDG_CACHE_HOME = dir;
  });
  after(() => {
    if (saved === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it('fetches once, then reuses the cached schema while the TTL runs', async () => {
    const srv = fakeServer('f1');
    const t0 = Date.now();
    const a = await currentSchema(SERVER, (k) => srv.fetch(k), t0);
    assert.deepEqual(srv.asked, [[]]);
    assert.equal(a.fingerprint, 'f1');
    assert.deepEqual(a.contract.commands.map((c) => c.name), ['ping']);
    const f = schemaFileFor(SERVER);
    assert.ok(f.startsWith(join(dir, 'dirid', 'schema') + '/'));
    assert.equal(statSync(f).mode & 0o777, 0o600);
    await currentSchema(SERVER, (k) => srv.fetch(k), t0 + 59_000);
    assert.deepEqual(srv.asked, [[]], 'no second fetch within the TTL');
  });

  it('after the TTL revalidates with known_fingerprints: unchanged keeps the contract', async () => {
    const srv = fakeServer('f1');
    const later = Date.now() + 61_000;
    const s = await currentSchema(SERVER, (k) => srv.fetch(k), later);
    assert.deepEqual(srv.asked, [['f1']]);
    assert.deepEqual(s.contract.commands.map((c) => c.name), ['ping']);
    assert.ok(isFresh(readCachedSchema(SERVER)!, Date.now() + 1000), 'the revalidated schema is fresh again');
  });

  it('a changed fingerprint replaces the cached schema', async () => {
    const srv = fakeServer('f2');
    const s = await currentSchema(SERVER, (k) => srv.fetch(k), Date.now() + 120_000);
    assert.deepEqual(srv.asked, [['f1']]);
    assert.equal(s.fingerprint, 'f2');
    assert.equal(readCachedSchema(SERVER)!.fingerprint, 'f2');
  });

  it('deleting the cache directory forces a refresh', async () => {
    rmSync(join(dir, 'dirid'), { recursive: true, force: true });
    const srv = fakeServer('f2');
    await currentSchema(SERVER, (k) => srv.fetch(k));
    assert.deepEqual(srv.asked, [[]]);
  });

  it('damaged or foreign cache files are ignored and replaced', async () => {
    for (const junk of ['{not json', '{"fingerprint":"f2","ttl":60}', JSON.stringify({ fingerprint: 'f2', ttl: 60, fetchedAt: Date.now() + 1e9, contract })]) {
      writeFileSync(schemaFileFor(SERVER), junk);
      const srv = fakeServer('f2');
      const s = await currentSchema(SERVER, (k) => srv.fetch(k));
      assert.equal(srv.asked.length, 1, junk);
      assert.deepEqual(s.contract.commands.map((c) => c.name), ['ping']);
      assert.equal(JSON.parse(readFileSync(schemaFileFor(SERVER), 'utf8')).fingerprint, 'f2');
    }
  });

  it('an answer without a schema is an error, not a crash', async () => {
    rmSync(join(dir, 'dirid'), { recursive: true, force: true });
    const empty = async (): Promise<RpcResponse> => ({ result: { result: { fingerprint: 'x', ttl: 60, unchanged: true } }, error: null, id: 0, principal: null, version: '0' });
    await assert.rejects(currentSchema(SERVER, empty), (e: unknown) => e instanceof CliError && e.message === 'the server sent no schema');
    assert.equal(readCachedSchema(SERVER), null);
  });

  it('servers have separate caches', () => {
    assert.notEqual(schemaFileFor(SERVER), schemaFileFor('https://ipa2.example.test/dirid/xml'));
  });
});
