/**
 * One server's IdP client: the HTTP client for IdP endpoints (http.ts: one
 * TLS context, the configured IdP CAs) and what it remembers between calls,
 * the discovery documents per issuer (discovery.ts) and the JWKS key sets
 * per URL (key-sets.ts). The server makes one and hands it to the KDC and to
 * the discovery that idp-add runs and to idp-check, so two servers in one process share no
 * cached document or key.
 */
import type { AuthorizationServer } from 'oauth4webapi';
import type { FetchLike } from './http.js';
import { KeySetCache } from './key-sets.js';

export class IdpClient {
  /** discovery documents by issuer URL, each with the time it expires (epoch ms) */
  readonly discovery = new Map<string, { as: AuthorizationServer; expires: number }>();
  readonly keySets = new KeySetCache();

  constructor(readonly fetch: FetchLike) {}
}
