/**
 * The client's side of a host's enrolment (host_enroll, docs/access.md):
 * the request `dirid join` sends and the check of every field of its
 * answer. With the host's one-time password the call carries no other
 * credentials and goes to `/dirid/session/enroll`; without one it goes
 * with the caller's own (an administrator's ticket), as any command does.
 * The answer is the host's keytab (new keys, a higher key version) and what
 * it needs to configure itself: realm, domain, base DN, the realm's servers
 * with their ports, and the realm CA's certificate.
 */
import type { RpcResponse, WireValue } from '../rpc/codec/types.js';
import type { ClientConfig } from './config.js';
import { CliError, serverError } from './errors.js';
import { connect, type Authenticator } from './transport.js';
import type { SrvLookup } from './discovery.js';

export interface EnrolmentServer {
  hostname: string;
  kdcPort: number;
  kpasswdPort: number;
  httpsPort: number;
  ldapPort: number;
  ldapsPort: number;
}

/** A host's enrolment, as the server answered it. */
export interface Enrolment {
  fqdn: string;
  /** host/FQDN@REALM */
  principal: string;
  kvno: number;
  /** an MIT keytab holding the host's new keys */
  keytab: Buffer;
  realm: string;
  domain: string;
  baseDn: string;
  /** the realm's servers, the one that answered first */
  servers: EnrolmentServer[];
  /** the realm CA's certificate (PEM) */
  caPem: string;
}

export interface EnrolOptions {
  /** the host's fully qualified name */
  fqdn: string;
  /** the one-time password; without it the caller's own credentials */
  password?: string;
  verbose?: boolean;
  server?: string;
  log?: (line: string) => void;
  /** credentials when there is no password (default: the Kerberos ticket cache) */
  authenticator?: Authenticator;
  srvLookup?: SrvLookup;
}

/** Enrols the host `o.fqdn`: its new keytab and the realm's particulars, every field checked. */
export async function enrollHost(conf: ClientConfig, o: EnrolOptions): Promise<Enrolment> {
  const options: Record<string, WireValue> = o.password !== undefined ? { password: o.password } : {};
  const { response } = await connect(
    conf,
    {
      verbose: o.verbose ?? false,
      enrolment: o.password !== undefined,
      ...(o.server !== undefined ? { server: o.server } : {}),
      ...(o.log ? { log: o.log } : {}),
      ...(o.authenticator ? { authenticator: o.authenticator } : {}),
      ...(o.srvLookup ? { srvLookup: o.srvLookup } : {}),
    },
    { method: 'host_enroll', args: [o.fqdn], options },
  );
  return processEnrolment(response, o.fqdn);
}

function bad(what: string): CliError {
  return new CliError(`invalid enrolment answer from the server: ${what}`);
}

function text(o: Record<string, unknown>, key: string): string {
  const v = o[key];
  if (typeof v !== 'string' || v === '') throw bad(`no ${key}`);
  return v;
}

function port(o: Record<string, unknown>, key: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 65535) throw bad(`${key} is not a port`);
  return v;
}

/** Checks every field of a host_enroll answer; a server's error becomes the client's. */
export function processEnrolment(response: RpcResponse, fqdn: string): Enrolment {
  if (response.error) throw serverError(response.error);
  const outer = response.result as { result?: unknown } | null;
  const r = outer?.result;
  if (!r || typeof r !== 'object' || Array.isArray(r)) throw bad('no result');
  const o = r as Record<string, unknown>;
  const answered = text(o, 'fqdn');
  if (answered !== fqdn.toLowerCase()) throw bad(`it names the host ${answered}`);
  const realm = text(o, 'realm');
  const principal = text(o, 'principal');
  if (principal !== `host/${answered}@${realm}`) throw bad(`the principal ${principal} is not host/${answered}@${realm}`);
  const kvno = o.kvno;
  if (typeof kvno !== 'number' || !Number.isInteger(kvno) || kvno < 1) throw bad('no key version');
  if (!Buffer.isBuffer(o.keytab) || o.keytab.length < 2 || o.keytab[0] !== 5 || o.keytab[1] !== 2) throw bad('no keytab');
  const caPem = text(o, 'ca_certificate');
  if (!/^-----BEGIN CERTIFICATE-----\r?\n[\s\S]+-----END CERTIFICATE-----\s*$/.test(caPem)) throw bad('the CA certificate is not a PEM certificate');
  if (!Array.isArray(o.servers) || o.servers.length === 0) throw bad('no servers');
  const servers = o.servers.map((s): EnrolmentServer => {
    if (!s || typeof s !== 'object') throw bad('a server is not an object');
    const x = s as Record<string, unknown>;
    return {
      hostname: text(x, 'hostname'),
      kdcPort: port(x, 'kdc_port'),
      kpasswdPort: port(x, 'kpasswd_port'),
      httpsPort: port(x, 'https_port'),
      ldapPort: port(x, 'ldap_port'),
      ldapsPort: port(x, 'ldaps_port'),
    };
  });
  return { fqdn: answered, principal, kvno, keytab: o.keytab, realm, domain: text(o, 'domain'), baseDn: text(o, 'basedn'), servers, caPem };
}
