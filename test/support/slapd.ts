/**
 * A throwaway OpenLDAP slapd (Debian's slapd 2.5) as bench/ldap.ts's
 * reference server: its own slapd.conf in a temporary directory (never
 * /etc/ldap), the core, cosine, inetorgperson and nis schemas Debian ships
 * and ldapns.schema's authorizedService (written here),
 * one mdb database loaded offline with slapadd (the fast path), TLS with
 * the certificate it is given, and slapd in the foreground (-d) as the
 * current user on 127.0.0.1, plain LDAP and LDAPS on free ports. Access:
 * the userPassword hash serves binds only (anonymous `auth`), everything
 * else is readable by any bound user and by no one else, as dirid serves
 * it (docs/ldap.md, "What can be read"). The sudo schema of sudoers.ldap(5)
 * (sudo's schema.OpenLDAP, which Debian does not ship as a file) is written
 * beside the configuration, for the sudoRole entries, with the equality and
 * substring indexes on sudoUser and sudoHost that sudo's documentation
 * recommends.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { once } from 'node:events';

export const SLAPD = '/usr/sbin/slapd';
export const SLAPADD = '/usr/sbin/slapadd';
const SCHEMAS = ['core', 'cosine', 'inetorgperson', 'nis'];
const MODULES = '/usr/lib/ldap';
/** argon2 parameters: 16 MiB, as dirid's scrypt (N 16384, r 8) uses; three passes, the module's default */
export const ARGON2_PARAMS = 'm=16384 t=3 p=1';

export interface SlapdOptions {
  /** an empty directory of its own */
  dir: string;
  suffix: string;
  /** PEM certificate chain and PKCS#8 key for TLS */
  certPem: string;
  keyPem: string;
  /** slapd's -d level: `stats` logs every connection and operation (to stats.log), `0` nothing */
  logLevel: string;
  /** load the argon2 password module (for {ARGON2} hashes) */
  argon2: boolean;
  /**
   * index_substr_if_maxlen: the longest initial/final piece a substring
   * index keys on (slapd's default 4); with uids that all start with `user`,
   * 4 makes every entry a candidate of (uid=user12*)
   */
  substrMaxLen?: number;
  /**
   * index_substr_if_minlen: the shortest piece a substring index answers
   * (slapd's default 2); SSSD's (sudoHost=+*) has a piece of one character,
   * so with the default it reads every sudoRole entry
   */
  substrMinLen?: number;
  /** run slapd (not slapadd) under `taskset -c CORE` */
  core?: number;
}

