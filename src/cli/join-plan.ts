/**
 * The files `dirid join` writes, as a plan: for each path the content it
 * holds now (null: none), the content the join gives it and its mode,
 * worked out from the realm's facts, the host's name and the CA alone, so
 * that it can be shown (`--dry-run`), compared with what a joined host has,
 * and tested without root. Every file names the CA by the one path of
 * host/realm-facts.ts. pam-auth-update, the keytab and the services are
 * steps of their own (join.ts); their files are listed here so that they
 * are saved before they change.
 */
import { HOST_PATHS, SSSD_IDP_PLUGIN, type RealmFacts } from '../host/realm-facts.js';
import { krb5ConfText } from '../host/krb5-conf.js';
import { sssdConfText } from '../host/sssd-conf.js';
import { clientConfText } from '../host/client-conf.js';
import { withSss } from '../host/nsswitch.js';
import { SSH_CLIENT_DROP_IN_TEXT, SSHD_DROP_IN_TEXT } from '../host/sshd-drop-in.js';
import { PAM_PROFILE_TEXT } from '../host/pam-profile.js';

export interface FileChange {
  path: string;
  /** what the file holds now; null when there is none */
  before: string | null;
  after: string;
  mode: number;
}

export interface JoinInput {
  facts: RealmFacts;
  fqdn: string;
  caPem: string;
  /** reads a file as the host has it; null when there is none */
  read(path: string): string | null;
}

/** The files pam-auth-update rewrites (and its own record of them): saved before it runs, put back by leave. */
export const PAM_STACK_FILES = [
  '/etc/pam.d/common-auth',
  '/etc/pam.d/common-account',
  '/etc/pam.d/common-password',
  '/etc/pam.d/common-session',
  '/etc/pam.d/common-session-noninteractive',
  '/var/lib/pam/auth',
  '/var/lib/pam/account',
  '/var/lib/pam/password',
  '/var/lib/pam/session',
  '/var/lib/pam/session-noninteractive',
  '/var/lib/pam/seen',
] as const;

/** Every file the join writes itself, with the content it would have; unchanged ones included. */
export function joinFiles(o: JoinInput): FileChange[] {
  const { facts } = o;
  const writtenBy = `Written by dirid join for realm ${facts.realm} (host ${o.fqdn}); dirid leave puts back what was here.`;
  const nsswitch = o.read(HOST_PATHS.nsswitch);
  const wanted: Array<[string, string, number]> = [
    [HOST_PATHS.caFile, o.caPem.endsWith('\n') ? o.caPem : `${o.caPem}\n`, 0o644],
    [HOST_PATHS.clientConf, clientConfText(facts, HOST_PATHS.caFile), 0o644],
    [HOST_PATHS.krb5Conf, krb5ConfText({ realm: facts.realm, domain: facts.domain, servers: facts.servers, pkinitAnchors: HOST_PATHS.caFile, idpPlugin: SSSD_IDP_PLUGIN, writtenBy }), 0o644],
    [HOST_PATHS.sssdConf, sssdConfText({ realm: facts.realm, domain: facts.domain, baseDn: facts.baseDn, servers: facts.servers, host: o.fqdn, caFile: HOST_PATHS.caFile, keytab: HOST_PATHS.keytab, writtenBy }), 0o600],
    [HOST_PATHS.nsswitch, withSss(nsswitch ?? ''), 0o644],
    [HOST_PATHS.sshdDropIn, SSHD_DROP_IN_TEXT, 0o644],
    [HOST_PATHS.sshClientDropIn, SSH_CLIENT_DROP_IN_TEXT, 0o644],
    [HOST_PATHS.pamProfile, PAM_PROFILE_TEXT, 0o644],
  ];
  return wanted.map(([path, after, mode]) => ({ path, before: path === HOST_PATHS.nsswitch ? nsswitch : o.read(path), after, mode }));
}

/** The changes only: files whose content differs from what the join writes. */
export function pendingChanges(files: readonly FileChange[]): FileChange[] {
  return files.filter((f) => f.before !== f.after);
}

/** A short line diff (lines removed `-`, added `+`), for --dry-run. */
export function lineDiff(before: string, after: string): string {
  const a = before.split('\n');
  const b = after.split('\n');
  // longest common subsequence over lines; the files are small
  const n = a.length;
  const m = b.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      i++;
      j++;
    } else if (j < m && (i === n || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) out.push(`+${b[j++]}`);
    else out.push(`-${a[i++]}`);
  }
  return out.filter((l) => l !== '+' && l !== '-').join('\n');
}

/** What --dry-run prints for one change. */
export function describeChange(c: FileChange): string {
  if (c.before === null) return `would create ${c.path} (mode ${c.mode.toString(8)}):\n${c.after.replace(/^/gm, '  ').trimEnd()}\n`;
  return `would change ${c.path}:\n${lineDiff(c.before, c.after).replace(/^/gm, '  ')}\n`;
}
