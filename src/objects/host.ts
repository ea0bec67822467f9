/**
 * Hosts (computers) and their host/ principals (host/web.example.test@REALM):
 * add, delete, find and show. A host name is kept in lower case, whatever
 * case it is given in; a new host needs a fully qualified name, while a
 * server's own host entry may have a short one (`localhost`). A new host
 * gets its principal name from its name and random keys (keytab.ts).
 * Deleting a host deletes the services that run on it (service/<host>); the
 * host entry of a dirid server is not deleted (realm-principals.ts); a
 * name another entry holds is a duplicate (principal-name.ts).
 */
import type { Command } from '../framework/command.js';
import { crudCommands } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';
import { defineObject } from '../framework/object.js';
import { FQDN, HOST_NAME } from '../framework/params.js';
import { newRandomKeys } from '../account/keys.js';
import { containers } from '../directory/layout.js';
import { escapeFilterValue } from '../directory/filter.js';
import { refuseServerPrincipal } from './realm-principals.js';

/** A host name in any case (normalised to lower case): labels of letters, digits and hyphens. */
const HOST_NAME_ANY_CASE = new RegExp(HOST_NAME.source, 'i');

export const hostObject = defineObject({
  name: 'host',
  label: 'hosts',
  labelSingular: 'host',
  doc: 'Hosts (computers) and their host/ principals.',
  container: 'hosts',
  rdnAttr: 'fqdn',
  objectClasses: ['top', 'dirHost', 'krbPrincipalAux'],
  pkey: 'fqdn',
  params: {
    fqdn: {
      attr: 'fqdn',
      type: 'str',
      label: 'Host name',
      doc: 'Fully qualified host name',
      pattern: HOST_NAME_ANY_CASE,
      patternError: 'must be a host name: labels of letters, digits and hyphens separated by dots, with no empty label, no label starting or ending with a hyphen and no trailing dot',
    },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Description', maxLength: 1024 },
  },
  computed: { principal: { label: 'Principal name', default: true } },
  defaultAttributes: ['fqdn', 'description'],
  searchAttributes: ['fqdn', 'description'],
  normalizePkey: (v) => v.toLowerCase(),
  hooks: {
    async preAdd(ctx, attrs, _options, pkey) {
      if (!FQDN.test(pkey)) throw publicError('ValidationError', { name: 'fqdn', error: 'must be fully qualified: the host name with its domain, as web.example.test' });
      attrs.cn = [pkey];
      attrs.krbPrincipalName = [`host/${pkey}@${ctx.server.realm}`];
      attrs.krbPrincipalKey = newRandomKeys();
    },
    async preDel(ctx, entry) {
      for (const name of entry.attrs.krbPrincipalName ?? []) await refuseServerPrincipal(ctx, name, 'deleted');
    },
    async alsoDelete(ctx, entry) {
      // its services: every service/<this host>@REALM
      const fqdn = entry.attrs.fqdn?.[0];
      if (!fqdn) return [];
      const filter = `(&(objectClass=krbPrincipal)(krbPrincipalName=*/${escapeFilterValue(fqdn)}@${escapeFilterValue(ctx.server.realm)}))`;
      const found = await ctx.dir.search({ base: containers(ctx.dir.baseDn).services, scope: 'one', filter, attrs: ['1.1'] });
      return found.entries.map((e) => e.dn);
    },
    async postRead(_ctx, entry, out) {
      if (entry.attrs.krbPrincipalName) out.principal = entry.attrs.krbPrincipalName;
    },
  },
});

export function hostCommands(): Command[] {
  return crudCommands({ ...hostObject, methods: ['add', 'del', 'find', 'show'] });
}
