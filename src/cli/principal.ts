/**
 * Who the user is, from the MIT credential cache (cheap: no crypto loaded):
 * the cache's principal, but only while the cache holds a TGT of that
 * principal that has not expired. A cached session is tied to that (see
 * transport.ts): after `kdestroy`, with KRB5CCNAME at a missing or expired
 * cache, or after `kinit` as someone else, no earlier session is used.
 */
import { CONF_REALM, loadCcacheFile, resolveCcacheName, type CcPrincipal } from '../kerberos/ccache.js';
import { tgsPrincipal } from '../kerberos/principal.js';

export const NOT_AUTHENTICATED = 'Insufficient access: not authenticated';

const nameOf = (p: CcPrincipal) => `${p.components.join('/')}@${p.realm}`;

/** The principal of the credential cache when it holds a valid TGT for it; null otherwise. */
export function ticketPrincipal(now = Date.now()): string | null {
  try {
    const cc = loadCcacheFile(resolveCcacheName(process.env.KRB5CCNAME));
    const me = nameOf(cc.principal);
    const tgs = tgsPrincipal(cc.principal.realm);
    const valid = cc.credentials.some((c) => c.server.realm !== CONF_REALM && nameOf(c.server) === tgs && nameOf(c.client) === me && c.endtime * 1000 > now);
    return valid ? me : null;
  } catch {
    return null;
  }
}
