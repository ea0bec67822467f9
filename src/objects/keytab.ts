/**
 * The random keys of service and host principals: set when one is added,
 * and keytab_get, which gives administrators a keytab for one (new random
 * keys with the next key version, or with --retrieve the current ones).
 * Users have password keys and get no keytab here, and neither do the KDC's
 * own principals (krbtgt/, kadmin/, WELLKNOWN/: new keys for krbtgt would
 * void every ticket of the realm, and its keys let their holder forge any).
 */
import type { Command } from '../framework/command.js';
import { publicError } from '../framework/errors.js';
import { writeEntries } from '../framework/crud.js';
import { hostObject } from './host.js';
import { lowerHostPart, serviceObject } from './service.js';
import { kdcComponent } from './realm-principals.js';
import { findPrincipal, inRealm } from '../account/lookup.js';
import { keytabFor, parseKeys, randomKeys, serializeKeys } from '../account/keys.js';
import { hasObjectClass } from '../directory/entry.js';

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
    const wanted = inRealm(String(args[0]), ctx.server.realm);
    const refuseKdcName = (name: string) => {
      const first = kdcComponent(name);
      if (first !== null) throw publicError('ValidationError', { name: 'principal', error: `${name} is one of the KDC's own principals (${first}/): its keys are never rotated or handed out through the API` });
    };
    refuseKdcName(wanted);
    // a host part given in another case names the same host: services and hosts are stored with it in lower case
    const entry = (await findPrincipal(ctx.dir, wanted)) ?? (await findPrincipal(ctx.dir, lowerHostPart(wanted)));
    if (!entry) throw publicError('NotFound', { reason: `${wanted}: principal not found` });
    if (hasObjectClass(entry.attrs.objectClass, 'dirUser')) throw publicError('ValidationError', { name: 'principal', error: 'keytabs are for service and host principals, not users' });
    const name = entry.attrs.krbPrincipalName![0]!;
    refuseKdcName(name);
    const [components, realm] = [name.slice(0, name.lastIndexOf('@')).split('/'), name.slice(name.lastIndexOf('@') + 1)];
    let keys = parseKeys(await ctx.dir.readSecret(entry.dn, 'krbPrincipalKey'));
    if (opts.retrieve !== true) {
      keys = randomKeys(Math.max(0, ...keys.map((k) => k.kvno)) + 1);
      const obj = hasObjectClass(entry.attrs.objectClass, 'dirHost') ? hostObject : serviceObject;
      await writeEntries(ctx, obj, name, () => ctx.dir.modify(entry.dn, [{ op: 'replace', attr: 'krbPrincipalKey', values: serializeKeys(keys) }]));
    }
    if (keys.length === 0) throw publicError('NotFound', { reason: `${name}: principal has no keys` });
    return {
      result: { principal: name, kvno: keys[0]!.kvno, keytab: keytabFor(realm, components, keys) },
      summary: `Keytab for "${name}" (kvno ${keys[0]!.kvno})`,
    };
  },
};
