/**
 * How `dirid join` gets the host into the realm: the host's entry (made
 * when missing) and its keys. `adminEnrolment` does it with an
 * administrator's credentials, through the API like any `dirid` command:
 * a Kerberos ticket from the credential cache (Negotiate, mutually
 * authenticated), or a principal's password (a password login's session
 * cookie). Another way in (a one-time enrolment password) implements the
 * same interface.
 */
import { CLIENT_VERSION, decodeReply, kerberosAuthenticator, post, type HttpReply } from './transport.js';
import { encodeJsonRequest } from '../rpc/codec/json.js';
import type { RpcResponse, WireValue } from '../rpc/codec/types.js';
import { CliError, serverError } from './errors.js';
import { errorCodes } from '../contract/errors.js';

export interface HostEnrolment {
  /** who speaks for the host (for messages) */
  readonly who: string;
  /** makes sure the host entry exists; says whether it was added */
  ensureHost(fqdn: string): Promise<'added' | 'existing'>;
  /** the host principal's new keys, as a keytab file's bytes */
  hostKeytab(fqdn: string): Promise<Buffer>;
}

export type AdminCredentials = { kind: 'kerberos' } | { kind: 'password'; principal: string; password: string };

interface Api {
  call(method: string, args: WireValue[], options: Record<string, WireValue>): Promise<RpcResponse>;
}

function headers(origin: string): Record<string, string> {
  return { Accept: 'application/json', Referer: `${origin}/dirid/json`, 'User-Agent': `dirid/${CLIENT_VERSION}` };
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
      const r = await post(new URL('/dirid/session/json', origin), ca, encodeJsonRequest({ method, args, options, id: 0 }), { ...headers(origin), 'Content-Type': 'application/json', Cookie: cookie });
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
      const r = await post(new URL('/dirid/json', url.origin), ca, encodeJsonRequest({ method, args, options, id: 0 }), {
        ...headers(url.origin),
        'Content-Type': 'application/json',
        Authorization: `Negotiate ${token}`,
      });
      if (r.status === 401) throw refused(r, method);
      auth.verifyReply?.(host, r.headers['www-authenticate'] as string | undefined);
      return decodeReply(r);
    },
  };
}

/** Host entry and keys through the API, as an administrator (or anyone allowed host-add and keytab-get). */
export async function adminEnrolment(apiUrl: string, ca: string, realm: string, creds: AdminCredentials): Promise<HostEnrolment> {
  const url = new URL(apiUrl);
  const api = creds.kind === 'password' ? await passwordApi(url, ca, creds.principal, creds.password) : kerberosApi(url, ca, realm);
  const who = creds.kind === 'password' ? creds.principal : 'the Kerberos ticket in the credential cache';
  return {
    who,
    async ensureHost(fqdn) {
      const shown = await api.call('host_show', [fqdn], {});
      if (!shown.error) return 'existing';
      if (shown.error.code !== errorCodes.NotFound.code) throw serverError(shown.error);
      const added = await api.call('host_add', [fqdn], {});
      if (added.error) throw serverError(added.error);
      return 'added';
    },
    async hostKeytab(fqdn) {
      const r = await api.call('keytab_get', [`host/${fqdn}`], {});
      if (r.error) throw serverError(r.error);
      const kt = ((r.result as { result?: { keytab?: unknown } } | null)?.result)?.keytab;
      if (!Buffer.isBuffer(kt)) throw new CliError('the server sent no keytab');
      return kt;
    },
  };
}
