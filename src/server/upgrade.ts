/**
 * The upgrade of a realm's directory (kanidm's versioned migrations,
 * FreeIPA's ipa-server-upgrade; docs/architecture.md "Where things go").
 * The directory records its version in itself (cn=version,cn=etc,BASE:
 * dirVersion, and dirRelease, the dirid release that wrote it), so both
 * backends carry it; a realm made before the record existed (up to
 * release-2026-11-stop25) is at version 0. The first steps are what those
 * releases added when they found it missing (kadmin/changepw at start, the
 * ID range at the first new ID). When a server starts (and before
 * replica-prepare writes), upgradeDirectory brings the directory to
 * DIRECTORY_VERSION: the containers of the realm's tree it lacks
 * (objects/index.ts realmTree, derived from the registered objects), each
 * step above the recorded version in order, the tree's default entries it
 * lacks, then the record. Every part is logged with what it did, and every
 * part is idempotent: a step checks before it writes and takes an entry
 * another server added meanwhile as done, so a start that finds nothing to
 * do writes nothing and logs nothing. The tree is checked at every start,
 * so a newly registered object's container and entries reach realms made
 * before without a step of their own; a change that is not an addition
 * (moving or rewriting entries) is a step, and so are the entries a realm
 * starts with but keeps only while no one deletes them (ObjectDef.initial:
 * the allow_all access rule), which the start must not add again.
 *
 * A directory recorded at a higher version than this code knows was
 * upgraded by a newer release, whose data this code may misread: the start
 * is refused, naming both versions.
 *
 * On PostgreSQL the servers of a realm share the directory and may start
 * at once. There is no lock across the upgrade: the parts are idempotent
 * adds, and the record moves by compare-and-set (one modify that deletes
 * the version read and adds the new one, which the store's write lock
 * serializes and which fails when another server moved it first), so two
 * servers upgrading together end with the same directory, recorded once.
 *
 * The schema is not stored: it is the code's (realmSchema), and a backend
 * rebuilds its indexes at open when the declared indexing changed. The
 * KDC certificate is a file of each server's data directory, not of the
 * shared directory: it is renewed at every start when it is missing or
 * near its end (kdc-cert.ts), not here.
 */
import { findPrincipal } from '../account/lookup.js';
import { containers, GLOBAL_PWPOLICY, globalPwpolicyDn, idRangeDn, realmContainerDn } from '../directory/layout.js';
import { policyAttributes, policyOf } from '../account/password-policy.js';
import { DirectoryError, type Directory, type WriteOp } from '../directory/types.js';
import { changepwPrincipal } from '../kerberos/principal.js';
import { realmTree, type Registered, REGISTERED } from '../objects/index.js';
import { randomRange, rangeEntry } from '../objects/posix.js';
import { passwordServiceEntry } from './kerberos-init.js';
import { SERVER_VERSION } from './version.js';
import type { Logger } from '../log/logger.js';

/** The directory version this code writes and reads: the last step's. */
export const DIRECTORY_VERSION = 4;

/** The lockout figures releases before password policies read from the realm container. */
const REALM_LOCKOUT_ATTRIBUTES = ['krbPwdMaxFailure', 'krbPwdFailureCountInterval', 'krbPwdLockoutDuration'] as const;

/** One versioned change to a stored realm: what it brings the directory to, in words, and the change; it returns what it did, or null when there was nothing to do. */
export interface UpgradeStep {
  readonly version: number;
  readonly name: string;
  run(dir: Directory, realm: string): Promise<string | null>;
}

/** Adds what is missing of `ops` (adds), one at a time; an entry another server added meanwhile counts as there. Returns the DNs added. */
async function addMissing(dir: Directory, ops: readonly WriteOp[]): Promise<string[]> {
  const added: string[] = [];
  for (const op of ops) {
    if (op.kind !== 'add' || (await dir.get(op.dn, ['1.1']))) continue;
    try {
      await dir.batch([op]);
      added.push(op.dn);
    } catch (e) {
      if (!(e instanceof DirectoryError && e.code === 'entryAlreadyExists')) throw e;
    }
  }
  return added;
}

