/**
 * `dirid join` and `dirid leave`, run as root on a Debian host
 * (docs/sssd-host.md). join: checks the Debian packages a host needs
 * (installs them with --install-packages), learns the realm's servers
 * (join-facts.ts), trusts the realm CA only as the administrator says
 * (join-trust.ts), enrols the host (join-enrol.ts: with its one-time
 * password or an administrator's credentials; the entry added when
 * missing) and merges its new keys into /etc/krb5.keytab (other services'
 * keys stay), writes the
 * host's files (join-plan.ts) saving each one first (join-state.ts),
 * switches the PAM stack with pam-auth-update, and starts or restarts SSSD
 * and sshd (systemd where it runs, else the daemons themselves). A second
 * join says the host is joined and changes nothing; --dry-run prints what
 * would change. leave: puts every saved file back, removes the host's keys
 * from the keytab and restarts the services.
 */
import { parseArgs } from 'node:util';
import { X509Certificate } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { HOST_PATHS, hostPort, USUAL_PORTS, type RealmFacts } from '../host/realm-facts.js';
import { pamAuthUpdateArgs, pamSssFirst } from '../host/pam-profile.js';
import { readKeytab, writeKeytab } from '../kerberos/keytab.js';
import { checkFqdn, discoverRealm, dnsResolver } from './join-facts.js';
import { trustedCa, type CaSource } from './join-trust.js';
import { credentialsName, enrolHost, type JoinCredentials } from './join-enrol.js';
import type { Enrolment } from './enroll.js';
import { LOCAL_COMMANDS, LOCAL_FLAGS } from './local-commands.js';
import { describeChange, joinFiles, PAM_STACK_FILES, pendingChanges, type FileChange } from './join-plan.js';
import { makeParents, readOrNull, StateDir, writeAtomic, type JoinState } from './join-state.js';
import { openKeytabTarget } from './keytab-file.js';
import { readSecret } from './prompt.js';
import { CliError, parseArgsProblem } from './errors.js';

/** The Debian packages a joined host runs on (docs/sssd-host.md says what each is for). */
export const HOST_PACKAGES = ['sssd-ldap', 'sssd-krb5', 'sssd-idp', 'libnss-sss', 'libpam-sss', 'libsss-sudo', 'krb5-user', 'openssh-server', 'sudo'] as const;

const JOIN_USAGE = `usage: dirid join [--server HOST[:PORT]] [--domain DOMAIN] [--realm REALM] [--hostname FQDN]
                  (--ca-file FILE | --ca-fingerprint SHA256)
                  [--principal NAME | --otp] [--mkhomedir] [--install-packages] [--dry-run]
Joins this host to a dirid realm (as root): the host entry and its keys in
/etc/krb5.keytab, /etc/krb5.conf, /etc/sssd/sssd.conf, /etc/dirid/, nsswitch,
the PAM stack (pam-auth-update) and an sshd drop-in; then starts SSSD and
(re)starts sshd. Every file changed is saved for dirid leave.
  --server HOST[:PORT]    the dirid server (default: DNS SRV records _dirid._tcp.DOMAIN)
  --domain DOMAIN         the realm's DNS domain (default: the host name less its first label)
  --realm REALM           the Kerberos realm (default: DNS TXT _kerberos.DOMAIN, else DOMAIN in capitals)
  --hostname FQDN         this host's name (default: the system's host name)
  --ca-file FILE          the realm CA (the server's DATA_DIR/ca.crt, brought over safely)
  --ca-fingerprint SHA256 the realm CA's SHA-256 fingerprint (openssl x509 -noout -fingerprint -sha256 -in ca.crt)
  --principal NAME        log in as NAME with a password (asked for, or one line of standard input);
                          without it (or --otp) the Kerberos ticket of KRB5CCNAME is used
  --otp                   the host's one-time password instead (dirid host-add FQDN --random; asked for,
                          or one line of standard input): no administrator's credentials
  --mkhomedir             create home directories at first login (pam_mkhomedir)
  --install-packages      install missing Debian packages with apt-get
  --dry-run               print what would change, change nothing
  -h, --help              this text
`;

const LEAVE_USAGE = `usage: dirid leave [--dry-run]
Undoes dirid join (as root): puts back every file it changed, removes the
host's keys from /etc/krb5.keytab and restarts SSSD and sshd.
  --dry-run               print what would change, change nothing
  -h, --help              this text
`;

interface Options {
  values: Record<string, string | boolean | undefined>;
}

