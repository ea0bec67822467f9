/** Who the user is, from the MIT credential cache (cheap: no crypto loaded). */
import { loadCcacheFile, resolveCcacheName } from '../kerberos/ccache.js';

export const NOT_AUTHENTICATED = 'Insufficient access: not authenticated';

export function cachedPrincipal(): string | null {
  try {
    const cc = loadCcacheFile(resolveCcacheName(process.env.KRB5CCNAME));
    return `${cc.principal.components.join('/')}@${cc.principal.realm}`;
  } catch {
    return null;
  }
}
