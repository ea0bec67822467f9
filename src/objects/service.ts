/**
 * Kerberos service principals (HTTP/web.example.test@REALM): add, delete,
 * find, modify and show. A new service gets random keys (keytab.ts); its
 * keytab is retrieved with keytab_get. A service may require authentication
 * indicators (krbPrincipalAuthInd, as FreeIPA names it): the KDC then issues
 * tickets for it only to clients who authenticated in one of those ways
 * (kdc/auth-indicators.ts). A service is not renamed: its keys are salted
 * with its name. A name another entry holds (a host's host/H, a user's) is
 * a duplicate (principal-name.ts).
 */
import type { Command } from '../framework/command.js';
import { crudCommands } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';
import { defineObject } from '../framework/object.js';
import { inRealm } from '../account/lookup.js';
import { newRandomKeys } from '../account/keys.js';
import { checkNewPrincipalNames } from './principal-name.js';

/** The authentication indicators the KDC issues (docs/kerberos.md, "Authentication indicators"). */
export const authIndicators = ['hardened', 'idp', 'pkinit'] as const;

/** First name components the KDC owns: krbtgt (ticket-granting services), kadmin (the password service), WELLKNOWN (RFC 6111: the anonymous principal). */
const RESERVED: ReadonlySet<string> = new Set(['krbtgt', 'kadmin', 'WELLKNOWN']);

const SERVICE = /^[A-Za-z0-9_.-]{1,64}\/[A-Za-z0-9.-]{1,253}(@[A-Z0-9.-]{1,253})?$/;

export const serviceObject = defineObject({
  name: 'service',
  label: 'services',
  labelSingular: 'service',
  doc: 'Kerberos service principals.',
  container: 'services',
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
      patternError: 'must be service/host.name or service/host.name@REALM',
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
  defaultAttributes: ['principal', 'description', 'auth_ind'],
  searchAttributes: ['principal', 'description'],
  normalizePkey: (v, ctx) => inRealm(v, ctx.server.realm),
  hooks: {
    async preAdd(ctx, attrs, _options, pkey) {
      if (!pkey.endsWith(`@${ctx.server.realm}`)) throw publicError('ValidationError', { name: 'principal', error: `must be in realm ${ctx.server.realm}` });
      const first = pkey.slice(0, pkey.indexOf('/'));
      if (RESERVED.has(first)) throw publicError('ValidationError', { name: 'principal', error: `${first}/ names are the KDC's own (the realm's TGS, its password service, well-known names) and cannot be services` });
      attrs.krbPrincipalKey = newRandomKeys();
    },
    // its name (host/H of a host included) and any alias are no other entry's
    complete: (ctx, entry) => checkNewPrincipalNames(ctx, entry),
  },
});

export function serviceCommands(): Command[] {
  return crudCommands({ ...serviceObject, methods: ['add', 'del', 'find', 'show', 'mod'] });
}