function options(argv: string[], strings: readonly string[], booleans: readonly string[], usage: string): Options | undefined {
  const spec: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const s of strings) spec[s] = { type: 'string' };
  for (const b of booleans) spec[b] = { type: 'boolean' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: spec, allowPositionals: false, strict: true });
  } catch (e) {
    throw new CliError(`${parseArgsProblem(e)}\n${usage}`);
  }
  if (parsed.values.help) {
    process.stdout.write(usage);
    return undefined;
  }
  return { values: parsed.values };
}

const say = (line: string) => process.stdout.write(line + '\n');

function requireRoot(what: string): void {
  if (process.getuid?.() !== 0) throw new CliError(`dirid ${what} changes the host's system files: run it as root (or with --dry-run to see what it would change)`);
}

/** The packages of `names` that are not installed. */
export function missingPackages(names: readonly string[]): string[] {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Package} ${db:Status-Status}\n', ...names], { encoding: 'utf8' });
  if (r.error) throw new CliError(`cannot ask dpkg which packages are installed (${r.error.message}): dirid join needs a Debian host`);
  const installed = new Set(
    r.stdout
      .split('\n')
      .map((l) => l.split(' '))
      .filter(([, status]) => status === 'installed')
      .map(([name]) => name),
  );
  return names.filter((n) => !installed.has(n));
}

/** Runs a command to its end; a daemon that forks away gets no pipes to keep open. */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, daemon = false): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env: { ...process.env, ...env }, stdio: daemon ? 'ignore' : ['ignore', 'pipe', 'pipe'] });
  if (r.error || r.status !== 0) throw new CliError(`${cmd} ${args.join(' ')} failed: ${(r.error?.message ?? r.stderr ?? '').trim() || `exit status ${r.status}`}`);
}

function systemdRuns(): boolean {
  return existsSync('/run/systemd/system');
}

/** Whether a process runs (a zombie, dead but not yet reaped, does not). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readOrNull(`/proc/${pid}/stat`);
  return stat === null || !/^\d+ \(.*\) Z/s.test(stat);
}

/** The process of a pid file, when it runs. */
function runningPid(pidFile: string): number | null {
  const pid = Number(readOrNull(pidFile)?.trim());
  return Number.isInteger(pid) && pid > 1 && alive(pid) ? pid : null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function stopPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 100; i++) {
    if (!alive(pid)) return;
    await sleep(100);
  }
  throw new CliError(`process ${pid} did not stop within 10 s`);
}

/** SSSD (re)started, or stopped when `run` is false; the way the host runs its services. */
async function sssdService(runIt: boolean): Promise<string> {
  if (systemdRuns()) {
    if (runIt) {
      run('systemctl', ['enable', 'sssd.service']);
      run('systemctl', ['restart', 'sssd.service']);
      return 'systemctl restart sssd';
    }
    run('systemctl', ['stop', 'sssd.service']);
    return 'systemctl stop sssd';
  }
  const pid = runningPid('/run/sssd.pid');
  if (pid) await stopPid(pid);
  if (!runIt) return pid ? 'stopped sssd' : 'sssd was not running';
  // logs in /var/log/sssd, where no journald takes them
  run('/usr/sbin/sssd', ['-D', '--logger=files'], {}, true);
  return pid ? 'restarted sssd' : 'started sssd';
}

/** sshd told to read its configuration again (a reload keeps open sessions), or started. */
function sshdService(): string {
  if (systemdRuns()) {
    run('systemctl', ['reload-or-restart', 'ssh.service']);
    return 'systemctl reload-or-restart ssh';
  }
  const pid = runningPid('/run/sshd.pid');
  if (pid) {
    process.kill(pid, 'SIGHUP');
    return 'reloaded sshd';
  }
  run('mkdir', ['-p', '/run/sshd']);
  run('/usr/sbin/sshd', [], {}, true);
  return 'started sshd';
}

/** The keytab's entries of `principal@realm` removed; whether any were. */
function removeKeys(path: string, principal: string, realm: string, removeWhenEmpty: boolean): boolean {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return false;
  }
  const entries = bytes.length === 0 ? [] : readKeytab(bytes);
  const kept = entries.filter((e) => !(e.realm === realm && e.components.join('/') === principal));
  if (kept.length === entries.length) return false;
  if (kept.length === 0 && removeWhenEmpty) rmSync(path, { force: true });
  else writeAtomic(path, writeKeytab(kept), 0o600);
  return true;
}

/** The host's name: the kernel's when it is qualified, else the resolver's canonical one (`hostname --fqdn`, as Debian's /etc/hosts gives it). */
function systemFqdn(): string {
  const name = osHostname();
  if (name.includes('.')) return name;
  const r = spawnSync('hostname', ['--fqdn'], { encoding: 'utf8' });
  const fq = r.status === 0 ? r.stdout.trim() : '';
  return fq.includes('.') ? fq : name;
}

