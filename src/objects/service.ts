/**
 * Kerberos service and host principals (HTTP/web.example.test@REALM,
 * host/web.example.test@REALM), their random keys, keytab retrieval for
 * administrators, and password changes (`passwd`) that re-derive a user's
 * keys and bump the key version.
 */
import type { Attributes, Entry } from '../directory/types.js';
import { escapeFilterValue } from '../directory/filter.js';
import { canManage, isAdmin } from '../framework/access.js';
import type { CallContext, Command } from '../framework/command.js';
import { crudCommands, getEntry } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';
import { defineObject } from '../framework/object.js';
import { keytabFor, parseKeys, randomKeys, serializeKeys } from '../account/keys.js';
import { hashPassword } from './password.js';
import { passwordKeyMods, userObject } from './user.js';

const SERVICE = /^[A-Za-z0-9_.-]{1,64}\/[A-Za-z0-9.-]{1,253}(@[A-Z0-9.-]{1,253})?$/;
const FQDN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

function addRandomKeys(attrs: Attributes): void {
  attrs.krbPrincipalKey = serializeKeys(randomKeys(1));
}

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
  },
  defaultAttributes: ['principal', 'description'],
  searchAttributes: ['principal', 'description'],
  normalizePkey: (v, ctx) => (v.includes('@') ? v : `${v}@${ctx.server.realm}`),
  hooks: {
    async preAdd(ctx, attrs, _options, pkey) {
      if (!pkey.endsWith(`@${ctx.server.realm}`)) throw publicError('ValidationError', { name: 'principal', error: `must be in realm ${ctx.server.realm}` });
      addRandomKeys(attrs);
    },
  },
});

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
      addRandomKeys(attrs);
    },
    async postRead(_ctx, entry, out) {
      if (entry.attrs.krbPrincipalName) out.principal = entry.attrs.krbPrincipalName;
    },
  },
});

async function principalEntry(ctx: CallContext, principal: string): Promise<Entry> {
  const name = principal.includes('@') ? principal : `${principal}@${ctx.server.realm}`;
  const res = await ctx.dir.search({ base: ctx.dir.baseDn, scope: 'sub', filter: `(krbPrincipalName=${escapeFilterValue(name)})`, sizeLimit: 2 });
  if (res.entries.length !== 1) throw publicError('NotFound', { reason: `${name}: principal not found` });
  return res.entries[0]!;
}

export const keytabGetCommand: Command = {
  name: 'keytab_get',
  doc: 'Retrieve a keytab for a service or host principal (new random keys unless --retrieve).',
  args: [{ name: 'principal', type: 'str', label: 'Principal name', doc: 'Service or host principal', required: true, maxLength: 512 }],
  options: {
    retrieve: { type: 'bool', flag: true, label: 'Retrieve', doc: 'Return the current keys instead of generating new ones' },
  },
  access: { manage: 'service' },
  output: 'custom',
  async run(ctx, args, opts) {
    const entry = await principalEntry(ctx, String(args[0]));
    const classes = (entry.attrs.objectClass ?? []).map((c) => c.toLowerCase());
    if (classes.includes('diruser')) throw publicError('ValidationError', { name: 'principal', error: 'keytabs are for service and host principals, not users' });
    const name = entry.attrs.krbPrincipalName![0]!;
    const [components, realm] = [name.slice(0, name.lastIndexOf('@')).split('/'), name.slice(name.lastIndexOf('@') + 1)];
    let keys = parseKeys(await ctx.dir.readSecret(entry.dn, 'krbPrincipalKey'));
    if (opts.retrieve !== true) {
      keys = randomKeys(Math.max(0, ...keys.map((k) => k.kvno)) + 1);
      await ctx.dir.modify(entry.dn, [{ op: 'replace', attr: 'krbPrincipalKey', values: serializeKeys(keys) }]);
    }
    if (keys.length === 0) throw publicError('NotFound', { reason: `${name}: principal has no keys` });
    return {
      result: { principal: name, kvno: keys[0]!.kvno, keytab: keytabFor(realm, components, keys) },
      summary: `Keytab for "${name}" (kvno ${keys[0]!.kvno})`,
    };
  },
};

export const passwdCommand: Command = {
  name: 'passwd',
  doc: 'Set a user password; the Kerberos keys are derived again with a new key version.',
  args: [
    { name: 'login', type: 'str', label: 'User login', doc: 'User login (default: yourself)', maxLength: 64 },
    { name: 'password', type: 'password', label: 'New password', doc: 'New password', secret: true, prompt: true, required: true },
  ],
  options: {},
  access: 'authenticated',
  output: 'summary',
  async run(ctx, args) {
    const login = args[0] === undefined ? ctx.principal!.uid : String(args[0]);
    const self = login === ctx.principal!.uid;
    if (!self && !(await canManage(ctx, userObject.managePrivilege)) && !(await isAdmin(ctx, ctx.principal!))) {
      throw publicError('ACIError', { info: "not allowed to change another user's password" });
    }
    const password = String(args[1]);
    if (password.length < 8) throw publicError('ValidationError', { name: 'password', error: 'must be at least 8 characters' });
    const entry = await getEntry(ctx, userObject, login);
    await ctx.dir.modify(entry.dn, [{ op: 'replace', attr: 'userPassword', values: [await hashPassword(password)] }, ...(await passwordKeyMods(ctx, entry, password))]);
    return { result: null, value: login, summary: `Changed password for "${login}@${ctx.server.realm}"` };
  },
};

export function principalCommands(): Command[] {
  return [...crudCommands({ ...serviceObject, methods: ['add', 'del', 'find', 'show'] }), ...crudCommands({ ...hostObject, methods: ['add', 'del', 'find', 'show'] }), keytabGetCommand, passwdCommand];
}
