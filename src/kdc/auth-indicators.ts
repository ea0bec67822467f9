/**
 * Authentication indicators at the KDC (docs/kerberos.md, "Authentication
 * indicators"): the one table of what each pre-authentication method earns
 * a ticket; what a TGT carries, believed only under the KDC verifier of
 * its CAMMAC (kerberos/auth-indicators.ts), so that indicators cross into
 * service tickets and renewals as they were issued; and a server's
 * required indicators (krbPrincipalAuthInd, `service-mod --auth-ind`),
 * which refuse a ticket that carries none of them with KDC_ERR_POLICY and
 * MIT's e-text.
 */
import { kdcVerifiedIndicators } from '../kerberos/auth-indicators.js';
import type { EncTicketPart } from '../kerberos/asn1/ticket.js';
import { tgsPrincipal } from '../kerberos/principal.js';
import { KdcError } from './errors.js';
import type { ExchangeContext } from './exchange-context.js';
import { mapMaybe, type KdcPrincipal, type Maybe } from './principals.js';
import { ticketKey, type TicketSpec } from './tickets.js';

/**
 * The indicators each pre-authentication method earns, as MIT's KDC gives
 * them configured as FreeIPA configures it: a password is "hardened" when
 * FAST protects it (encrypted challenge), and earns nothing bare; the IdP
 * device flow earns "idp". (A new method is one line here.)
 */
export const PREAUTH_INDICATORS = {
  'encrypted-timestamp': [],
  'encrypted-challenge': ['hardened'],
  idp: ['idp'],
  // an anonymous client proved nothing about a user (MIT gives it none)
  'anonymous-pkinit': [],
} as const satisfies Record<string, readonly string[]>;

export type PreauthMethod = keyof typeof PREAUTH_INDICATORS;

/** The indicators an initial ticket gets for the method its client proved itself with. */
export const indicatorsOf = (method: PreauthMethod): readonly string[] => PREAUTH_INDICATORS[method];

/** The krbtgt principal (the KDC verifier's key), at once when cached. */
function krbtgtOf(ctx: ExchangeContext): Maybe<KdcPrincipal> {
  return mapMaybe(ctx.db.find(tgsPrincipal(ctx.realm)), (p) => {
    if (!p) throw new KdcError('KDC_ERR_S_PRINCIPAL_UNKNOWN', 'no krbtgt');
    return p;
  });
}

/** TGTs whose indicators were worked out: a TGT the TGT cache keeps is the same object on each use, so its CAMMAC is checked once. */
const verifiedOf = new WeakMap<EncTicketPart, readonly string[]>();

/**
 * The indicators a TGT carries: those of its CAMMACs whose KDC verifier
 * checks out under the krbtgt key of the verifier's kvno. One that does not
 * is dropped (as MIT's KDC drops it), not refused: the ticket then counts
 * as proving no more than a bare password, which a service requiring
 * indicators refuses anyway; the log says so.
 */
export function tgtIndicators(ctx: ExchangeContext, tgt: EncTicketPart): Maybe<readonly string[]> {
  if (!tgt.authorizationData?.length) return [];
  const known = verifiedOf.get(tgt);
  if (known) return known;
  return mapMaybe(krbtgtOf(ctx), (krbtgt) => {
    const found = kdcVerifiedIndicators(tgt, (kvno, etype) => {
      let best;
      for (const k of krbtgt.keys) if (k.etype === etype && (kvno === undefined ? !best || k.kvno > best.kvno : k.kvno === kvno)) best = k;
      return best && { etype, value: best.key };
    });
    if (found.dropped) ctx.note.authind = `dropped ${found.dropped} CAMMAC(s) that do not verify`;
    verifiedOf.set(tgt, found.indicators);
    return found.indicators;
  });
}

/**
 * The ticket to issue with `indicators`: refused when its server requires
 * indicators and none of them is present (checked for every server, as
 * MIT's KDC does, so `kinit -S` cannot go around it); otherwise carrying
 * them, under the KDC verifier of the krbtgt's ticket key.
 */
export function withIndicators(ctx: ExchangeContext, spec: TicketSpec, indicators: readonly string[]): Maybe<TicketSpec> {
  const required = spec.server.authIndRequired;
  const refused = required?.length && !required.some((r) => indicators.includes(r));
  if (refused || indicators.length || ctx.note.authind) {
    const note = [indicators.length ? indicators.join(',') : 'none', refused ? `required ${required.join(',')}` : '', ctx.note.authind ?? ''];
    ctx.note.authind = note.filter(Boolean).join('; ');
  }
  if (refused) throw new KdcError('KDC_ERR_POLICY', `Required auth indicators not present in ticket: ${required.join(' ')}`);
  if (indicators.length === 0) return spec;
  return mapMaybe(spec.server.name === tgsPrincipal(ctx.realm) ? spec.server : krbtgtOf(ctx), (krbtgt) => ({ ...spec, authIndicators: { values: indicators, kdc: ticketKey(krbtgt) } }));
}