function apiUrl(facts: RealmFacts): string {
  const s = facts.servers[0]!;
  return `https://${hostPort(s.hostname, s.https, USUAL_PORTS.https)}/dirid/json`;
}

export async function joinCommand(argv: string[], state = new StateDir(HOST_PATHS.stateDir)): Promise<number> {
  const parsed = options(argv, LOCAL_COMMANDS.join, LOCAL_FLAGS.join, JOIN_USAGE);
  if (!parsed) return 0;
  const v = parsed.values as Record<string, string | undefined> & { otp?: boolean; mkhomedir?: boolean; 'install-packages'?: boolean; 'dry-run'?: boolean };
  const dryRun = v['dry-run'] === true;
  if (!dryRun) requireRoot('join');
  if (v['ca-file'] !== undefined && v['ca-fingerprint'] !== undefined) throw new CliError('give --ca-file or --ca-fingerprint, not both');
  if (v.otp && v.principal !== undefined) throw new CliError("give --otp (the host's one-time password) or --principal (an administrator's), not both");
  if (v['ca-file'] === undefined && v['ca-fingerprint'] === undefined) {
    throw new CliError("dirid join trusts the server only through its CA: give --ca-file FILE (the server's DATA_DIR/ca.crt) or --ca-fingerprint SHA256");
  }
  const fqdn = checkFqdn(v.hostname ?? systemFqdn(), v.hostname !== undefined ? 'the host name' : "the system's host name (give --hostname FQDN)");

  const previous = state.read();
  if (previous?.status === 'joined') {
    say(`This host is already joined to realm ${previous.realm} as host/${previous.host}; nothing was changed (dirid leave undoes the join).`);
    return 0;
  }
  if (previous) throw new CliError(`a join of this host to realm ${previous.realm} did not finish: run dirid leave to undo what it changed, then join again`);

  const missing = missingPackages(HOST_PACKAGES);
  if (missing.length > 0) {
    if (dryRun) say(`would install the Debian packages: ${missing.join(' ')}`);
    else if (v['install-packages']) {
      say(`Installing ${missing.join(' ')}`);
      run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], { DEBIAN_FRONTEND: 'noninteractive' });
    } else throw new CliError(`missing Debian packages: ${missing.join(' ')}; install them (apt-get install ${missing.join(' ')}) or add --install-packages`);
  }

  const facts = await discoverRealm({ fqdn, ...(v.server !== undefined ? { server: v.server } : {}), ...(v.domain !== undefined ? { domain: v.domain } : {}), ...(v.realm !== undefined ? { realm: v.realm } : {}) }, dnsResolver(process.env.DIRID_DNS_SERVER));
  const server = facts.servers[0]!;
  const caSource: CaSource = v['ca-file'] !== undefined ? { file: v['ca-file'] } : { fingerprint: v['ca-fingerprint']! };
  const caPem = await trustedCa(server.hostname, server.https, caSource);
  say(`Realm ${facts.realm} (domain ${facts.domain}), server ${hostPort(server.hostname, server.https, USUAL_PORTS.https)}: its certificate verifies against the CA given.`);

  const principal = `host/${fqdn}`;
  if (dryRun) {
    const changes = pendingChanges(joinFiles({ facts, fqdn, caPem, read: readOrNull }));
    if (process.getuid?.() !== 0) say('(not root: files that only root may read are shown as new)');
    say(`would enrol host ${fqdn} (adding it if missing) and merge the new keys of ${principal}@${facts.realm} into ${HOST_PATHS.keytab}`);
    for (const c of changes) process.stdout.write(describeChange(c));
    say(`would run pam-auth-update ${pamAuthUpdateArgs(v.mkhomedir === true).join(' ')} (pam_sss first, before pam_unix)`);
    say(`would ${systemdRuns() ? 'restart sssd and reload ssh with systemctl' : 'start or restart sssd and reload or start sshd'}`);
    return 0;
  }

  const creds: JoinCredentials = v.otp
    ? { kind: 'otp', password: await readSecret(`One-time password for host ${fqdn}`) }
    : v.principal !== undefined
      ? { kind: 'password', principal: v.principal, password: await readSecret(`Password for ${v.principal}`) }
      : { kind: 'kerberos' };
  const record: JoinState = { version: 1, realm: facts.realm, domain: facts.domain, host: fqdn, status: 'joining', files: [], dirs: [], keytabExisted: existsSync(HOST_PATHS.keytab) };
  // the keytab is made ready before the server makes new keys: a keytab that cannot be written changes none
  const target = openKeytabTarget(HOST_PATHS.keytab);
  let enrolment: Enrolment;
  try {
    enrolment = await enrolHost(apiUrl(facts), caPem, facts.realm, fqdn, creds);
    if (!sameCertificate(enrolment.caPem, caPem)) throw new CliError('the server named another CA than the one its certificate verified against; nothing was written');
  } catch (e) {
    target.abandon();
    throw e;
  }
  state.write(record);
  target.commit(enrolment.keytab);
  say(`Enrolled host ${fqdn} with ${credentialsName(creds)}: keys of ${enrolment.principal} (kvno ${enrolment.kvno}) added to ${HOST_PATHS.keytab}`);

  // the realm as the server describes it
  const known: RealmFacts = {
    realm: enrolment.realm,
    domain: enrolment.domain,
    baseDn: enrolment.baseDn,
    servers: enrolment.servers.map((s) => ({ hostname: s.hostname, https: s.httpsPort, kdc: s.kdcPort, kpasswd: s.kpasswdPort, ldap: s.ldapPort })),
  };
  record.realm = known.realm;
  record.domain = known.domain;
  const changes = pendingChanges(joinFiles({ facts: known, fqdn, caPem, read: readOrNull }));
  for (const c of changes) writeChange(state, record, c);
  pamStack(state, record, v.mkhomedir === true);
  record.status = 'joined';
  state.write(record);
  say(`Files written: ${changes.map((c) => c.path).join(', ') || 'none'}; the PAM stack runs pam_sss first.`);
  say(`SSSD: ${await sssdService(true)}; sshd: ${sshdService()}.`);
  say(`This host is joined to realm ${known.realm} as ${principal}.`);
  return 0;
}

