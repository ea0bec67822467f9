/**
 * What an AS or TGS exchange is given: the KDC's principals and policy, its
 * clock, the request as received and where from, its cookie jar and the state it keeps
 * between requests, the server's IdP client, its PKINIT certificate and
 * key, and what the log line will say.
 */
import type { IdpClient } from '../oauth/client.js';
import type { CookieJar } from './cookie-jar.js';
import type { FastState } from './fast.js';
import type { PrincipalDb, RealmPolicy } from './principals.js';
import type { KdcCaches } from './state.js';
import type { PkinitIdentity } from './pkinit-identity.js';
import type { AnonymousArmorIdp } from './idp-starts.js';

export interface ExchangeContext {
  db: PrincipalDb;
  realm: string;
  /** the realm's ticket policy, read before the exchange starts */
  policy: RealmPolicy;
  now: () => number;
  /** the request exactly as received (RFC 6806 checksums cover it) */
  raw: Buffer;
  /** the address it came from (an IP literal), when the listener knows it */
  from?: string | undefined;
  /** what anonymous armor may do for the idp mechanism (server.conf idp_anonymous_armor; idp-starts.ts); unset: deny */
  idpAnonymousArmor?: AnonymousArmorIdp;
  cookies: CookieJar;
  /** what this KDC remembers between requests (opened TGTs, the replay cache) */
  caches: KdcCaches;
  /** the server's IdP client (trusts the configured IdP CA bundle; its discovery and key caches) */
  idp: IdpClient;
  /** the KDC's certificate and key for anonymous PKINIT (pkinit.ts), when it has them */
  pkinit?: PkinitIdentity | undefined;
  /** set once an armored request has been unwrapped; errors are then armored too */
  fast?: FastState;
  /** what the log line should say about the request, and its metrics */
  note: KdcNote;
}

/** What one step of the idp pre-authentication came to at its IdP reference (counted per reference: server/metrics.ts). */
export type IdpStepOutcome = 'started' | 'pending' | 'slow_down' | 'not_polled' | 'unreachable' | 'authenticated' | 'another_account' | 'user_not_found' | 'expired' | 'failed';

export interface KdcNote {
  client?: string;
  server?: string;
  etype?: number;
  preauth?: string;
  authind?: string;
  /** the IdP reference a device-flow step went to, and what it came to */
  idp?: { reference: string; outcome: IdpStepOutcome };
}
