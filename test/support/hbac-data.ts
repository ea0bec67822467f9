/**
 * The host-based access data of bench/hbac.ts and of bench/ldap.ts's
 * `access` workload, drawn from a fixed seed over the users and groups of
 * ldap-data.ts: hostH.bench.test, host groups hgK (the hosts H with H mod
 * the number of host groups = K; hgK of the first half also holds the
 * same-numbered one of the second half: nested), and `rules` rules: users
 * (80 %: one or two groups; 20 %: one to five users), hosts (60 %: one to
 * three hosts; 35 %: a host group; 5 %: every host), services (70 %: one or
 * two of sshd, login, su, sudo; 20 %: the service group Sudo; 10 %: every
 * service), one in ten disabled. The realm's allow_all is disabled, so that
 * every rule is tested and few grant.
 */
import { prng } from './prng.js';
import type { WriteOp } from '../../src/directory/types.js';
import { BASE_DN, groupDn, userDn, type DataSize } from './ldap-data.js';

export interface HbacSize {
  hosts: number;
  rules: number;
}

export const hostName = (h: number): string => `host${h}.bench.test`;
export const hostDn = (h: number): string => `fqdn=${hostName(h)},cn=computers,cn=accounts,${BASE_DN}`;
const hostgroupDn = (k: number) => `cn=hg${k},cn=hostgroups,cn=accounts,${BASE_DN}`;
const svcDn = (s: string) => `cn=${s},cn=hbacservices,cn=hbac,${BASE_DN}`;
export const ruleDn = (r: string): string => `cn=${r},cn=rules,cn=hbac,${BASE_DN}`;
const SERVICES = ['sshd', 'login', 'su', 'sudo'];

/**
 * The writes, in order, after the realm's tree: allow_all disabled, the
 * hosts (unless `hostsExist`: the sudo rules' data added the same ones,
 * ldap-data.ts), the host groups (`inFirstGroup` joins hg0: a server's own
 * host), the rules.
 */
export function* hbacBatches(size: DataSize & HbacSize, inFirstGroup: readonly string[] = [], hostsExist = false): Generator<WriteOp[]> {
  const groups = Math.min(100, size.hosts);
  yield [{ kind: 'modify', dn: ruleDn('allow_all'), mods: [{ op: 'replace', attr: 'ipaEnabledFlag', values: ['FALSE'] }] }];
  const hosts: WriteOp[] = [];
  if (!hostsExist) for (let h = 0; h < size.hosts; h++) hosts.push({ kind: 'add', dn: hostDn(h), attrs: { objectClass: ['top', 'dirHost'], fqdn: [hostName(h)], cn: [hostName(h)] } });
  if (hosts.length) yield hosts;
  const hg: WriteOp[] = [];
  for (let k = groups - 1; k >= 0; k--) {
    const member: string[] = k === 0 ? [...inFirstGroup] : [];
    for (let h = k; h < size.hosts; h += groups) member.push(hostDn(h));
    if (k < Math.floor(groups / 2)) member.push(hostgroupDn(k + Math.floor(groups / 2)));
    hg.push({ kind: 'add', dn: hostgroupDn(k), attrs: { objectClass: ['top', 'dirHostGroup'], cn: [`hg${k}`], ...(member.length > 0 ? { member } : {}) } });
  }
  yield hg;
  const rand = prng(0x4bac);
  const some = <T>(n: number, draw: () => T): T[] => [...new Set(Array.from({ length: n }, draw))];
  const rules: WriteOp[] = [];
  for (let r = 0; r < size.rules; r++) {
    const attrs: Record<string, string[]> = { objectClass: ['top', 'dirHbacRule'], cn: [`rule${r}`], ipaEnabledFlag: [rand(10) === 0 ? 'FALSE' : 'TRUE'] };
    attrs.memberUser = rand(10) < 8 ? some(1 + rand(2), () => groupDn(rand(size.groups))) : some(1 + rand(5), () => userDn(rand(size.users)));
    const h = rand(100);
    if (h < 60) attrs.memberHost = some(1 + rand(3), () => hostDn(rand(size.hosts)));
    else if (h < 95) attrs.memberHost = [hostgroupDn(rand(groups))];
    else attrs.hostCategory = ['all'];
    const s = rand(10);
    if (s < 7) attrs.memberService = some(1 + rand(2), () => svcDn(SERVICES[rand(SERVICES.length)]!));
    else if (s < 9) attrs.memberService = [`cn=Sudo,cn=hbacservicegroups,cn=hbac,${BASE_DN}`];
    else attrs.serviceCategory = ['all'];
    rules.push({ kind: 'add', dn: ruleDn(`rule${r}`), attrs });
  }
  yield rules;
}
