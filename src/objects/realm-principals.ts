/**
 * The realm's own principals, which the API keeps administrators from
 * breaking by accident: the KDC's names (krbtgt/, kadmin/, WELLKNOWN/),
 * which are no services and get no keytab, and the principals the realm's
 * dirid servers run on (host/, HTTP/, ldap/ of each server), which cannot
 * be deleted, nor changed beyond their description. Which principals are a
 * server's, the server says (Services.serverPrincipals): objects/ does not
 * know the realm's servers itself.
 */
import type { CallContext } from '../framework/command.js';
import { publicError } from '../framework/errors.js';

/** First name components the KDC owns: krbtgt (ticket-granting services), kadmin (the password service), WELLKNOWN (RFC 6111: the anonymous principal). */
export const KDC_COMPONENTS: ReadonlySet<string> = new Set(['krbtgt', 'kadmin', 'WELLKNOWN']);

/** The KDC's first component of `principal` (`krbtgt`, `kadmin`, `WELLKNOWN`), or null for any other name. */
export function kdcComponent(principal: string): string | null {
  const slash = principal.indexOf('/');
  const first = slash < 0 ? null : principal.slice(0, slash);
  return first !== null && KDC_COMPONENTS.has(first) ? first : null;
}

/** The host name of the dirid server that runs on `principal` (`name@REALM`), or null when none does. */
export async function requiringServer(ctx: CallContext, principal: string): Promise<string | null> {
  const lookup = ctx.registry.services.serverPrincipals;
  // the names compare exactly, as the KDC finds them: a server's are stored with its host name in lower case
  return lookup ? ((await lookup()).get(principal) ?? null) : null;
}

/** Refuses `what` (delete, change) on a principal a dirid server of the realm runs on. */
export async function refuseServerPrincipal(ctx: CallContext, principal: string, what: string): Promise<void> {
  const server = await requiringServer(ctx, principal);
  if (server === null) return;
  throw publicError('ValidationError', { name: 'principal', error: `${principal} is required by the dirid server ${server} and cannot be ${what}` });
}
