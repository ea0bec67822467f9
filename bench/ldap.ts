/**
 * LDAP benchmark: dirid's LDAP service and OpenLDAP slapd (Debian's slapd
 * 2.5, mdb backend) side by side in one run, on the same data and under the
 * same load generator (test/support/ldap-load-client.ts, on src/ldap).
 *
 * Data (test/support/ldap-data.ts): N users uid=userN (inetOrgPerson and
 * posixAccount values: cn, sn, givenName, uidNumber, gidNumber,
 * homeDirectory, loginShell, gecos) and G groups of M members each, drawn
 * from a fixed seed, under the DNs dirid uses on both servers. Every user
 * has the same password. dirid stores it as its own scrypt hash
 * ({SCRYPT}, N 16384, r 8: a check costs tens of milliseconds of CPU, by
 * design), hashed once and stored for all; slapd as one {SSHA} hash (one
 * salted SHA-1: microseconds), stored for all, and a second slapd with
 * the same data holds an {ARGON2} hash (16 MiB, 3 passes, with Debian's
 * argon2 module), as deliberately slow as dirid's: the first runs every
 * workload, the second bind+search only, and dirid is compared with each
 * (--slapd-hash ssha or argon2 starts one slapd only, with that hash). The bind+search figures therefore mostly
 * compare the hash functions; the search figures compare the servers.
 * Groups: dirid has dirGroup with posixGroup as an auxiliary class and
 * `member` DNs (RFC 2307bis style); Debian ships no rfc2307bis schema, and
 * nis.schema's posixGroup is structural without `member`, so slapd's groups
 * are posixGroup plus the built-in extensibleObject, which admits the
 * standard `member` attribute: both answer the same filter.
 * slapd (test/support/slapd.ts): loaded with slapadd -q, equality indexes
 * on objectClass, uid, cn, sn, givenName, member, uidNumber and gidNumber,
 * substring indexes on uid and cn (dirid indexes the same attributes; it
 * answers a substring's initial piece by a range scan of its equality
 * index). slapd keys initial pieces of at most 4 characters by default
 * (index_substr_if_maxlen), which for uids that all begin with `user` makes
 * every user a candidate of (uid=user12*); the default is kept, and
 * --slapd-substr-maxlen 8 shows slapd tuned for this data; likewise
 * --slapd-substr-minlen 1 lets slapd answer SSSD's (sudoHost=+*) from its
 * index instead of reading every sudoRole entry (default 2). Bound users
 * read everything but userPassword, anonymous clients only bind; slapd logs
 * every operation (-d stats) to a file, as dirid logs one line per
 * operation (--slapd-log 0: no log).
 * dirid: a realm made and loaded through the directory batch API in a child
 * process (test/support/dirid-ldap-server.ts), then served on free ports by
 * the built server (`bin/dirid-server.js start`, as installed: `npm run
 * build` first), not by the TypeScript source through tsx; or, with --dirid-url, a service already running on that data (made with
 * --prepare-dirid DIR and the same sizes, then `dirid-server start
 * --data-dir DIR --ldaps-port P`), which is then neither started nor
 * pinned. When the server of this tree has no LDAP service and no URL is
 * given, dirid is skipped with a message and slapd runs alone.
 *
 * Both servers are reached over TLS with ECDSA P-256 certificates
 * (src/server/pki.ts; LDAPS, or StartTLS for an ldap:// --dirid-url): dirid
 * allows simple binds only under TLS, so slapd gets the same. Servers are
 * pinned to core 0 and this generator to core 1 (taskset, where present).
 *
 * Workloads, each request's answer checked against the data (a wrong count
 * or result code is an error, not a sample):
 *   eq      (uid=userN) from the users container, attributes cn uidNumber: one entry
 *   sub     (uid=userKK*) for KK in 10..99, size limit 10: ten entries and sizeLimitExceeded
 *   member  (&(objectClass=posixGroup)(member=<userN's DN>)) from the groups
 *           container, attributes cn gidNumber: the groups holding userN
 *   bind    a simple bind as userN on an open TLS connection (a new bind on the
 *           same connection, RFC 4511 §4.2.1), then the eq search for userN
 *   sudo    the full refresh of sudo rules SSSD 2.8 makes for hostN (its filter
 *           as Debian's sssd_be sends it: the host's names, addresses and
 *           networks, ALL, netgroups; the attributes of its sudo map; the paged
 *           results control, 1000 a page) below ou=sudoers: the host's enabled
 *           rules. dirid serves them from its view of the sudo rules (computed
 *           from --rules rules naming users, groups, --hosts hosts, commands and
 *           command groups, objects/sudo-roles.ts); slapd holds the same
 *           sudoRole entries, rendered by the bench (the loader checks that
 *           dirid's equal them), with eq,sub indexes on sudoUser and sudoHost
 *   sudo-smart  its smart refresh: the same host filter and the rules changed
 *           since the last seen, here none: by entryUSN above the root DSE's
 *           lastUSN on dirid (SSSD asks so of a server announcing lastUSN,
 *           read once before the runs with ldapsearch), by modifyTimestamp on
 *           slapd (which announces none); the sudo workloads ask for the same
 *           attribute beside the sudoRole ones
 *   access  (only when named in --workloads) the look-up a host's SSSD makes for
 *           userN before the account phase of a login (docs/hbac.md): its
 *           getpwnam filter (&(uid=userN)(objectclass=posixAccount)(&(uidNumber=*)
 *           (!(uidNumber=0)))) with the attributes SSSD's rfc2307bis map names,
 *           host and authorizedService among them: one entry. dirid is asked
 *           by a host bound as itself (SASL GSSAPI as host/localhost with the
 *           realm's host.keytab, as SSSD binds; test/support/sasl-gssapi-client.ts)
 *           and computes both from --rules access rules over --hosts hosts
 *           (test/support/hbac-data.ts; the asking host in a host group);
 *           slapd, which has no such rules, stores them on every user
 *           (ldap-data.ts STORED_ACCESS) and is asked by user0. memberOf is
 *           among the attributes: dirid computes it (ldap-server/member-of.ts),
 *           slapd runs its memberof overlay and holds the values it keeps
 *           (written by the loader: slapadd runs no overlay). Not with
 *           --dirid-url (the bench then has no host keytab for it).
 * The time dirid takes to build the view after a write (the first read after
 * any write pays it once) is printed with the load times.
 * Searches run --concurrency requests at a time over --connections TLS
 * connections bound once as user0; since a bind must be alone on its
 * connection, bind+search runs --concurrency connections with one
 * bind-then-search under way on each. Each run lasts --seconds after a
 * warm-up of --warmup seconds per server and workload; the runs alternate
 * between the servers for --rounds rounds and medians are compared, so a
 * noisy neighbour on the shared machine weighs on both alike. Printed per
 * server and workload: operations per second, p50 and p99 latency (medians of the rounds; each round's p99 on a line below), errors,
 * and the CPU used by the server and by the generator (a generator near
 * 100% means the figure is the generator's limit, not the server's), and the
 * server's CPU time (utime + stime from /proc/PID/stat over the run) per
 * answered operation; then the ratio dirid/slapd of throughput and of p99
 * latency, and the ratio slapd/dirid of CPU per operation: the one-core
 * figure that holds on a busy machine, where wall-clock throughput depends
 * on what the neighbours take (above 1.0: dirid needs less CPU per answer).
 *   node --import tsx bench/ldap.ts [--users N] [--groups N] [--members N] [--hosts N] [--rules N] [--seconds N] [--rounds N]
 *        [--warmup N] [--concurrency N] [--connections N] [--workloads eq,sub,member,bind+search,sudo,sudo-smart,access] [--only slapd|dirid] [--slapd-hash ssha,argon2|ssha|argon2]
 *        [--slapd-log stats|0] [--slapd-substr-maxlen N] [--slapd-substr-minlen N] [--dirid-cache-mb N] [--dirid-url ldaps://HOST:PORT [--dirid-pid PID]] [--prepare-dirid DIR] [--keep]
 * --dirid-pid names the process of a --dirid-url service, for its CPU figures (it is then pinned like
 * the child: keep the service's other work away while measuring).
 * --keep leaves the scratch directory (slapd's stats.log, dirid's server.log) in place.
 * --dirid-cache-mb sets dirid's store_cache_mb (entries kept parsed; default a tenth of the
 * machine's memory within 64 MiB to 1 GiB; 100,000 of these users take about 250 MB; slapd's
 * mdb is a memory map the kernel keeps whole here).
 * --workloads runs only the named ones. BENCH_SERVER_ARGS in the environment adds Node
 * options to dirid's server process (e.g. "--cpu-prof --cpu-prof-dir=DIR" for a profile).
 */
