/**
 * A SASL GSSAPI bind (RFC 4752) for bench/ldap.ts's `access` workload, as a
 * host's SSSD binds to the LDAP service (its keytab, `ldap_sasl_mech =
 * GSSAPI`): a TGT from the host's keys, a ticket for the LDAP service, the
 * AP-REQ with mutual authentication, the AP-REP checked, then the server's
 * security-layer offer unwrapped and "no layer" chosen (the connection is
 * TLS already). Built from the project's Kerberos pieces (src/kerberos), as
 * test/kerberos/sasl-gssapi.test.ts builds its initiator.
 */
import { makeApReq, verifyApRep } from '../../src/kerberos/ap-exchange.js';
import { decodeKrb5Token, encodeGssChecksum, encodeKrb5Token, GssFlag, TokId } from '../../src/kerberos/asn1/gss.js';
import { asWithKeys, tgsExchange } from '../../src/kerberos/client.js';
import { profile } from '../../src/kerberos/crypto/index.js';
import { initiatorContext } from '../../src/kerberos/gss-context.js';
import { NameType } from '../../src/kerberos/iana.js';
import { readKeytab } from '../../src/kerberos/keytab.js';
import { sendTcp, type KdcAddress } from '../../src/kerberos/transport.js';
import { ResultCode } from '../../src/ldap/codes.js';
import type { LdapClient } from './ldap-load-client.js';

export interface GssapiIdentity {
  kdc: KdcAddress;
  realm: string;
  /** the keytab's bytes and the principal's components in it (`host`, `localhost`) */
  keytab: Buffer;
  principal: readonly string[];
  /** the LDAP service's principal components (`ldap`, `localhost`) */
  service: readonly string[];
}

/** Binds `c` as the keytab's principal; throws unless the server accepts. */
export async function gssapiBind(c: LdapClient, id: GssapiIdentity): Promise<void> {
  const send = (m: Buffer) => sendTcp(id.kdc, m);
  const keys = readKeytab(id.keytab)
    .filter((e) => e.components.join('/') === id.principal.join('/'))
    .map((e) => ({ etype: e.etype, value: e.key }));
  const tgt = await asWithKeys(send, { nameType: NameType.SRV_HST, nameString: [...id.principal] }, id.realm, keys);
  const st = await tgsExchange(send, tgt, { nameType: NameType.SRV_HST, nameString: [...id.service] });
  const subkey = profile(st.sessionKey.etype).randomKey();
  const checksum = { type: 0x8003, value: encodeGssChecksum({ bindings: Buffer.alloc(16), flags: GssFlag.MUTUAL | GssFlag.SEQUENCE | GssFlag.INTEG | GssFlag.CONF }) };
  const { apReq, ctime, cusec, seqNumber } = makeApReq({ ticket: st.ticket, sessionKey: st.sessionKey, client: st.client, crealm: st.crealm, checksum, mutual: true, subkey });
  const step = async (token: Buffer, want: number) => {
    const o = await c.saslBind('GSSAPI', token);
    if (o.resultCode !== want) throw new Error(`GSSAPI bind: result ${o.resultCode} ${o.diagnosticMessage}`);
    return o.serverSaslCreds ?? Buffer.alloc(0);
  };
  const apRep = decodeKrb5Token(await step(encodeKrb5Token(TokId.AP_REQ, apReq), ResultCode.saslBindInProgress));
  const ctx = initiatorContext({ initiatorKey: subkey, authenticatorSeq: seqNumber, apRep: verifyApRep(apRep.message, st.sessionKey, ctime, cusec) });
  ctx.unwrap(await step(Buffer.alloc(0), ResultCode.saslBindInProgress));
  // no security layer (1), no buffer size, no authorization identity
  await step(ctx.wrap(Buffer.from([1, 0, 0, 0]), { conf: false }), ResultCode.success);
}