/** Whether two PEM texts start with the same certificate. */
function sameCertificate(a: string, b: string): boolean {
  try {
    return new X509Certificate(a).fingerprint256 === new X509Certificate(b).fingerprint256;
  } catch {
    return false;
  }
}

function writeChange(state: StateDir, record: JoinState, c: FileChange): void {
  state.save(record, c.path);
  makeParents(c.path, record.dirs);
  state.write(record);
  writeAtomic(c.path, c.after, c.mode);
}

/** pam-auth-update with the dirid profile (written before), its files saved first; checked afterwards. */
function pamStack(state: StateDir, record: JoinState, mkhomedir: boolean): void {
  for (const f of PAM_STACK_FILES) state.save(record, f);
  run('pam-auth-update', pamAuthUpdateArgs(mkhomedir), { DEBIAN_FRONTEND: 'noninteractive' });
  const auth = readOrNull('/etc/pam.d/common-auth') ?? '';
  if (!pamSssFirst(auth)) {
    throw new CliError('pam-auth-update did not put pam_sss first in /etc/pam.d/common-auth (local changes there make it leave the files alone: pam-auth-update --force, then join again); dirid leave undoes the rest');
  }
}

export async function leaveCommand(argv: string[], state = new StateDir(HOST_PATHS.stateDir)): Promise<number> {
  const parsed = options(argv, LOCAL_COMMANDS.leave, LOCAL_FLAGS.leave, LEAVE_USAGE);
  if (!parsed) return 0;
  const dryRun = parsed.values['dry-run'] === true;
  if (!dryRun) requireRoot('leave');
  const record = state.read();
  if (!record) {
    say('This host is not joined (no record of dirid join); nothing was changed.');
    return 0;
  }
  const principal = `host/${record.host}`;
  if (dryRun) {
    for (const f of record.files) say(f.existed ? `would put back ${f.path}` : `would remove ${f.path}`);
    say(`would remove the keys of ${principal}@${record.realm} from ${HOST_PATHS.keytab}`);
    return 0;
  }
  const sssdConfBefore = record.files.find((f) => f.path === HOST_PATHS.sssdConf)?.existed ?? existsSync(HOST_PATHS.sssdConf);
  const restored = state.restore(record);
  const removed = removeKeys(HOST_PATHS.keytab, principal, record.realm, !record.keytabExisted);
  // the cache of the realm's users and groups goes with the realm, and the memory cache NSS reads without SSSD
  for (const f of ['cache', 'timestamps']) rmSync(`/var/lib/sss/db/${f}_${record.domain}.ldb`, { force: true });
  for (const f of ['passwd', 'group', 'initgroups', 'sid']) rmSync(`/var/lib/sss/mc/${f}`, { force: true });
  const sssd = await sssdService(sssdConfBefore);
  const sshd = sshdService();
  state.remove();
  say(`Put back or removed: ${restored.join(', ')}.`);
  say(removed ? `Keys of ${principal}@${record.realm} removed from ${HOST_PATHS.keytab}.` : `No keys of ${principal} were in ${HOST_PATHS.keytab}.`);
  say(`SSSD: ${sssd}; sshd: ${sshd}. This host has left realm ${record.realm}.`);
  return 0;
}