export interface Slapd {
  ldapPort: number;
  ldapsPort: number;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** `{SSHA}` or `{ARGON2}` hash of `password`, from slappasswd. */
export function slapdHash(password: string, scheme: 'ssha' | 'argon2'): string {
  const args = scheme === 'argon2' ? ['-o', `module-path=${MODULES}`, '-o', `module-load=argon2 ${ARGON2_PARAMS}`, '-h', '{ARGON2}'] : ['-h', '{SSHA}'];
  const r = spawnSync('/usr/sbin/slappasswd', [...args, '-s', password], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`slappasswd failed: ${r.stderr}`);
  return r.stdout.trim();
}

/**
 * The two attributes SSSD's LDAP access provider reads (ldap_access_order =
 * host, authorized_service) and their auxiliary classes, from PADL's
 * ldapns.schema, which Debian does not ship; cosine.schema has `host`.
 */
const LDAPNS_SCHEMA = `attributetype ( 1.3.6.1.4.1.5322.17.2.1 NAME 'authorizedService'
  DESC 'IANA GSS-API authorized service name'
  EQUALITY caseIgnoreMatch
  SYNTAX 1.3.6.1.4.1.1466.115.121.1.15{256} )
objectclass ( 1.3.6.1.4.1.5322.17.1.1 NAME 'authorizedServiceObject'
  DESC 'Auxiliary object class for adding authorizedService attribute'
  SUP top AUXILIARY MAY authorizedService )
objectclass ( 1.3.6.1.4.1.5322.17.1.2 NAME 'hostObject'
  DESC 'Auxiliary object class for adding host attribute'
  SUP top AUXILIARY MAY host )
`;

/** sudo's LDAP schema (sudoers.ldap(5); sudo's doc/schema.OpenLDAP), the sudoRole entries' attributes and class. */
export const SUDO_SCHEMA = [
  ...(
    [
      [1, 'sudoUser', 'User(s) who may  run sudo', true],
      [2, 'sudoHost', 'Host(s) who may run sudo', true],
      [3, 'sudoCommand', 'Command(s) to be executed by sudo', false],
      [4, 'sudoRunAs', 'User(s) impersonated by sudo (deprecated)', false],
      [5, 'sudoOption', 'Options(s) followed by sudo', false],
      [6, 'sudoRunAsUser', 'User(s) impersonated by sudo', false],
      [7, 'sudoRunAsGroup', 'Group(s) impersonated by sudo', false],
    ] as const
  ).map(([n, name, desc, substr]) => `attributetype ( 1.3.6.1.4.1.15953.9.1.${n} NAME '${name}' DESC '${desc}' EQUALITY caseExactIA5Match${substr ? ' SUBSTR caseExactIA5SubstringsMatch' : ''} SYNTAX 1.3.6.1.4.1.1466.115.121.1.26 )`),
  "attributetype ( 1.3.6.1.4.1.15953.9.1.8 NAME 'sudoNotBefore' DESC 'Start of time interval for which the entry is valid' EQUALITY generalizedTimeMatch ORDERING generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 )",
  "attributetype ( 1.3.6.1.4.1.15953.9.1.9 NAME 'sudoNotAfter' DESC 'End of time interval for which the entry is valid' EQUALITY generalizedTimeMatch ORDERING generalizedTimeOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 )",
  "attributetype ( 1.3.6.1.4.1.15953.9.1.10 NAME 'sudoOrder' DESC 'an integer to order the sudoRole entries' EQUALITY integerMatch ORDERING integerOrderingMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 )",
  "objectclass ( 1.3.6.1.4.1.15953.9.2.1 NAME 'sudoRole' SUP top STRUCTURAL DESC 'Sudoer Entries' MUST ( cn ) MAY ( sudoUser $ sudoHost $ sudoCommand $ sudoRunAs $ sudoRunAsUser $ sudoRunAsGroup $ sudoOption $ sudoOrder $ sudoNotBefore $ sudoNotAfter $ description ) )",
  '',
].join('\n');

/** The slapd.conf of the bench: schemas, TLS, one mdb database with the indexes and access rules. */
export function slapdConf(o: SlapdOptions): string {
  return [
    ...SCHEMAS.map((s) => `include /etc/ldap/schema/${s}.schema`),
    `include ${join(o.dir, 'sudo.schema')}`,
    `include ${join(o.dir, 'ldapns.schema')}`,
    `modulepath ${MODULES}`,
    'moduleload back_mdb',
    // memberOf kept on the members of posixGroup entries, as a site serving SSSD's access filters runs it
    'moduleload memberof',
    ...(o.argon2 ? [`moduleload argon2 ${ARGON2_PARAMS}`] : []),
    `pidfile ${join(o.dir, 'slapd.pid')}`,
    `argsfile ${join(o.dir, 'slapd.args')}`,
    // the log goes to stderr at the -d level (into stats.log), none to syslog
    'loglevel none',
    ...(o.substrMaxLen === undefined ? [] : [`index_substr_if_maxlen ${o.substrMaxLen}`]),
    ...(o.substrMinLen === undefined ? [] : [`index_substr_if_minlen ${o.substrMinLen}`]),
    `TLSCertificateFile ${join(o.dir, 'server.crt')}`,
    `TLSCertificateKeyFile ${join(o.dir, 'server.key')}`,
    '',
    'database mdb',
    `suffix "${o.suffix}"`,
    `rootdn "cn=manager,${o.suffix}"`,
    `directory ${join(o.dir, 'db')}`,
    // a map of 4 GiB: room for 100,000 users and their indexes many times over (only what is written takes space)
    'maxsize 4294967296',
    'index objectClass eq',
    'index uid,cn eq,sub',
    'index sn,givenName eq',
    'index member eq',
    'index uidNumber,gidNumber eq',
    'index sudoUser,sudoHost eq,sub',
    'access to attrs=userPassword by anonymous auth by * none',
    'access to * by users read by * none',
    'overlay memberof',
    'memberof-group-oc posixGroup',
    '',
  ].join('\n');
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freeTcpPort(): Promise<number> {
  const s = createServer();
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  s.close();
  await once(s, 'close');
  return port;
}

/** Writes the configuration and certificate, and loads `ldif` (chunks of LDIF text) with slapadd -q. */
export async function loadSlapd(o: SlapdOptions, ldif: Iterable<string>): Promise<void> {
  mkdirSync(join(o.dir, 'db'), { recursive: true });
  writeFileSync(join(o.dir, 'slapd.conf'), slapdConf(o));
  writeFileSync(join(o.dir, 'sudo.schema'), SUDO_SCHEMA);
  writeFileSync(join(o.dir, 'ldapns.schema'), LDAPNS_SCHEMA);
  writeFileSync(join(o.dir, 'server.crt'), o.certPem);
  writeFileSync(join(o.dir, 'server.key'), o.keyPem, { mode: 0o600 });
  const ldifPath = join(o.dir, 'data.ldif');
  const out = createWriteStream(ldifPath);
  for (const chunk of ldif) if (!out.write(chunk)) await once(out, 'drain');
  out.end();
  await once(out, 'close');
  const add = spawn(SLAPADD, ['-q', '-f', join(o.dir, 'slapd.conf'), '-l', ldifPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  add.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const [code] = (await once(add, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`slapadd failed (${code}): ${err.slice(-2000)}`);
}

/** Starts slapd on the loaded database; resolves once LDAPS accepts connections. */
export async function startSlapd(o: SlapdOptions): Promise<Slapd> {
  const ldapPort = await freeTcpPort();
  const ldapsPort = await freeTcpPort();
  const urls = `ldap://127.0.0.1:${ldapPort}/ ldaps://127.0.0.1:${ldapsPort}/`;
  const args = ['-f', join(o.dir, 'slapd.conf'), '-h', urls, '-d', o.logLevel];
  const log = openSync(join(o.dir, 'stats.log'), 'w');
  const child = o.core === undefined ? spawn(SLAPD, args, { stdio: ['ignore', log, log] }) : spawn('taskset', ['-c', String(o.core), SLAPD, ...args], { stdio: ['ignore', log, log] });
  let exited = false;
  child.once('exit', () => (exited = true));
  const stop = async () => {
    if (exited) return;
    const gone = once(child, 'exit');
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  };
  for (let i = 0; ; i++) {
    if (exited) throw new Error(`slapd exited at start (see ${join(o.dir, 'stats.log')})`);
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(ldapsPort, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (i > 200) {
      await stop();
      throw new Error('slapd did not start listening within 10 s');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { ldapPort, ldapsPort, process: child, stop };
}
