/**
 * The client half of HTTP Negotiate: the user's TGT from the MIT
 * credential cache, a service ticket for HTTP/<server host> (from the cache,
 * else from the KDC, then stored back like MIT does), and a SPNEGO
 * NegTokenInit with a mutual-authentication AP-REQ.
 */
import { loadCcacheFile, resolveCcacheName, saveCcacheFile, CcacheError, type Ccache } from '../kerberos/ccache.js';
import { findCredentials } from '../kerberos/ccache-credentials.js';
import { tgsPrincipal } from '../kerberos/principal.js';
import { tgsExchange, KrbClientError } from '../kerberos/client.js';
import { kdcAddresses, loadKrb5Conf } from '../kerberos/krb5-conf.js';
import { sendToKdc, KdcUnreachableError } from '../kerberos/transport.js';
import { makeApReq, verifyApRep } from '../kerberos/ap-exchange.js';
import { decodeKrb5Token, encodeGssChecksum, encodeKrb5Token, GssFlag, Oid, TokId } from '../kerberos/asn1/gss.js';
import { decodeNegTokenResp, encodeNegTokenInit } from '../kerberos/asn1/spnego.js';
import { credentialsToCcache } from './kinit.js';
import { CliError } from './errors.js';

import { NOT_AUTHENTICATED } from './principal.js';

export interface NegotiateContext {
  token: string;
  principal: string;
  /** verifies the server's mutual-authentication answer */
  verify(header: string | undefined): void;
}

export async function negotiateFor(host: string, realm: string): Promise<NegotiateContext> {
  let path: string;
  let cc: Ccache;
  try {
    path = resolveCcacheName(process.env.KRB5CCNAME);
    cc = loadCcacheFile(path);
  } catch (e) {
    if (e instanceof CcacheError) throw new CliError(NOT_AUTHENTICATED);
    throw e;
  }
  const principal = `${cc.principal.components.join('/')}@${cc.principal.realm}`;
  const service = `HTTP/${host}@${realm}`;
  let svc = findCredentials(cc, service, 30);
  if (!svc) {
    const tgt = findCredentials(cc, tgsPrincipal(realm), 30);
    if (!tgt) throw new CliError(NOT_AUTHENTICATED);
    const kdcs = kdcAddresses(loadKrb5Conf(), realm);
    if (kdcs.length === 0) throw new CliError(`Cannot contact any KDC for realm '${realm}'`);
    try {
      svc = await tgsExchange((m) => sendToKdc(realm, kdcs, m), tgt, { nameType: 2, nameString: ['HTTP', host] });
    } catch (e) {
      if (e instanceof KdcUnreachableError) throw new CliError(`Cannot contact any KDC for realm '${realm}'`);
      if (e instanceof KrbClientError) throw new CliError(`${NOT_AUTHENTICATED} (${e.message})`);
      throw e;
    }
    const added = credentialsToCcache(svc).credentials;
    saveCcacheFile(path, { ...cc, credentials: [...cc.credentials, ...added] });
  }
  const { apReq, ctime, cusec } = makeApReq({
    ticket: svc.ticket,
    sessionKey: svc.sessionKey,
    client: svc.client,
    crealm: svc.crealm,
    checksum: { type: 0x8003, value: encodeGssChecksum({ bindings: Buffer.alloc(16), flags: GssFlag.MUTUAL | GssFlag.INTEG | GssFlag.SEQUENCE }) },
    mutual: true,
  });
  const token = encodeNegTokenInit({ mechTypes: [Oid.KRB5], mechToken: encodeKrb5Token(TokId.AP_REQ, apReq) }).toString('base64');
  const sessionKey = svc.sessionKey;
  return {
    token,
    principal,
    verify(header) {
      const m = header ? /^Negotiate\s+([A-Za-z0-9+/=]+)$/.exec(header.trim()) : null;
      if (!m) throw new CliError('the server did not authenticate itself (no mutual authentication token)');
      const resp = decodeNegTokenResp(Buffer.from(m[1]!, 'base64'));
      if (!resp.responseToken) throw new CliError('the server did not authenticate itself');
      verifyApRep(decodeKrb5Token(resp.responseToken).message, sessionKey, ctime, cusec);
    },
  };
}

