/**
 * How `dirid join` gets the host into the realm: `host_enroll` (the host's
 * new keys as a keytab, and the realm's domain, base DN, servers and CA),
 * checked field by field by enroll.ts. Either with the host's one-time
 * password (`--otp`: an administrator ran `dirid host-add FQDN --random`),
 * sent to `/dirid/session/enroll` with no other credentials, or with an
 * administrator's, through the API like any `dirid` command: a Kerberos
 * ticket from the credential cache (Negotiate, the server's answer
 * authenticated) or a principal's password (a password login's session
 * cookie); an administrator's enrolment adds a host that is missing.
 */
import { CLIENT_VERSION, decodeReply, kerberosAuthenticator, post, type HttpReply } from './transport.js';
import { encodeJsonRequest } from '../rpc/codec/json.js';
import type { RpcResponse, WireValue } from '../rpc/codec/types.js';
import { CliError, serverError } from './errors.js';
import { processEnrolment, type Enrolment } from './enroll.js';

export type JoinCredentials = { kind: 'otp'; password: string } | { kind: 'kerberos' } | { kind: 'password'; principal: string; password: string };

interface Api {
  call(method: string, args: WireValue[], options: Record<string, WireValue>): Promise<RpcResponse>;
}

function headers(origin: string): Record<string, string> {
  return { Accept: 'application/json', 'Content-Type': 'application/json', Referer: `${origin}/dirid/json`, 'User-Agent': `dirid/${CLIENT_VERSION}` };
}

function refused(r: HttpReply, what: string): CliError {
  try {
    const e = decodeReply({ ...r, status: 200 }).error;
    if (e) return serverError(e);
  } catch {
    // not a JSON-RPC answer
  }
  return new CliError(`${what} was refused (HTTP ${r.status})`);
}

/** Calls with no credentials to `/dirid/session/enroll`, where the one-time password authenticates. */
function enrolmentApi(url: URL, ca: string): Api {
  return {
    async call(method, args, options) {
      const r = await post(new URL('/dirid/session/enroll', url.origin), ca, encodeJsonRequest({ method, args, options, id: 0 }), headers(url.origin));
      if (r.status === 401) throw refused(r, 'the enrolment');
      return decodeReply(r);
    },
  };
}

async function passwordApi(url: URL, ca: string, principal: string, password: string): Promise<Api> {
  const origin = url.origin;
  const login = await post(new URL('/dirid/session/login_password', origin), ca, new URLSearchParams({ user: principal, password }).toString(), {
    ...headers(origin),
    'Content-Type': 'application/x-www-form-urlencoded',
  });
  const set = login.headers['set-cookie'];
  const cookie = (Array.isArray(set) ? set[0] : set)?.split(';')[0];
  if (login.status !== 200 || !cookie) throw refused(login, `the password login of ${principal}`);
  return {
    async call(method, args, options) {
      const r = await post(new URL('/dirid/session/json', origin), ca, encodeJsonRequest({ method, args, options, id: 0 }), { ...headers(origin), Cookie: cookie });
      if (r.status === 401) throw refused(r, method);
      return decodeReply(r);
    },
  };
}

function kerberosApi(url: URL, ca: string, realm: string): Api {
  const auth = kerberosAuthenticator(realm);
  const host = url.hostname;
  return {
    async call(method, args, options) {
      const token = await auth.negotiateToken(host);
      const r = await post(new URL('/dirid/json', url.origin), ca, encodeJsonRequest({ method, args, options, id: 0 }), { ...headers(url.origin), Authorization: `Negotiate ${token}` });
      if (r.status === 401) throw refused(r, method);
      auth.verifyReply?.(host, r.headers['www-authenticate'] as string | undefined);
      return decodeReply(r);
    },
  };
}

/** Who the enrolment speaks as, for messages. */
export function credentialsName(c: JoinCredentials): string {
  return c.kind === 'otp' ? "the host's one-time password" : c.kind === 'password' ? c.principal : 'the Kerberos ticket of KRB5CCNAME';
}

/**
 * Enrols `fqdn` at the server of `apiUrl` (trusting `ca` only): its new
 * keytab and the realm's particulars, every field checked.
 */
export async function enrolHost(apiUrl: string, ca: string, realm: string, fqdn: string, creds: JoinCredentials): Promise<Enrolment> {
  const url = new URL(apiUrl);
  const api = creds.kind === 'otp' ? enrolmentApi(url, ca) : creds.kind === 'password' ? await passwordApi(url, ca, creds.principal, creds.password) : kerberosApi(url, ca, realm);
  const response = await api.call('host_enroll', [fqdn], creds.kind === 'otp' ? { password: creds.password } : {});
  return processEnrolment(response, fqdn);
}
