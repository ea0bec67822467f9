/**
 * An object owns its place (framework/place.ts): the registry's objects
 * declare their containers, who reads them, their schema and their default
 * entries, and the realm's tree, the read rule's roots and the merged
 * schema are derived from them, giving what init and the read rule had
 * when they listed objects by hand. A declaration that names no place, or
 * two, is refused where it is made.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileSchema } from '../../src/directory/schema.js';
import { defineObject } from '../../src/framework/object.js';
import { readableSubtrees } from '../../src/framework/access.js';
import { objectsOf, realmSchema, realmTree, REGISTERED } from '../../src/objects/index.js';

const BASE = 'dc=example,dc=test';
const at = { baseDn: BASE, realm: 'EXAMPLE.TEST' };

describe('places derived from the registry', () => {
  it('the read rule reaches what it reached when it was listed by hand', () => {
    assert.deepEqual(
      readableSubtrees(objectsOf(REGISTERED), at).sort(),
      [
        `cn=users,cn=accounts,${BASE}`,
        `cn=groups,cn=accounts,${BASE}`,
        `cn=roles,cn=accounts,${BASE}`,
        `cn=services,cn=accounts,${BASE}`,
        `cn=computers,cn=accounts,${BASE}`,
        `cn=hostgroups,cn=accounts,${BASE}`,
        `cn=hbacservices,cn=hbac,${BASE}`,
        `cn=hbacservicegroups,cn=hbac,${BASE}`,
        `cn=rules,cn=hbac,${BASE}`,
        `cn=idp,${BASE}`,
        `cn=privileges,cn=pbac,${BASE}`,
        // the sudo rules, commands and command groups, and the sudoRole entries hosts read (a view)
        `cn=sudorules,cn=sudo,${BASE}`,
        `cn=sudocmds,cn=sudo,${BASE}`,
        `cn=sudocmdgroups,cn=sudo,${BASE}`,
        `ou=sudoers,${BASE}`,
        `cn=pwpolicies,cn=accounts,${BASE}`,
      ].sort(),
    );
  });

  it("the tree holds init's containers (cn=servers among them now), parents first, the built-in privileges, HBAC services and service groups, the initial HBAC rules and the global password policy", () => {
    const tree = realmTree(at);
    const dns = tree.containers.map((op) => op.dn);
    assert.deepEqual(dns, [
      `cn=accounts,${BASE}`,
      `cn=users,cn=accounts,${BASE}`,
      `cn=groups,cn=accounts,${BASE}`,
      `cn=roles,cn=accounts,${BASE}`,
      `cn=services,cn=accounts,${BASE}`,
      `cn=computers,cn=accounts,${BASE}`,
      `cn=hostgroups,cn=accounts,${BASE}`,
      `cn=hbac,${BASE}`,
      `cn=hbacservices,cn=hbac,${BASE}`,
      `cn=hbacservicegroups,cn=hbac,${BASE}`,
      `cn=rules,cn=hbac,${BASE}`,
      `cn=idp,${BASE}`,
      `cn=pbac,${BASE}`,
      `cn=privileges,cn=pbac,${BASE}`,
      `cn=sudo,${BASE}`,
      `cn=sudocmds,cn=sudo,${BASE}`,
      `cn=sudocmdgroups,cn=sudo,${BASE}`,
      `cn=sudorules,cn=sudo,${BASE}`,
      `cn=pwpolicies,cn=accounts,${BASE}`,
      `cn=kerberos,${BASE}`,
      `cn=etc,${BASE}`,
      `cn=ranges,cn=etc,${BASE}`,
      `cn=servers,cn=etc,${BASE}`,
    ]);
    const entries = tree.entries.map((op) => op.dn);
    // the services before the groups that name them
    assert.equal(entries[0], `cn=sshd,cn=hbacservices,cn=hbac,${BASE}`);
    assert.ok(entries.indexOf(`cn=Sudo,cn=hbacservicegroups,cn=hbac,${BASE}`) > entries.indexOf(`cn=sudo-i,cn=hbacservices,cn=hbac,${BASE}`));
    assert.deepEqual(
      entries.filter((dn) => dn.endsWith(`cn=privileges,cn=pbac,${BASE}`)),
      ['IdP Administrators', 'User Administrators', 'Group Administrators', 'Sudo Administrator', 'Host Group Administrators', 'HBAC Administrator', 'Password Policy Administrators'].map((p) => `cn=${p},cn=privileges,cn=pbac,${BASE}`),
    );
    assert.ok(entries.includes(`cn=global_policy,cn=pwpolicies,cn=accounts,${BASE}`));
    assert.deepEqual(
      tree.initial.map((op) => op.dn),
      ['allow_all', 'allow_systemd-user'].map((r) => `cn=${r},cn=rules,cn=hbac,${BASE}`),
    );
  });

  it('the merged schema compiles and holds every object class the objects write', () => {
    const schema = compileSchema(realmSchema);
    for (const o of objectsOf(REGISTERED)) for (const c of o.objectClasses) assert.ok(schema.objectClass(c), `${o.name}: ${c}`);
  });

  it('a declaration names a container or a one-of-a-kind DN, one of the two', () => {
    const base = {
      name: 'thing',
      label: 'things',
      labelSingular: 'thing',
      doc: 'Things.',
      rdnAttr: 'cn',
      objectClasses: ['top'],
      pkey: 'name',
      params: { name: { attr: 'cn', type: 'str', label: 'Name', doc: 'Name' } },
      defaultAttributes: [],
      searchAttributes: [],
    } as const;
    assert.throws(() => defineObject(base), /declare a container or a singleton DN, one of the two/);
    assert.throws(() => defineObject({ ...base, container: 'cn=things', singleton: () => `cn=thing,${BASE}` }), /one of the two/);
    assert.throws(() => defineObject({ ...base, container: 'ou=things' }), /not a path of cn= entries/);
    assert.throws(() => defineObject({ ...base, singleton: () => `cn=thing,${BASE}`, methods: ['add', 'show'] }), /show and mod only/);
    assert.equal(defineObject({ ...base, container: 'cn=things,cn=accounts' }).container, 'cn=things,cn=accounts');
  });
});