import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { once } from 'node:events';
import type { Filter } from '../src/directory/filter.js';
import { ResultCode } from '../src/ldap/codes.js';
import { hashPassword, verifyPassword } from '../src/account/password-hash.js';
import { createCa, issueServerCert } from '../src/server/pki.js';
import { LdapClient, type Outcome } from '../test/support/ldap-load-client.js';
import { BASE_DN, BENCH_PASSWORD, BENCH_REALM, DATA_SIZE_OPTIONS, dataSize, Expected, GROUPS_DN, SUDOERS_DN, USERS_DN, hostName, memberships, slapdLdif, sudoRules, sudoRulesPerHost, userDn, userName, type DataSize } from '../test/support/ldap-data.js';
import { pagedResultsControl } from '../src/ldap/controls.js';
import { gssapiBind } from '../test/support/sasl-gssapi-client.js';
import { generalizedTime } from '../src/directory/schema.js';
import { loadSlapd, slapdHash, startSlapd, type Slapd, type SlapdOptions } from '../test/support/slapd.js';
import type { DiridJob, DiridReport } from '../test/support/dirid-ldap-server.js';

const { values } = parseArgs({
  options: {
    ...DATA_SIZE_OPTIONS,
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '32' },
    connections: { type: 'string', default: '8' },
    only: { type: 'string' },
    workloads: { type: 'string', default: 'eq,sub,member,bind+search,sudo,sudo-smart' },
    'slapd-hash': { type: 'string', default: 'ssha,argon2' },
    'slapd-log': { type: 'string', default: 'stats' },
    'slapd-substr-maxlen': { type: 'string' },
    'slapd-substr-minlen': { type: 'string' },
    'dirid-url': { type: 'string' },
    'dirid-pid': { type: 'string' },
    'dirid-cache-mb': { type: 'string' },
    'prepare-dirid': { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const SIZE: DataSize = dataSize(values);
/** the access workload's data: host-based access rules on dirid (--hosts hosts, --rules rules), stored access attributes on slapd */
const ACCESS = values.workloads.split(',').includes('access');
const HBAC = { hosts: SIZE.hosts, rules: SIZE.rules };
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const WARMUP = Number(values.warmup);
const CONC = Number(values.concurrency);
const CONNS = Math.min(Number(values.connections), CONC);
const ONLY = values.only;
const SLAPD_HASHES = values['slapd-hash'].split(',') as Array<'ssha' | 'argon2'>;
const SUBSTR_MAXLEN = values['slapd-substr-maxlen'] === undefined ? undefined : Number(values['slapd-substr-maxlen']);
const SUBSTR_MINLEN = values['slapd-substr-minlen'] === undefined ? undefined : Number(values['slapd-substr-minlen']);
if (ONLY !== undefined && ONLY !== 'slapd' && ONLY !== 'dirid') throw new Error('--only takes slapd or dirid');
if (SLAPD_HASHES.some((h, i) => (h !== 'ssha' && h !== 'argon2') || SLAPD_HASHES.indexOf(h) !== i)) throw new Error('--slapd-hash takes ssha, argon2 or both (comma-separated)');
for (const [k, v] of Object.entries({ ...SIZE, SECONDS, ROUNDS, CONC, CONNS })) if (!Number.isInteger(v) || v < 1) throw new Error(`${k} must be a positive integer`);
// dirid answers `busy` past 32 operations under way on one connection (ldap_max_operations)
if (Math.ceil(CONC / CONNS) > 32) throw new Error('--concurrency / --connections must be 32 or less');
if (SIZE.users < 100) throw new Error('--users must be at least 100 (the substring workload uses two-digit prefixes)');

const hasTaskset = spawnSync('taskset', ['-p', String(process.pid)]).status === 0;
const pin = (pid: number, core: number) => hasTaskset && spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)]);