/** The steps, in order; a realm at version N runs those above N. */
export const UPGRADE_STEPS: readonly UpgradeStep[] = [
  {
    version: 1,
    name: "the password service's principal kadmin/changepw, for realms made before it",
    async run(dir, realm) {
      if (await findPrincipal(dir, changepwPrincipal(realm))) return null;
      const added = await addMissing(dir, [passwordServiceEntry(dir.baseDn, realm)]);
      return added.length > 0 ? `added ${changepwPrincipal(realm)}` : null;
    },
  },
  {
    version: 2,
    name: 'the POSIX ID range, for realms made before it',
    async run(dir, realm) {
      const dn = idRangeDn(dir.baseDn, realm);
      if (await dir.get(dn, ['1.1'])) return null;
      const r = randomRange();
      const added = await addMissing(dir, [rangeEntry(dir.baseDn, realm, r)]);
      return added.length > 0 ? `added ${dn}, IDs ${r.base} to ${r.base + r.size - 1}` : null;
    },
  },
  {
    version: 3,
    name: 'the entries a realm starts with (the HBAC rules allow_all and allow_systemd-user), for realms made before them, once',
    async run(dir, realm) {
      // the default entries the initial ones name (the HBAC services and service groups) first, as init adds them;
      // other objects' default entries are theirs to add (a step of their own, or the start's pass over the defaults)
      const tree = realmTree({ baseDn: dir.baseDn, realm });
      const hbac = `cn=hbac,${dir.baseDn}`.toLowerCase();
      const named = tree.entries.filter((op) => op.dn.toLowerCase().endsWith(`,${hbac}`));
      const added = [...(await addMissing(dir, named)), ...(await addMissing(dir, tree.initial))];
      return added.length > 0 ? `added ${added.join('; ')}` : null;
    },
  },
  {
    version: 4,
    name: "the global password policy, with the lockout figures the realm container held",
    async run(dir, realm) {
      const realmDn = realmContainerDn(dir.baseDn, realm);
      const held = (await dir.get(realmDn, REALM_LOCKOUT_ATTRIBUTES))?.attrs ?? {};
      const moved = REALM_LOCKOUT_ATTRIBUTES.filter((a) => held[a]?.length);
      const did: string[] = [];
      const policyDn = globalPwpolicyDn(dir.baseDn);
      const policy = await dir.get(policyDn);
      const figures = policyAttributes(policyOf(GLOBAL_PWPOLICY, { ...policy?.attrs, ...held }));
      if (!policy) {
        const added = await addMissing(dir, [{ kind: 'add', dn: policyDn, attrs: { objectClass: ['top', 'krbPwdPolicy'], cn: [GLOBAL_PWPOLICY], ...figures } }]);
        if (added.length > 0) did.push(`added ${policyDn}`);
      } else if (moved.length > 0) {
        await dir.modify(policyDn, moved.map((a) => ({ op: 'replace' as const, attr: a, values: figures[a]! })));
      }
      if (moved.length > 0) {
        try {
          // each value as read: a server upgrading beside this one that moved them first makes this a no-op
          await dir.modify(realmDn, moved.map((a) => ({ op: 'delete' as const, attr: a, values: held[a]! })));
          did.push(`moved ${moved.map((a) => `${a} ${held[a]![0]}`).join(', ')} from ${realmDn} to it`);
        } catch (e) {
          if (!(e instanceof DirectoryError && e.code === 'noSuchAttribute')) throw e;
        }
      }
      return did.length > 0 ? did.join('; ') : null;
    },
  },
];

export function versionRecordDn(baseDn: string): string {
  return `cn=version,${containers(baseDn).etc}`;
}

/** The version record of a directory at `version`, as init and the upgrade add it. */
export function versionRecordEntry(baseDn: string, version = DIRECTORY_VERSION): WriteOp {
  return { kind: 'add', dn: versionRecordDn(baseDn), attrs: { objectClass: ['top', 'dirVersionRecord'], cn: ['version'], dirVersion: [String(version)], dirRelease: [SERVER_VERSION] } };
}

