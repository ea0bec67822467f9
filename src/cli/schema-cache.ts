/**
 * The API schema on the client (specification §9.3): fetched with the
 * `schema` command, cached per user (under $XDG_CACHE_HOME/dirid or
 * ~/.cache/dirid) and per server with its fingerprint and TTL, reused until
 * the TTL runs out, then revalidated with known_fingerprints. Deleting the
 * cache directory forces a refresh; a damaged file is ignored.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ApiContract, CommandSpec } from '../framework/api.js';
import type { RpcResponse } from '../rpc/codec/types.js';
import { cacheDir } from './config.js';

export interface CachedSchema {
  fingerprint: string;
  ttl: number;
  fetchedAt: number;
  contract: ApiContract;
}

function fileFor(server: string): string {
  return join(cacheDir(), 'schema', `${createHash('sha256').update(server).digest('hex').slice(0, 24)}.json`);
}

export function readCachedSchema(server: string): CachedSchema | null {
  try {
    const v = JSON.parse(readFileSync(fileFor(server), 'utf8')) as CachedSchema;
    if (typeof v.fingerprint !== 'string' || typeof v.ttl !== 'number' || !v.contract || !Array.isArray(v.contract.commands)) return null;
    return v;
  } catch {
    return null;
  }
}

export function isFresh(s: CachedSchema, now = Date.now()): boolean {
  return s.fetchedAt + s.ttl * 1000 > now;
}

export function writeCachedSchema(server: string, s: CachedSchema): void {
  mkdirSync(join(cacheDir(), 'schema'), { recursive: true, mode: 0o700 });
  const f = fileFor(server);
  writeFileSync(f, JSON.stringify(s), { mode: 0o600 });
  chmodSync(f, 0o600);
}

/** Turns a `schema` response into a cache entry (reusing `old` when unchanged). */
export function schemaFromResponse(resp: RpcResponse, old: CachedSchema | null): CachedSchema {
  const r = (resp.result as { result?: Record<string, unknown> } | null)?.result;
  if (!r || typeof r.fingerprint !== 'string') throw new Error('the server sent no schema');
  if (r.unchanged === true && old) return { ...old, fetchedAt: Date.now(), ttl: Number(r.ttl) };
  return {
    fingerprint: r.fingerprint,
    ttl: Number(r.ttl),
    fetchedAt: Date.now(),
    contract: { api_version: String(r.api_version), commands: r.commands as CommandSpec[], objects: r.objects as ApiContract['objects'] },
  };
}
