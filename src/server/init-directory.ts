/**
 * The steps of `dirid-server init` that write the new realm's directory,
 * in order: the tree and its administrators, the Kerberos principals
 * (kerberos-init.ts), the objects' default entries and the directory's
 * version. They read only the realm's names and init's options, and write
 * no file but host.keytab, so a test may make a realm's directory with
 * them alone, in process (test/support/in-process.ts).
 */
import type { Attributes } from '../directory/types.js';
import { containers } from '../directory/layout.js';
import { realmTree } from '../objects/index.js';
import { DEFAULT_RANGE_SIZE, posixDefaults, randomRange, rangeEntry, type IdRange } from '../objects/posix.js';
import { kerberosInitStep } from './kerberos-init.js';
import type { InitOptions, InitStep, RealmNames } from './init-step.js';
import { versionRecordEntry } from './upgrade.js';

/** The range init creates: --idstart (default random) to --idmax (default start + 199,999). */
export function idRangeOf(o: Pick<InitOptions, 'idStart' | 'idMax'>): IdRange {
  if (o.idStart === undefined && o.idMax === undefined) return randomRange();
  const base = o.idStart ?? (o.idMax! - DEFAULT_RANGE_SIZE + 1);
  return { base, size: (o.idMax ?? base + DEFAULT_RANGE_SIZE - 1) - base + 1 };
}

/**
 * The directory tree (the containers the registered objects declare and
 * the realm's own: objects/index.ts realmTree), the ID range, the admin
 * user and the admins group. The admins group takes the range's first ID,
 * admin the second (its private group's gid is its uid).
 */
const treeStep: InitStep<RealmNames> = {
  name: 'directory tree and administrators',
  async run({ dir, config, options }) {
    const c = containers(dir.baseDn);
    const adminDn = `uid=admin,${c.users}`;
    const range = idRangeOf(options);
    const admin: Attributes = {
      objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'dirUser', 'posixAccount'],
      uid: ['admin'],
      cn: ['Administrator'],
      sn: ['Administrator'],
      uidNumber: [String(range.base + 1)],
      dirUserAuthType: ['password'],
    };
    posixDefaults(admin, 'admin', String(range.base + 1));
    await dir.batch([
      ...realmTree({ baseDn: dir.baseDn, realm: config.realm }).containers,
      rangeEntry(dir.baseDn, config.realm, range, range.base + 2),
      { kind: 'add', dn: adminDn, attrs: admin },
      {
        kind: 'add',
        dn: c.adminsGroup,
        attrs: { objectClass: ['top', 'dirGroup', 'posixGroup'], cn: ['admins'], description: ['Account administrators group'], gidNumber: [String(range.base)], member: [adminDn] },
      },
    ]);
  },
};

/**
 * The entries every realm has of the registered objects (built-in
 * privileges, HBAC services; objects/index.ts realmTree), once the Kerberos
 * realm they may sit in exists, those a realm starts with (the allow_all
 * access rule), and the record of the directory's version (upgrade.ts): a
 * new realm is at this code's version.
 */
const defaultEntriesStep: InitStep<RealmNames> = {
  name: 'default entries and the directory version',
  async run({ dir, config }) {
    const tree = realmTree({ baseDn: dir.baseDn, realm: config.realm });
    await dir.batch([...tree.entries, ...tree.initial, versionRecordEntry(dir.baseDn)]);
  },
};

/** The directory's steps, in the order init runs them. */
export const directorySteps: readonly InitStep<RealmNames>[] = [treeStep, kerberosInitStep, defaultEntriesStep];