/** The attributes SSSD 2.8's rfc2307bis user map names in a user look-up (ldap_opts.c), host and authorizedService among them. */
const SSSD_USER_ATTRIBUTES = [
  'objectClass', 'uid', 'userPassword', 'uidNumber', 'gidNumber', 'gecos', 'homeDirectory', 'loginShell', 'krbPrincipalName', 'cn',
  'modifyTimestamp', 'shadowLastChange', 'shadowMin', 'shadowMax', 'shadowWarning', 'shadowInactive', 'shadowExpire', 'shadowFlag',
  'krbLastPwdChange', 'krbPasswordExpiration', 'pwdAttribute', 'authorizedService', 'accountExpires', 'userAccountControl',
  'nsAccountLock', 'host', 'rhost', 'loginDisabled', 'loginExpirationTime', 'loginAllowedTimeMap', 'sshPublicKey', 'userCertificate;binary', 'mail', 'memberOf',
];

// ---- clean-up, also on errors and Ctrl-C ------------------------------------------------
const cleanups: Array<() => unknown> = [];
let cleaning: Promise<void> | undefined;
const cleanup = () =>
  (cleaning ??= (async () => {
    for (const f of cleanups.reverse()) {
      try {
        await f();
      } catch (e) {
        console.error(`clean-up: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  })());
for (const sig of ['SIGINT', 'SIGTERM'] as const)
  process.once(sig, () => {
    console.error(`${sig}: stopping the servers`);
    void cleanup().then(() => process.exit(130));
  });

const tmp = mkdtempSync(join(tmpdir(), 'bench-ldap-'));
cleanups.push(() => (values.keep ? console.log(`kept ${tmp} (slapd: stats.log; dirid: server.log)`) : rmSync(tmp, { recursive: true, force: true })));

/** dirid's loader and server in a child process; resolves with its first report. */
function forkDirid(job: DiridJob, logPath: string): { child: ChildProcess; report: Promise<DiridReport> } {
  const child = fork(new URL('../test/support/dirid-ldap-server.ts', import.meta.url).pathname, [JSON.stringify(job)], { execArgv: [...process.execArgv, ...(process.env.BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean)], stdio: ['ignore', openSync(logPath, 'w'), 'inherit', 'ipc'] });
  const report = new Promise<DiridReport>((resolve) => {
    child.once('message', (m) => resolve(m as DiridReport));
    child.once('exit', (code) => resolve({ type: 'error', message: `exited with code ${code} before reporting` }));
  });
  return { child, report };
}

/**
 * dirid as it is installed: the realm made and loaded by the child above
 * (run from source, with serve false), then served by bin/dirid-server.js,
 * the server `npm run build` makes, in a process of its own. Serving from
 * the TypeScript source through tsx would measure tsx's transform too (it
 * adds a helper call to every named function). `holder.child` is the
 * process of the moment, loader then server, for clean-up and pinning.
 */
function loadAndServeDirid(job: DiridJob, logPath: string): { holder: { child: ChildProcess }; report: Promise<DiridReport> } {
  const loader = forkDirid({ ...job, serve: false }, logPath);
  const holder = { child: loader.child };
  const report = (async (): Promise<DiridReport> => {
    const r = await loader.report;
    await stopChild(loader.child);
    if (r.type !== 'prepared') return r;
    const args = [...(process.env.BENCH_SERVER_ARGS ?? '').split(' ').filter(Boolean), new URL('../bin/dirid-server.js', import.meta.url).pathname, 'start', '--data-dir', job.dataDir, '--listen', '127.0.0.1'];
    for (const port of ['--https-port', '--http-port', '--kdc-port', '--kpasswd-port', '--ldap-port', '--ldaps-port']) args.push(port, '0');
    const server = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    holder.child = server;
    const log = createWriteStream(logPath, { flags: 'a' });
    let seen = '';
    let found = false;
    return new Promise<DiridReport>((resolve) => {
      server.stdout!.on('data', (d: Buffer) => {
        log.write(d);
        if (found) return;
        seen += d.toString();
        const ldap = / service=ldap url=ldap:\/\/127\.0\.0\.1:(\d+)\//.exec(seen);
        const ldaps = / service=ldaps url=ldaps:\/\/127\.0\.0\.1:(\d+)\//.exec(seen);
        if (ldap && ldaps) {
          found = true;
          resolve({ type: 'ready', ldapPort: Number(ldap[1]), ldapsPort: Number(ldaps[1]), loadSeconds: r.loadSeconds, viewBuildMs: r.viewBuildMs });
        }
      });
      server.once('exit', (code) => resolve({ type: 'error', message: `dirid-server exited with code ${code} before listening` }));
    });
  })();
  return { holder, report };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = once(child, 'exit');
  child.kill('SIGTERM');
  await gone;
}

// ---- --prepare-dirid: a loaded realm for a later --dirid-url run ------------------------
if (values['prepare-dirid']) {
  const dataDir = values['prepare-dirid'];
  const { child, report } = forkDirid({ dataDir, serve: false, ...SIZE }, join(tmp, 'server.log'));
  const r = await report;
  await stopChild(child);
  await cleanup();
  if (r.type !== 'prepared') {
    console.error(`dirid: ${r.type === 'error' ? r.message : r.type}`);
    process.exit(1);
  }
  console.log(`dirid realm with ${SIZE.users} users, ${SIZE.groups} groups of ${SIZE.members}, ${SIZE.hosts} hosts and ${SIZE.rules} sudo rules in ${dataDir} (loaded in ${r.loadSeconds.toFixed(1)} s);`);
  console.log(`start it with: dirid-server start --data-dir ${dataDir} --listen 127.0.0.1 --ldaps-port PORT, then pass --dirid-url ldaps://127.0.0.1:PORT`);
  process.exit(0);
}

interface Target {
  /** dirid, slapd, or slapd-HASH when several slapd run */
  name: string;
  /** the kinds of workload run on it (a second slapd runs only bind+search) */
  kinds: ReadonlySet<'search' | 'bind' | 'host'>;
  url: string;
  /** the server process, for CPU figures (none for a --dirid-url service) */
  pid: number | undefined;
  /** connections the searches share, bound as user0 */
  search: LdapClient[];
  /** connections of the bind+search workload, one chain each */
  binders: LdapClient[];
  /** connections of the access workload: dirid's bound as host/localhost (SASL GSSAPI), slapd's as user0 */
  hosts: LdapClient[];
  /** the root DSE's lastUSN, when the server announces one (dirid): SSSD then refreshes sudo rules by entryUSN, else by modifyTimestamp */
  usn?: string;
}

let exitCode = 0;
try {
  const groups = memberships(SIZE);
  const expected = new Expected(SIZE, groups);
  const rules = sudoRules(SIZE);
  const rulesOfHost = sudoRulesPerHost(SIZE, rules);
  const notes: string[] = [];
  const targets: Target[] = [];
  const ca = await createCa('bench CA');
  const cert = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });

  // both loads at once: slapadd here, dirid's batches in its child
  let dirid: { holder: { child: ChildProcess }; report: Promise<DiridReport> } | undefined;
  let diridUrl = values['dirid-url'];
  if (ONLY !== 'slapd' && !diridUrl) {
    dirid = loadAndServeDirid({ dataDir: join(tmp, 'dirid'), serve: true, ...SIZE, ...(values['dirid-cache-mb'] ? { cacheMb: Number(values['dirid-cache-mb']) } : {}), ...(ACCESS ? { hbac: HBAC } : {}) }, join(tmp, 'server.log'));
    const holder = dirid.holder;
    cleanups.push(() => stopChild(holder.child));
  }
  // one slapd per hash, loaded at once
  const slapds: Array<{ hash: 'ssha' | 'argon2'; opts: SlapdOptions; load: Promise<number> }> = [];
  if (ONLY !== 'dirid') {
    for (const hash of SLAPD_HASHES) {
      const opts: SlapdOptions = { dir: join(tmp, SLAPD_HASHES.length > 1 ? `slapd-${hash}` : 'slapd'), suffix: BASE_DN, certPem: cert.certPem + ca.certPem, keyPem: cert.keyPem, logLevel: values['slapd-log'], argon2: hash === 'argon2', ...(SUBSTR_MAXLEN === undefined ? {} : { substrMaxLen: SUBSTR_MAXLEN }), ...(SUBSTR_MINLEN === undefined ? {} : { substrMinLen: SUBSTR_MINLEN }), ...(hasTaskset ? { core: 0 } : {}) };
      const t0 = performance.now();
      const load = loadSlapd(opts, slapdLdif(SIZE, groups, slapdHash(BENCH_PASSWORD, hash), rules, ACCESS)).then(() => (performance.now() - t0) / 1000);
      // its failure is reported where it is awaited, after dirid's load
      load.catch(() => {});
      slapds.push({ hash, opts, load });
    }
  }
  if (dirid) {
    const r = await dirid.report;
    if (r.type === 'ready') {
      diridUrl = `ldaps://127.0.0.1:${r.ldapsPort}`;
      pin(dirid.holder.child.pid!, 0);
      notes.push(`dirid loaded in ${r.loadSeconds.toFixed(1)} s, its sudoRole view (checked equal to slapd's entries) built in ${r.viewBuildMs.toFixed(0)} ms`);
    } else {
      const why = r.type === 'no-ldap' ? "this tree's server has no LDAP service (its RunningServer has no ldapsPort)" : `its server failed: ${r.type === 'error' ? r.message : r.type}`;
      console.log(`dirid: skipped, ${why}; pass --dirid-url ldaps://HOST:PORT to measure a running one`);
      await stopChild(dirid.holder.child);
      dirid = undefined;
      diridUrl = undefined;
    }
  }
  const ALL = new Set(['search', 'bind', 'host'] as const);
  const diridPid = dirid?.holder.child.pid ?? (values['dirid-pid'] === undefined ? undefined : Number(values['dirid-pid']));
  if (values['dirid-pid'] !== undefined && !dirid) pin(diridPid!, 0);
  if (diridUrl) targets.push({ name: 'dirid', url: diridUrl, pid: diridPid, kinds: dirid ? ALL : new Set(['search', 'bind'] as const), search: [], binders: [], hosts: [] });
  if (ACCESS && diridUrl && !dirid) notes.push('access: not run on dirid (--dirid-url: no host keytab)');
  for (const [i, x] of slapds.entries()) {
    const name = slapds.length > 1 ? `slapd-${x.hash}` : 'slapd';
    notes.push(`${name} loaded in ${(await x.load).toFixed(1)} s`);
    const s: Slapd = await startSlapd(x.opts);
    cleanups.push(() => s.stop());
    targets.push({ name, url: `ldaps://127.0.0.1:${s.ldapsPort}`, pid: s.process.pid, kinds: i === 0 ? ALL : new Set(['bind'] as const), search: [], binders: [], hosts: [] });
  }
  if (targets.length === 0) throw new Error('nothing to measure');
  // pinned only now, so that slapadd and dirid's loader (children of this process) were not
  pin(process.pid, 1);

  for (const t of targets) {
    for (let i = 0; i < CONNS; i++) {
      const c = await LdapClient.connect(t.url);
      await c.bindOrThrow(userDn(0), BENCH_PASSWORD);
      t.search.push(c);
    }
    for (let i = 0; i < CONC; i++) t.binders.push(await LdapClient.connect(t.url));
    if (ACCESS && t.kinds.has('host')) {
      // dirid's own realm: the KDC's port as its krb5.conf names it, the host's keys from host.keytab
      const data = join(tmp, 'dirid');
      const kdc = t.name === 'dirid' ? /^\s*kdc = [^:\s]+:(\d+)/m.exec(readFileSync(join(data, 'krb5.conf'), 'utf8')) : null;
      for (let i = 0; i < CONNS; i++) {
        const c = await LdapClient.connect(t.url);
        if (kdc) await gssapiBind(c, { kdc: { host: '127.0.0.1', port: Number(kdc[1]) }, realm: BENCH_REALM, keytab: readFileSync(join(data, 'host.keytab')), principal: ['host', 'localhost'], service: ['ldap', 'localhost'] });
        else await c.bindOrThrow(userDn(0), BENCH_PASSWORD);
        t.hosts.push(c);
      }
    }
    cleanups.push(() => [...t.search, ...t.binders, ...t.hosts].forEach((c) => c.close()));
    const s = t.search[0]!.socket;
    notes.push(`${t.name} ${t.url} ${s.getProtocol()} ${s.getCipher().name}`);
  }

  /** The root DSE's lastUSN after a first read of the sudo rules (which numbers them), if the server has one (read with OpenLDAP's ldapsearch, anonymously). */
  async function lastUsn(t: Target): Promise<string | undefined> {
    await new Promise<void>((resolve) => t.search[0]!.search({ base: SUDOERS_DN, filter: { kind: 'present', attr: 'objectClass' }, attributes: ['1.1'] }, () => resolve()));
    const r = spawnSync('ldapsearch', ['-x', '-LLL', '-o', 'ldif-wrap=no', '-H', t.url, '-b', '', '-s', 'base', '(objectClass=*)', 'lastUSN'], { encoding: 'utf8', env: { ...process.env, LDAPTLS_REQCERT: 'never' } });
    if (r.status !== 0) throw new Error(`${t.name}: ldapsearch of the root DSE: ${r.stderr}`);
    return /^lastUSN: (\d+)$/m.exec(r.stdout)?.[1];
  }

  // ---- workloads ----------------------------------------------------------------------
  type Finish = (error: string | null) => void;
  interface Workload {
    name: string;
    /** bind: one chain per binder connection; search: CONC chains over the search connections; host: the same over the access connections */
    kind: 'search' | 'bind' | 'host';
    step(c: LdapClient, finish: Finish, t: Target): void;
  }
  const rnd = (n: number) => Math.floor(Math.random() * n);
  const eq = (attr: string, value: string): Filter => ({ kind: 'eq', attr, value });
  const wrong = (o: Outcome, want: string) => `result ${o.resultCode} with ${o.entries} entries (expected ${want})${o.diagnosticMessage ? `: ${o.diagnosticMessage}` : ''}`;
  const eqSearch = (c: LdapClient, j: number, finish: Finish) =>
    c.search({ base: USERS_DN, filter: eq('uid', userName(j)), attributes: ['cn', 'uidNumber'] }, (o) =>
      finish(o.resultCode === ResultCode.success && o.entries === 1 ? null : wrong(o, 'success with 1')),
    );
  // SSSD 2.8's sudo refresh (sdap_sudo_refresh.c; its filter as Debian's sssd_be logs it): the attributes of its sudo map,
  // entryUSN from a server announcing lastUSN (dirid), modifyTimestamp standing for it on one without (slapd)
  const sudoAttrs = (t: Target) => ['objectClass', 'cn', 'sudoCommand', 'sudoHost', 'sudoUser', 'sudoOption', 'sudoRunAs', 'sudoRunAsUser', 'sudoRunAsGroup', 'sudoNotBefore', 'sudoNotAfter', 'sudoOrder', t.usn === undefined ? 'modifyTimestamp' : 'entryUSN'];
  /** The host part: rules with no sudoHost named defaults, ALL, the host's names, its addresses and networks, netgroups. */
  const hostFilter = (h: number): Filter => {
    const host = (value: string) => eq('sudoHost', value);
    const ip = `10.${(h >> 8) & 255}.${h & 255}.5`;
    return {
      kind: 'or',
      items: [
        { kind: 'and', items: [{ kind: 'not', item: { kind: 'present', attr: 'sudoHost' } }, eq('cn', 'defaults')] },
        host('ALL'),
        host(hostName(h)),
        host(`host${h}`),
        host(ip),
        host(`${ip.slice(0, ip.lastIndexOf('.'))}.0/24`),
        host(`fd00::${h.toString(16)}`),
        host('fd00::/64'),
        { kind: 'sub', attr: 'sudoHost', initial: '+', any: [] },
      ],
    };
  };
  const sudoFilter = (h: number): Filter => ({ kind: 'and', items: [eq('objectClass', 'sudoRole'), hostFilter(h)] });
  /** after every rule of the data set: a smart refresh finds none changed */
  const SMART_SINCE = generalizedTime();
  const allWorkloads: Workload[] = [
    { name: 'eq', kind: 'search', step: (c, finish) => eqSearch(c, rnd(SIZE.users), finish) },
    {
      name: 'sub',
      kind: 'search',
      step(c, finish) {
        const k = 10 + rnd(90);
        const n = expected.prefixMatches(k);
        const code = n > 10 ? ResultCode.sizeLimitExceeded : ResultCode.success;
        c.search({ base: USERS_DN, filter: { kind: 'sub', attr: 'uid', initial: `user${k}`, any: [] }, attributes: ['cn', 'uidNumber'], sizeLimit: 10 }, (o) =>
          finish(o.resultCode === code && o.entries === Math.min(n, 10) ? null : wrong(o, `${code} with ${Math.min(n, 10)}`)),
        );
      },
    },
    {
      name: 'member',
      kind: 'search',
      step(c, finish) {
        const j = rnd(SIZE.users);
        const n = expected.groupsOf[j]!;
        c.search({ base: GROUPS_DN, filter: { kind: 'and', items: [eq('objectClass', 'posixGroup'), eq('member', userDn(j))] }, attributes: ['cn', 'gidNumber'] }, (o) =>
          finish(o.resultCode === ResultCode.success && o.entries === n ? null : wrong(o, `success with ${n}`)),
        );
      },
    },
    {
      name: 'sudo',
      kind: 'search',
      step(c, finish, t) {
        const h = rnd(SIZE.hosts);
        const n = rulesOfHost[h]!;
        c.search({ base: SUDOERS_DN, filter: sudoFilter(h), attributes: sudoAttrs(t), controls: [pagedResultsControl({ size: 1000, cookie: Buffer.alloc(0) })] }, (o) =>
          finish(o.resultCode === ResultCode.success && o.entries === n ? null : wrong(o, `success with ${n}`)),
        );
      },
    },
    {
      name: 'sudo-smart',
      kind: 'search',
      step(c, finish, t) {
        // changed since the greatest entryUSN seen (the server's lastUSN), or since a time after every rule was written
        const [attr, value] = t.usn === undefined ? ['modifyTimestamp', SMART_SINCE] : ['entryUSN', t.usn];
        const changed: Filter = { kind: 'and', items: [eq('objectclass', 'sudoRole'), { kind: 'ge', attr, value }, { kind: 'not', item: eq(attr, value) }] };
        const filter: Filter = { kind: 'and', items: [changed, hostFilter(rnd(SIZE.hosts))] };
        c.search({ base: SUDOERS_DN, filter, attributes: sudoAttrs(t), controls: [pagedResultsControl({ size: 1000, cookie: Buffer.alloc(0) })] }, (o) =>
          finish(o.resultCode === ResultCode.success && o.entries === 0 ? null : wrong(o, 'success with 0')),
        );
      },
    },
    {
      name: 'access',
      kind: 'host',
      step(c, finish) {
        const filter: Filter = { kind: 'and', items: [eq('uid', userName(rnd(SIZE.users))), eq('objectclass', 'posixAccount'), { kind: 'and', items: [{ kind: 'present', attr: 'uidNumber' }, { kind: 'not', item: eq('uidNumber', '0') }] }] };
        c.search({ base: USERS_DN, filter, attributes: SSSD_USER_ATTRIBUTES }, (o) => finish(o.resultCode === ResultCode.success && o.entries === 1 ? null : wrong(o, 'success with 1')));
      },
    },
    {
      name: 'bind+search',
      kind: 'bind',
      step(c, finish) {
        const j = rnd(SIZE.users);
        c.bind(userDn(j), BENCH_PASSWORD, (o) => (o.resultCode === ResultCode.success ? eqSearch(c, j, finish) : finish(`bind: ${wrong(o, 'success')}`)));
      },
    },
  ];

  const workloads = values.workloads.split(',').map((name) => {
    const w = allWorkloads.find((x) => x.name === name);
    if (!w) throw new Error(`--workloads takes a comma-separated list of ${allWorkloads.map((x) => x.name).join(', ')}`);
    return w;
  });

  interface Result {
    ops: number;
    p50: number;
    p99: number;
    errors: number;
    firstError?: string;
    /** CPU over the run, percent of one core; NaN when unknown */
    serverCpu: number;
    generatorCpu: number;
    /** server CPU time (utime + stime) per answered operation over the run, in µs; NaN when unknown */
    cpuPerOp: number;
  }

  const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  /** utime + stime of a process (all its threads), in ms. */
  const cpuOf = (pid: number | undefined): number => {
    if (pid === undefined) return NaN;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return ((Number(f[11]) + Number(f[12])) * 1000) / TICK;
    } catch {
      return NaN;
    }
  };
  const generatorCpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };

  /**
   * Keeps CONC operations under way on `t` for `seconds`: each chain starts
   * its next operation as soon as its last is answered. Operations answered
   * after the end are not counted; the run returns once all are answered.
   */
  async function drive(t: Target, w: Workload, seconds: number): Promise<Result> {
    const chains: LdapClient[] = [];
    if (w.kind === 'bind') chains.push(...t.binders);
    else {
      const pool = w.kind === 'host' ? t.hosts : t.search;
      for (let i = 0; i < CONC; i++) chains.push(pool[i % pool.length]!);
    }
    const lat: number[] = [];
    let errors = 0;
    let firstError: string | undefined;
    let running = true;
    let inflight = 0;
    let answered = 0;
    let drained: (() => void) | undefined;
    const t0 = performance.now();
    const end = t0 + seconds * 1000;
    const cpu0 = [cpuOf(t.pid), generatorCpu()] as const;
    let cpu1: readonly [number, number] = cpu0;
    const run = (c: LdapClient) => {
      if (!running || c.broken) {
        if (inflight === 0) drained?.();
        return;
      }
      inflight++;
      const start = performance.now();
      w.step(
        c,
        (error) => {
          inflight--;
          const now = performance.now();
          if (now <= end) {
            answered++;
            if (error === null) lat.push(now - start);
            else {
              errors++;
              firstError ??= error;
            }
          }
          run(c);
        },
        t,
      );
    };
    for (const c of chains) run(c);
    await new Promise((r) => setTimeout(r, seconds * 1000));
    cpu1 = [cpuOf(t.pid), generatorCpu()];
    running = false;
    if (inflight > 0) await new Promise<void>((r) => (drained = r));
    const broken = chains.find((c) => c.broken);
    if (broken) throw new Error(`${t.name}: a connection failed: ${broken.broken}`);
    lat.sort((a, b) => a - b);
    const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor(lat.length * p))] ?? NaN;
    const ms = seconds * 1000;
    return { ops: lat.length / seconds, p50: pct(0.5), p99: pct(0.99), errors, ...(firstError ? { firstError } : {}), serverCpu: ((cpu1[0] - cpu0[0]) / ms) * 100, generatorCpu: ((cpu1[1] - cpu0[1]) / ms) * 100, cpuPerOp: answered === 0 ? NaN : ((cpu1[0] - cpu0[0]) * 1000) / answered };
  }

  let scryptMs = NaN;
  if (targets.some((t) => t.name === 'dirid')) {
    const h = await hashPassword(BENCH_PASSWORD);
    const t0 = performance.now();
    await verifyPassword(BENCH_PASSWORD, h);
    scryptMs = performance.now() - t0;
  }
  // a server that announces lastUSN (dirid, once its sudo rules are first read) is refreshed by entryUSN, as SSSD does
  for (const t of targets) t.usn = await lastUsn(t);
  for (const t of targets) for (const w of workloads) if (t.kinds.has(w.kind)) await drive(t, w, WARMUP);
  const runs = new Map<string, Result[]>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const w of workloads) {
      for (const t of targets) {
        if (!t.kinds.has(w.kind)) continue;
        const k = `${t.name} ${w.name}`;
        runs.set(k, [...(runs.get(k) ?? []), await drive(t, w, SECONDS)]);
      }
    }
  }

  // ---- report -------------------------------------------------------------------------
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
  };
  const summary = (rs: Result[]) => ({
    ops: median(rs.map((r) => r.ops)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    serverCpu: median(rs.map((r) => r.serverCpu)),
    generatorCpu: median(rs.map((r) => r.generatorCpu)),
    cpuPerOp: median(rs.map((r) => r.cpuPerOp)),
  });
  const slapdVersion = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'slapd'], { encoding: 'utf8' }).stdout;
  console.log(
    `LDAP benchmark: ${SIZE.users} users, ${SIZE.groups} groups of ${Math.min(SIZE.members, SIZE.users)} members, ${SIZE.hosts} hosts, ${SIZE.rules} sudo rules (${rules.filter((r) => r.enabled).length} enabled; a host's full refresh finds ${Math.min(...rulesOfHost)}-${Math.max(...rulesOfHost)}); ${ROUNDS} rounds of ${SECONDS} s per server and workload, alternating, after ${WARMUP} s of warm-up; ` +
      `${CONC} operations under way (searches over ${CONNS} TLS connections, bind+search over ${CONC}); ` +
      (hasTaskset ? `servers on core 0, generator on core 1; ` : 'no taskset: nothing pinned; ') +
      `slapd ${slapdVersion} (mdb, ${SLAPD_HASHES.map((h) => `{${h.toUpperCase()}}`).join(' and ')}, -d ${values['slapd-log']}, substring index keys of at most ${SUBSTR_MAXLEN ?? "4 characters, slapd's default"}${SUBSTR_MAXLEN === undefined ? '' : ' characters'}, of at least ${SUBSTR_MINLEN ?? "2, slapd's default"})`,
  );
  console.log(`  ${notes.join('; ')}`);
  if (!Number.isNaN(scryptMs)) console.log(`  one check of dirid's {SCRYPT} hash takes ${scryptMs.toFixed(1)} ms in this process (core 1)`);
  console.log('run'.padEnd(26) + 'ops/s (median, each round)'.padEnd(34) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9) + 'errors'.padStart(8) + 'server CPU%'.padStart(13) + 'gen CPU%'.padStart(10) + 'CPU µs/op'.padStart(11) + ' (each round)');
  const cpu = (x: number) => (Number.isNaN(x) ? '-' : x.toFixed(0));
  for (const [k, rs] of runs) {
    const m = summary(rs);
    const each = rs.map((r) => r.ops.toFixed(0)).join(' ');
    if (rs.length > 1) console.log(`  ${k}: p99 ms each round ${rs.map((r) => r.p99.toFixed(2)).join(' ')}`);
    console.log(
      k.padEnd(26) + `${m.ops.toFixed(0)} (${each})`.padEnd(34) + m.p50.toFixed(2).padStart(9) + m.p99.toFixed(2).padStart(9) + String(m.errors).padStart(8) + cpu(m.serverCpu).padStart(13) + cpu(m.generatorCpu).padStart(10) + (Number.isNaN(m.cpuPerOp) ? '-' : m.cpuPerOp.toFixed(1)).padStart(11) + (Number.isNaN(m.cpuPerOp) || rs.length < 2 ? '' : ` (${rs.map((r) => r.cpuPerOp.toFixed(1)).join(' ')})`),
    );
    const err = rs.find((r) => r.firstError)?.firstError;
    if (err) console.log(`  first error: ${err}`);
  }
  const dTarget = targets.find((t) => t.name === 'dirid');
  if (dTarget) {
    // two decimals, or two significant digits below 0.1 (a bind ratio can be 0.005)
    const ratio = (x: number) => (x >= 0.1 || x === 0 || !Number.isFinite(x) ? x.toFixed(2) : x.toPrecision(2));
    for (const other of targets.filter((t) => t !== dTarget)) {
      for (const w of workloads) {
        const a = runs.get(`dirid ${w.name}`);
        const b = runs.get(`${other.name} ${w.name}`);
        if (!a || !b) continue;
        const perRound = a.map((r, i) => ratio(r.ops / b[i]!.ops)).join(' ');
        const cpuRounds = a.map((r, i) => ratio(b[i]!.cpuPerOp / r.cpuPerOp)).join(' ');
        console.log(
          `ratio dirid/${other.name} ${w.name}: throughput ${ratio(summary(a).ops / summary(b).ops)} (rounds: ${perRound}), p99 latency ${ratio(summary(a).p99 / summary(b).p99)}; ` +
            `CPU per operation ${other.name}/dirid ${ratio(summary(b).cpuPerOp / summary(a).cpuPerOp)} (rounds: ${cpuRounds})`,
        );
      }
    }
  }
} catch (e) {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  exitCode = 1;
} finally {
  await cleanup();
}
process.exit(exitCode);
