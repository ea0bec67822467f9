/**
 * Kerberos service principals (HTTP/web.example.test@REALM): add, delete,
 * find, modify and show. A service runs on a host the directory knows
 * (host-add first, or service-add --force), and its host part is kept in
 * lower case, as MIT clients ask for it. A new service gets random keys
 * (keytab.ts); its keytab is retrieved with keytab_get. A service may require
 * authentication indicators (krbPrincipalAuthInd, as FreeIPA names it): the
 * KDC then issues tickets for it only to clients who authenticated in one of
 * those ways (kdc/auth-indicators.ts). A service is not renamed: its keys are
 * salted with its name. The principals a dirid server runs on are not deleted
 * and change only their description (realm-principals.ts). A name another
 * entry holds (a host's host/H, a user's) is a duplicate (principal-name.ts).
 */
import { publicError } from '../framework/errors.js';
import { defineObject } from '../framework/object.js';
import { inRealm } from '../account/lookup.js';
import { newRandomKeys } from '../account/keys.js';
import { hostDn, KNOWN_CONTAINERS } from '../directory/layout.js';
import { kdcComponent, refuseServerPrincipal } from './realm-principals.js';

/** The authentication indicators the KDC issues (docs/kerberos.md, "Authentication indicators"). */
export const authIndicators = ['hardened', 'idp', 'pkinit'] as const;

/** One DNS label in either case: letters, digits and hyphens, neither starting nor ending with a hyphen. */
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';

/** service/host[@REALM]: the host part a host name (no empty label, no trailing dot), in any case until normalised. */
const SERVICE = new RegExp(`^[A-Za-z0-9_.-]{1,64}/${LABEL}(?:\\.${LABEL})*(?:@[A-Z0-9.-]{1,253})?$`);

/** `service/HOST@REALM` with the host part in lower case. */
export function lowerHostPart(principal: string): string {
  const slash = principal.indexOf('/');
  const at = principal.lastIndexOf('@');
  if (slash < 0) return principal;
  const end = at > slash ? at : principal.length;
  return principal.slice(0, slash + 1) + principal.slice(slash + 1, end).toLowerCase() + principal.slice(end);
}

/** The host part of `service/host@REALM`. */
function hostPart(principal: string): string {
  const at = principal.lastIndexOf('@');
  return principal.slice(principal.indexOf('/') + 1, at < 0 ? undefined : at);
}

export const serviceObject = defineObject({
  name: 'service',
  label: 'services',
  labelSingular: 'service',
  doc: 'Kerberos service principals.',
  container: KNOWN_CONTAINERS.services,
  readBy: 'authenticated',
  rdnAttr: 'krbPrincipalName',
  objectClasses: ['top', 'krbPrincipal', 'krbPrincipalAux'],
  pkey: 'principal',
  params: {
    principal: {
      attr: 'krbPrincipalName',
      type: 'str',
      label: 'Principal name',
      doc: 'Service principal, service/host.name[@REALM]',
      pattern: SERVICE,
      patternError: 'must be service/host.name or service/host.name@REALM, the host name made of labels of letters, digits and hyphens, with no empty label, no label starting or ending with a hyphen and no trailing dot',
      maxLength: 512,
    },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Description', maxLength: 1024 },
    auth_ind: {
      attr: 'krbPrincipalAuthInd',
      type: 'enum',
      values: authIndicators,
      multivalue: true,
      label: 'Authentication Indicators',
      doc: 'Issue tickets for the service only to clients who authenticated in one of these ways: hardened (a password under FAST armor), idp (an external IdP), pkinit (a certificate)',
    },
  },
  noRename: true,
  extraOptions: {
    add: { force: { type: 'bool', flag: true, label: 'Force', doc: 'Add the service even when its host is not in the directory' } },
  },
  defaultAttributes: ['principal', 'description', 'auth_ind'],
  searchAttributes: ['principal', 'description'],
  normalizePkey: (v, ctx) => lowerHostPart(inRealm(v, ctx.server.realm)),
  hooks: {
    async preAdd(ctx, attrs, options, pkey) {
      if (!pkey.endsWith(`@${ctx.server.realm}`)) throw publicError('ValidationError', { name: 'principal', error: `must be in realm ${ctx.server.realm}` });
      const first = kdcComponent(pkey);
      if (first !== null) throw publicError('ValidationError', { name: 'principal', error: `${first}/ names are the KDC's own (the realm's TGS, its password service, well-known names) and cannot be services` });
      const host = hostPart(pkey);
      if (options.force !== true && !(await ctx.dir.get(hostDn(ctx.dir.baseDn, host), ['1.1']))) {
        throw publicError('NotFound', { reason: `host "${host}" does not exist to add a service to: add it with host-add first, or add the service with --force` });
      }
      attrs.krbPrincipalKey = newRandomKeys();
    },
    async preMod(ctx, mods, _options, entry) {
      // a server's principal may take a description; anything else (its indicators above all) could lock clients out of the server
      if (mods.some((m) => m.attr.toLowerCase() !== 'description')) await refuseServerPrincipal(ctx, entry.attrs.krbPrincipalName?.[0] ?? '', 'changed beyond its description');
    },
    async preDel(ctx, entry) {
      await refuseServerPrincipal(ctx, entry.attrs.krbPrincipalName?.[0] ?? '', 'deleted');
    },
  },
});
