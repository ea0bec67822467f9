/**
 * The registry of a dirid server: every object and command, in one list,
 * with the services the server wires in (OIDC discovery and the check of
 * IdP references). An object's line brings its derived commands and its
 * own (ObjectDef.commands), and its place (framework/place.ts): the
 * containers and entries of the realm's tree (realmTree: init writes it,
 * the upgrade at start adds what a realm lacks), the readable roots of the
 * read rule and its part of the schema (realmSchema) all come from this
 * list. The API contract (api.json) is derived from what is registered
 * here.
 */
import { CommandRegistry, type Command, type DefaultEntry, type ObjectDef, type RealmPlace, type Services } from '../framework/command.js';
import { objectCommands } from '../framework/crud.js';
import { declaredContainers, declaredEntries, declaredInitialEntries, declaredSchemas } from '../framework/place.js';
import { containerEntry, REALM_CONTAINERS } from '../directory/layout.js';
import { coreSchema, mergeSchemas } from '../directory/schema.js';
import type { SchemaDefinition, WriteOp } from '../directory/types.js';
import { groupObject } from './group.js';
import { hbacruleObject } from './hbacrule.js';
import { hbacsvcObject } from './hbacsvc.js';
import { hbacsvcgroupObject } from './hbacsvcgroup.js';
import { hbactestCommand } from './hbactest.js';
import { hostObject } from './host.js';
import { hostEnrollCommand } from './host-enroll.js';
import { hostgroupObject } from './hostgroup.js';
import { idpObject } from './idp.js';
import { keytabGetCommand } from './keytab.js';
import { sharedSchema } from './ldap-schema.js';
import { passwdCommand } from './passwd.js';
import { pingCommand } from './ping.js';
import { privilegeObject, roleObject } from './role.js';
import { pwpolicyObject } from './pwpolicy.js';
import { schemaCommand } from './schema.js';
import { serviceObject } from './service.js';
import { sudocmdgroupObject, sudocmdObject } from './sudocmd.js';
import { sudoruleObject } from './sudorule.js';
import { userObject } from './user.js';

/** What one registry line holds: a declared object, or a command of no one object. */
export type Registered = ObjectDef | Command;

/** Every object and command of a realm, one line each; an object's default entries after those they name (HBAC services before their groups and the rules). */
export const REGISTERED: readonly Registered[] = [
  userObject,
  groupObject,
  roleObject,
  serviceObject,
  hostObject,
  hostgroupObject,
  hbacsvcObject,
  hbacsvcgroupObject,
  hbacruleObject,
  hbactestCommand,
  idpObject,
  privilegeObject,
  hostEnrollCommand,
  sudocmdObject,
  sudocmdgroupObject,
  sudoruleObject,
  pwpolicyObject,
  keytabGetCommand,
  passwdCommand,
  pingCommand,
  schemaCommand,
];

function isCommand(r: Registered): r is Command {
  return typeof (r as Command).run === 'function';
}

/** The declared objects of a registry list. */
export function objectsOf(registered: readonly Registered[]): ObjectDef[] {
  return registered.filter((r): r is ObjectDef => !isCommand(r));
}

export function buildRegistry(services: Services = {}, registered: readonly Registered[] = REGISTERED): CommandRegistry {
  const r = new CommandRegistry(services);
  for (const x of registered) {
    if (isCommand(x)) r.register(x);
    else {
      r.objects.set(x.name, x);
      r.register(...objectCommands(x));
    }
  }
  return r;
}

/** The realm's schema: the core, the shared part, then each object's own. */
export function schemaOf(registered: readonly Registered[]): SchemaDefinition {
  return mergeSchemas(coreSchema, sharedSchema, ...declaredSchemas(objectsOf(registered)));
}

export const realmSchema: SchemaDefinition = schemaOf(REGISTERED);

/**
 * The containers and entries every realm has, in the order they are added:
 * the objects' containers (and those above them), the realm's own
 * (Kerberos, cn=etc and what it holds), then the objects' default entries
 * (built-in privileges, HBAC services), in registry order, so an entry
 * comes after those it names. `initial`: the entries a new realm starts
 * with and keeps only while no one deletes them (the allow_all access
 * rule), after the defaults. The entries init makes from its options (the
 * admin, the admins group, the ID range, the principals) are init's.
 */
export function realmTree(at: RealmPlace, registered: readonly Registered[] = REGISTERED): { containers: WriteOp[]; entries: WriteOp[]; initial: WriteOp[] } {
  const objects = objectsOf(registered);
  const declared = declaredContainers(objects);
  const seen = new Set(declared.map((c) => c.toLowerCase()));
  const containers = [...declared, ...REALM_CONTAINERS.filter((c) => !seen.has(c.toLowerCase()))].map((rel) => containerEntry(`${rel},${at.baseDn}`));
  const add = (e: DefaultEntry): WriteOp => ({ kind: 'add', dn: e.dn, attrs: e.attrs });
  return { containers, entries: declaredEntries(objects, at).map(add), initial: declaredInitialEntries(objects, at).map(add) };
}
