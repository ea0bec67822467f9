/**
 * What a host's SSSD checks at every login (docs/hbac.md, "On the hosts"):
 * the virtual attributes `host` and `authorizedService` of a user, which
 * SSSD's LDAP access provider reads with `ldap_access_order = host,
 * authorized_service` (its ldap_user_authorized_host and
 * ldap_user_authorized_service, default names `host` and
 * `authorizedService`). They are computed for the host that asks, known by
 * its bind (SASL GSSAPI as host/FQDN, a host entry of the directory), from
 * the host-based access rules (objects/hbac-eval.ts, the evaluation
 * hbactest runs): `authorizedService` lists the PAM services the enabled
 * rules grant the user on that host (`*` when one grants every service),
 * and `host` is `*` when they grant any, so SSSD allows a login exactly
 * when hbactest would. Where nothing is granted both are absent, which
 * SSSD takes as a refusal. `host` is not the host's name: the values are
 * already worked out for the host the Kerberos key proves, and SSSD would
 * compare a name with the machine's own idea of its name (gethostname, or
 * its canonical form), refusing everyone on a host whose name differs from
 * its principal's (a short name, a container) for no gain. Only a host sees them, and only
 * when it names them in its search (as SSSD does); for anyone else, and
 * for entries that are not users, they do not exist. They are not stored,
 * so a filter on them matches nothing.
 */
import { isChildOf, normalizeDn } from '../directory/dn.js';
import { containers } from '../directory/layout.js';
import type { Entry } from '../directory/types.js';
import type { Principal } from '../framework/command.js';
import type { PartialAttribute } from '../ldap/protocol-responses.js';
import { hostGrants } from '../objects/hbac-eval.js';
import type { Selection } from './attributes.js';
import type { ServiceContext } from './context.js';

/** The names SSSD reads (its defaults for ldap_user_authorized_host and ldap_user_authorized_service), lower-cased. */
const HOST = 'host';
const SERVICE = 'authorizedservice';

/** Whether the principal is a host of the directory (its entry is a child of the hosts' container). */
function isHost(baseDn: string, p: Principal): boolean {
  return isChildOf(normalizeDn(p.dn), normalizeDn(containers(baseDn).hosts));
}

/**
 * The virtual attributes a search adds to each entry it sends, or null
 * when it adds none: the principal is not a host, or the search does not
 * name them. The rules are taken as they stand when the search starts.
 */
export async function hostAccessAttributes(ctx: ServiceContext, principal: Principal | null, sel: Selection, typesOnly: boolean): Promise<((e: Entry) => PartialAttribute[]) | null> {
  if (!principal || !(sel.named.has(HOST) || sel.named.has(SERVICE))) return null;
  if (!isHost(ctx.dir.baseDn, principal)) return null;
  const users = normalizeDn(containers(ctx.dir.baseDn).users);
  const granted = await hostGrants(ctx.dir, principal.dn);
  return (e) => {
    const n = normalizeDn(e.dn);
    if (!isChildOf(n, users)) return [];
    const g = granted(n);
    if (!g.all && g.services.length === 0) return [];
    const out: PartialAttribute[] = [];
    if (sel.named.has(HOST)) out.push({ type: HOST, values: typesOnly ? [] : ['*'] });
    if (sel.named.has(SERVICE)) out.push({ type: 'authorizedService', values: typesOnly ? [] : g.all ? ['*'] : g.services });
    return out;
  };
}
