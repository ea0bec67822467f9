/**
 * The API schema on the client (docs/conventions.md, Schema cache): fetched with the
 * `schema` command, cached per user (under $XDG_CACHE_HOME/dirid or
 * ~/.cache/dirid) and per server with its fingerprint and TTL, reused until
 * the TTL runs out, then revalidated with known_fingerprints. Deleting the
 * cache directory forces a refresh; a damaged file is ignored.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiContract, CommandSpec } from '../contract/api-contract.js';
import type { RpcResponse } from '../rpc/codec/types.js';
import { cacheDir } from './config.js';
import { CliError } from './errors.js';

export interface CachedSchema {
  fingerprint: string;
  ttl: number;
  fetchedAt: number;
  contract: ApiContract;
}

export function schemaFileFor(server: string): string {
  return join(cacheDir(), 'schema', `${createHash('sha256').update(server).digest('hex').slice(0, 24)}.json`);
}

export function readCachedSchema(server: string): CachedSchema | null {
  try {
    const v = JSON.parse(readFileSync(schemaFileFor(server), 'utf8')) as CachedSchema;
    if (typeof v.fingerprint !== 'string' || typeof v.ttl !== 'number' || typeof v.fetchedAt !== 'number' || !v.contract || !Array.isArray(v.contract.commands) || !Array.isArray(v.contract.objects)) return null;
    return v;
  } catch {
    return null;
  }
}

export function isFresh(s: CachedSchema, now = Date.now()): boolean {
  // a fetch time in the future (clock set back, damaged file) is not trusted
  return s.fetchedAt <= now && s.fetchedAt + s.ttl * 1000 > now;
}

export function writeCachedSchema(server: string, s: CachedSchema): void {
  mkdirSync(join(cacheDir(), 'schema'), { recursive: true, mode: 0o700 });
  const f = schemaFileFor(server);
  const tmp = `${f}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(s), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, f);
}

/** Turns a `schema` response into a cache entry (reusing `old` when unchanged). */
export function schemaFromResponse(resp: RpcResponse, old: CachedSchema | null): CachedSchema {
  const r = (resp.result as { result?: Record<string, unknown> } | null)?.result;
  if (!r || typeof r.fingerprint !== 'string') throw new CliError('the server sent no schema');
  const ttl = typeof r.ttl === 'number' && Number.isFinite(r.ttl) && r.ttl >= 0 ? r.ttl : 0;
  if (r.unchanged === true && old && old.fingerprint === r.fingerprint) return { ...old, fetchedAt: Date.now(), ttl };
  if (!Array.isArray(r.commands) || !Array.isArray(r.objects)) throw new CliError('the server sent no schema');
  return {
    fingerprint: r.fingerprint,
    ttl,
    fetchedAt: Date.now(),
    contract: { api_version: String(r.api_version), commands: r.commands as CommandSpec[], objects: r.objects as ApiContract['objects'] },
  };
}

/**
 * The schema to use for `server`: the cached one while fresh; otherwise
 * asks the server (sending the cached fingerprint, so an unchanged schema
 * costs a few bytes) and stores the answer. `fetchSchema` makes the
 * `schema` call and returns its response (errors already raised).
 */
export async function currentSchema(server: string, fetchSchema: (knownFingerprints: string[]) => Promise<RpcResponse>, now = Date.now()): Promise<CachedSchema> {
  const cached = readCachedSchema(server);
  if (cached && isFresh(cached, now)) return cached;
  const resp = await fetchSchema(cached ? [cached.fingerprint] : []);
  const schema = schemaFromResponse(resp, cached);
  writeCachedSchema(server, schema);
  return schema;
}
