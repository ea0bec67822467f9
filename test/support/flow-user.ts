/**
 * The device-flow side of the benchmarks that start pending flows
 * (bench/idp-flows.ts, bench/idp-flow-memory.ts): the realm's limits on
 * pending flows lifted, an IdP reference `local`
 * to the given IdP and a user `flow` linked to it as `flow-sub`, made over
 * RPC; and a client of the realm's KDC armored with the host keytab's
 * ticket that starts a flow (an armored AS-REQ answered with the `idp`
 * challenge and its cookie) and answers one with its cookie.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { PaData } from '../../src/kerberos/asn1/primitives.js';
import { asReqBody, asWithKeys, type Credentials } from '../../src/kerberos/client.js';
import { armoredAsReq, processArmored } from '../../src/kerberos/fast-client.js';
import { PaType } from '../../src/kerberos/iana.js';
import { readKeytab } from '../../src/kerberos/keytab.js';
import type { RpcSession } from './rpc-client.js';

/** What the reference needs of the IdP (the stand-in's and the test IdP's shape). */
export interface FlowIdp {
  clientId: string;
  clientSecret: string;
  issuer: string;
  endpoints: { devAuth: string; token: string; keys: string };
}

/**
 * Lifts the limits on pending device flows in a realm's server.conf
 * (docs/device-flow.md, "Starting a login"): a bench starts thousands of
 * flows for the one user `flow`, armored with one host ticket, from one
 * address, where a realm allows 3, 20 and 20.
 */
export function liftFlowLimits(serverConf: string): void {
  let text = readFileSync(serverConf, 'utf8');
  for (const k of ['idp_pending_per_user', 'idp_pending_per_armor', 'idp_pending_per_address']) {
    const line = new RegExp(`^${k}\\s*=.*$`, 'm');
    if (!line.test(text)) throw new Error(`server.conf has no ${k} to set`);
    text = text.replace(line, `${k} = 1000000`);
  }
  writeFileSync(serverConf, text);
}

/** Adds the reference `local` and the user `flow` linked to it. */
export async function addFlowUser(rpc: RpcSession, idp: FlowIdp): Promise<void> {
  await rpc.call('idp_add', ['local'], { client_id: idp.clientId, secret: idp.clientSecret, issuer_url: idp.issuer, dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token, keys_uri: idp.endpoints.keys, scope: 'openid' });
  await rpc.call('user_add', ['flow'], { first: 'F', last: 'L' });
  await rpc.call('user_mod', ['flow'], { user_auth_type: ['idp'], idp: 'local', idp_user_id: 'flow-sub' });
}

export interface FlowClient {
  /** the host's TGT the requests are armored with */
  armor: Credentials;
  /** starts a flow: its cookie, or null when the KDC did not answer with the idp challenge */
  start(): Promise<PaData | null>;
  /** answers a flow with its cookie: true when the KDC answered with the idp challenge again (pending) */
  answer(cookie: PaData): Promise<boolean>;
}

/** A client of the user `flow` on the KDC `send` reaches, armored with a ticket got from `hostKeytab` (host/localhost). */
export async function flowClient(send: (m: Buffer) => Promise<Buffer>, realm: string, hostKeytab: string): Promise<FlowClient> {
  const hostKeys = readKeytab(readFileSync(hostKeytab)).map((k) => ({ etype: k.etype, value: k.key }));
  const armor = await asWithKeys(send, { nameType: 3, nameString: ['host', 'localhost'] }, realm, hostKeys);
  const name = { nameType: 1, nameString: ['flow'] };
  const exchange = async (padata: PaData[]) => {
    const body = asReqBody(name, realm, {});
    const req = armoredAsReq(armor, body, padata);
    const r = processArmored(await send(req.msg), req, body, req.armorKey);
    return r.kind === 'error' && r.padata.some((p) => p.type === PaType.REDHAT_IDP_OAUTH2) ? r.padata : null;
  };
  return {
    armor,
    start: async () => (await exchange([]))?.find((p) => p.type === PaType.FX_COOKIE) ?? null,
    answer: async (cookie) => (await exchange([{ type: PaType.REDHAT_IDP_OAUTH2, value: Buffer.alloc(0) }, cookie])) !== null,
  };
}