/** A directory this code may not run on. */
export class UpgradeError extends Error {}

/** The version a directory records (0: none recorded) and the release that recorded it. */
export async function recordedVersion(dir: Directory): Promise<{ version: number; release?: string }> {
  const e = await dir.get(versionRecordDn(dir.baseDn), ['dirVersion', 'dirRelease']);
  if (!e) return { version: 0 };
  const v = e.attrs.dirVersion?.[0];
  const version = Number(v);
  if (v === undefined || !Number.isSafeInteger(version) || version < 0) throw new UpgradeError(`${versionRecordDn(dir.baseDn)} holds no directory version`);
  const release = e.attrs.dirRelease?.[0];
  return release === undefined ? { version } : { version, release };
}

/** Moves the record from `from` to `to`; false when another server moved it first. */
async function advanceRecord(dir: Directory, from: number, to: number): Promise<boolean> {
  try {
    if (from === 0) await dir.batch([versionRecordEntry(dir.baseDn, to)]);
    else {
      await dir.modify(versionRecordDn(dir.baseDn), [
        { op: 'delete', attr: 'dirVersion', values: [String(from)] },
        { op: 'add', attr: 'dirVersion', values: [String(to)] },
        { op: 'replace', attr: 'dirRelease', values: [SERVER_VERSION] },
      ]);
    }
    return true;
  } catch (e) {
    if (e instanceof DirectoryError && (e.code === 'entryAlreadyExists' || e.code === 'noSuchAttribute')) return false;
    throw e;
  }
}

export interface UpgradeOptions {
  realm: string;
  /** the upgrade's logger: lines `upgrade start|added|step|done realm=…` (docs/logging.md) */
  log: Logger;
  /** the registry list the tree is derived from (tests add objects) */
  registered?: readonly Registered[];
  /** the steps and the version they reach (tests) */
  steps?: readonly UpgradeStep[];
  version?: number;
}

/**
 * Brings the directory to this code's version, or refuses one recorded at a
 * higher version (UpgradeError). Logs each part that changed something and
 * returns the versions it went from and to.
 */
export async function upgradeDirectory(dir: Directory, o: UpgradeOptions): Promise<{ from: number; to: number }> {
  const target = o.version ?? DIRECTORY_VERSION;
  const steps = o.steps ?? UPGRADE_STEPS;
  const log = o.log;
  const realm = o.realm;
  const found = await recordedVersion(dir);
  if (found.version > target) {
    throw new UpgradeError(
      `the directory is at version ${found.version}${found.release ? ` (written by dirid ${found.release})` : ''}, newer than this server: dirid ${SERVER_VERSION} knows directory versions up to ${target}; start a dirid release that knows version ${found.version}`,
    );
  }
  const from = found.version;
  if (from < target) log.info('start', { realm, from, to: target });
  const tree = realmTree({ baseDn: dir.baseDn, realm: o.realm }, o.registered ?? REGISTERED);
  const containersAdded = await addMissing(dir, tree.containers);
  if (containersAdded.length > 0) log.info('added', { realm, containers: containersAdded });
  for (const step of steps) {
    if (step.version <= from || step.version > target) continue;
    const did = await step.run(dir, o.realm);
    log.info('step', { realm, version: step.version, name: step.name, did: did ?? 'nothing to do' });
  }
  const entriesAdded = await addMissing(dir, tree.entries);
  if (entriesAdded.length > 0) log.info('added', { realm, entries: entriesAdded });
  if (from < target) {
    if (await advanceRecord(dir, from, target)) log.info('done', { realm, from, to: target });
    else {
      const now = await recordedVersion(dir);
      if (now.version < target) throw new UpgradeError(`the directory's version moved to ${now.version} while this server upgraded it to ${target}; start the server again`);
      log.info('done', { realm, from, to: now.version, by: 'another server, meanwhile' });
    }
  }
  return { from, to: target };
}
