/**
 * Hosts (computers) and their host/ principals (host/web.example.test@REALM):
 * add, delete, find and show. A new host gets its principal name from its
 * fully qualified name and random keys (keytab.ts); a name another entry
 * holds is a duplicate (principal-name.ts).
 */
import type { Command } from '../framework/command.js';
import { crudCommands } from '../framework/crud.js';
import { defineObject } from '../framework/object.js';
import { newRandomKeys } from '../account/keys.js';
import { FQDN } from '../framework/params.js';
import { checkNewPrincipalNames } from './principal-name.js';

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
    fqdn: { attr: 'fqdn', type: 'str', label: 'Host name', doc: 'Fully qualified host name', pattern: FQDN, patternError: 'must be a fully qualified lower-case host name' },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Description', maxLength: 1024 },
  },
  computed: { principal: { label: 'Principal name', default: true } },
  defaultAttributes: ['fqdn', 'description'],
  searchAttributes: ['fqdn', 'description'],
  normalizePkey: (v) => v.toLowerCase(),
  hooks: {
    async preAdd(ctx, attrs, _options, pkey) {
      attrs.cn = [pkey];
      attrs.krbPrincipalName = [`host/${pkey}@${ctx.server.realm}`];
      attrs.krbPrincipalKey = newRandomKeys();
    },
    // host/FQDN is no other entry's, a service's of that name included
    complete: (ctx, entry) => checkNewPrincipalNames(ctx, entry),
    async postRead(_ctx, entry, out) {
      if (entry.attrs.krbPrincipalName) out.principal = entry.attrs.krbPrincipalName;
    },
  },
});

export function hostCommands(): Command[] {
  return crudCommands({ ...hostObject, methods: ['add', 'del', 'find', 'show'] });
}
