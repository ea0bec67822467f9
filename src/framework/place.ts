/**
 * An object owns its place (FreeIPA's container_dn and get_dn; kanidm's
 * schema per entry class): its declaration says where its entries live,
 * who may read them, the schema it adds, the entries every realm has of
 * it and those a realm starts with (command.ts ObjectDef). Everything that used to list objects by hand
 * is derived here from the registered declarations: the containers of the
 * realm's tree (init writes them, the upgrade at start adds those a realm
 * lacks), the readable roots of the read rule (access.ts) and the objects'
 * part of the merged schema. A new object is its file and one line in the
 * registry (objects/index.ts).
 */
import { formatDn, normalizeDn, parseDn } from '../directory/dn.js';
import type { SchemaDefinition } from '../directory/types.js';
import type { CallContext, DefaultEntry, ObjectDef, RealmPlace, ViewDef } from './command.js';

/** Checks the place of a declaration (defineObject): a container of cn= entries below the base DN, or a one-of-a-kind DN, not both. */
export function checkPlace(def: ObjectDef): void {
  if ((def.container === undefined) === (def.singleton === undefined)) throw new Error(`${def.name}: declare a container or a singleton DN, one of the two`);
  if (def.container !== undefined) {
    const rdns = parseDn(def.container);
    if (rdns.length === 0 || rdns.some((r) => r.length !== 1 || r[0]!.type.toLowerCase() !== 'cn')) throw new Error(`${def.name}: container ${def.container} is not a path of cn= entries`);
  }
  if (def.singleton !== undefined && (def.methods ?? []).some((m) => m !== 'show' && m !== 'mod')) throw new Error(`${def.name}: a one-of-a-kind object has show and mod only`);
  for (const v of def.views ?? []) if (parseDn(v.root).length === 0) throw new Error(`${def.name}: view root ${v.root} is not a DN`);
}

/** The realm a call works in. */
export function realmOf(ctx: Pick<CallContext, 'dir' | 'server'>): RealmPlace {
  return { baseDn: ctx.dir.baseDn, realm: ctx.server.realm };
}

/** The container of a declared object's entries. */
export function containerDn(obj: ObjectDef, baseDn: string): string {
  if (obj.container === undefined) throw new Error(`${obj.name} is one of a kind: it has no container`);
  return `${obj.container},${baseDn}`;
}

/** What an object's entries are below: its container, or its one entry. */
export function placeDn(obj: ObjectDef, at: RealmPlace): string {
  return obj.singleton ? obj.singleton(at) : containerDn(obj, at.baseDn);
}

/**
 * The containers the objects declare and those above them (below the base
 * DN), relative to it, parents first, each once: `cn=accounts` before
 * `cn=users,cn=accounts`.
 */
export function declaredContainers(objects: Iterable<ObjectDef>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const o of objects) {
    if (o.container === undefined) continue;
    const rdns = parseDn(o.container);
    for (let i = rdns.length - 1; i >= 0; i--) {
      const rel = formatDn(rdns.slice(i));
      const key = normalizeDn(rel);
      if (!seen.has(key)) {
        seen.add(key);
        out.push(rel);
      }
    }
  }
  return out;
}

/** The entries every realm has of the objects (built-in privileges, policies), in declaration order. */
export function declaredEntries(objects: Iterable<ObjectDef>, at: RealmPlace): DefaultEntry[] {
  return [...objects].flatMap((o) => o.defaults?.(at) ?? []);
}

/** The entries a realm starts with but keeps only while no one deletes them (ObjectDef.initial), in declaration order. */
export function declaredInitialEntries(objects: Iterable<ObjectDef>, at: RealmPlace): DefaultEntry[] {
  return [...objects].flatMap((o) => o.initial?.(at) ?? []);
}

/** The roots of what the objects let `audience` read: the places of those declared readable by it, and the roots of the views it may read. */
export function readablePlaces(objects: Iterable<ObjectDef>, at: RealmPlace, audience = 'authenticated'): string[] {
  const list = [...objects];
  return [...list.filter((o) => o.readBy === audience).map((o) => placeDn(o, at)), ...declaredViews(list).filter((v) => v.readBy === audience).map((v) => viewRootDn(v, at.baseDn))];
}

/** The views the objects declare (ObjectDef.views), in declaration order. */
export function declaredViews(objects: Iterable<ObjectDef>): ViewDef[] {
  return [...objects].flatMap((o) => o.views ?? []);
}

/** The DN of a view's root entry. */
export function viewRootDn(view: ViewDef, baseDn: string): string {
  return `${view.root},${baseDn}`;
}

/** The objects' parts of the realm's schema, in declaration order (merged after the core and the shared parts). */
export function declaredSchemas(objects: Iterable<ObjectDef>): SchemaDefinition[] {
  return [...objects].flatMap((o) => (o.schema ? [o.schema] : []));
}
