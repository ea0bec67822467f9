/**
 * Where things live in the directory tree. Every DN the framework and the
 * objects build starts here, so the layout is defined once.
 */
export interface Containers {
  base: string;
  accounts: string;
  users: string;
  groups: string;
  roles: string;
  services: string;
  hosts: string;
  idp: string;
  pbac: string;
  privileges: string;
  adminsGroup: string;
  kerberos: string;
}

export function containers(baseDn: string): Containers {
  const accounts = `cn=accounts,${baseDn}`;
  const pbac = `cn=pbac,${baseDn}`;
  const groups = `cn=groups,${accounts}`;
  return {
    base: baseDn,
    accounts,
    users: `cn=users,${accounts}`,
    groups,
    roles: `cn=roles,${accounts}`,
    services: `cn=services,${accounts}`,
    hosts: `cn=computers,${accounts}`,
    idp: `cn=idp,${baseDn}`,
    pbac,
    privileges: `cn=privileges,${pbac}`,
    adminsGroup: `cn=admins,${groups}`,
    kerberos: `cn=kerberos,${baseDn}`,
  };
}

/** Turns a DNS domain into a base DN: example.test → dc=example,dc=test. */
export function baseDnFromDomain(domain: string): string {
  return domain
    .toLowerCase()
    .split('.')
    .filter((p) => p.length > 0)
    .map((p) => `dc=${p}`)
    .join(',');
}
