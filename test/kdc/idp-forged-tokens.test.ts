/**
 * Forged and misfit ID tokens at the device-flow login (issue 16 item 3):
 * the test IdP approves the device as usual, then its token endpoint's
 * answer is replaced, case by case, by one carrying a token the test made
 * with jose — `alg: none`, HMAC keyed with the IdP's public key, keys the
 * JWKS does not hold or that another IdP holds, key-carrying headers (jwk,
 * jku, x5u), a symmetric key published in the JWKS, bad times, issuers,
 * audiences and identifier claims — and a replayed device code. Each login
 * runs through the tests' own Kerberos client (src/kerberos, armored with
 * the host key, as dirid kinit does): the answer must be a refusal, never a
 * TGT and never "pending", and the KDC's log line must name the reason. A
 * control case re-signs the genuine token and gets its TGT, so each refusal
 * is the forgery's doing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicKey, randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJwt, exportJWK, generateKeyPair, importJWK, SignJWT, type JWK, type JWTPayload, type JWTHeaderParameters } from 'jose';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, idpReference, type TestIdp, type TokenAnswer } from '../support/oidc-idp.js';
import { RpcSession } from '../support/rpc-client.js';
import { createCa } from '../../src/server/pki.js';
import { asReqBody, asWithKeys, type Credentials } from '../../src/kerberos/client.js';
import { armoredAsReq, parseIdpChallenge, processArmored, type ArmoredReply } from '../../src/kerberos/fast-client.js';
import { readKeytab } from '../../src/kerberos/keytab.js';
import { kdcAddresses, parseKrb5Conf } from '../../src/kerberos/krb5-conf.js';
import { sendToKdc } from '../../src/kerberos/transport.js';
import { ErrorCode, PaType } from '../../src/kerberos/iana.js';
import type { PaData } from '../../src/kerberos/asn1/primitives.js';

const REALM = 'EXAMPLE.TEST';
const ACCOUNT = 'alice-sub';
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** What a case gets to forge with: the genuine token's claims and header, and keys. */
interface Forge {
  claims: JWTPayload;
  header: JWTHeaderParameters;
  /** signs `claims` with the IdP's own key (its kid unless the header names another) */
  signed(claims: JWTPayload, header?: Partial<JWTHeaderParameters>): Promise<string>;
}

interface Case {
  name: string;
  /** the user who logs in (linked to the reference whose identifier claim the case is about) */
  user?: string;
  forge(f: Forge): Promise<string>;
  /** what the KDC's log line must say, inside preauth="idp: ..." */
  reason: RegExp;
}

describe('forged ID tokens at the device-flow login', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let other: TestIdp;
  let caFile: string;
  let armor: Credentials;
  let send: (m: Buffer) => Promise<Buffer>;
  /** an attacker's RSA key pair (a JWK with kid) */
  let attacker: { priv: JWK; pub: JWK };
  const now = () => Math.floor(Date.now() / 1000);

  before(async () => {
    const ca = await createCa('Forged tokens CA');
    idp = await startTestIdp({ accounts: [ACCOUNT], ca, pollInterval: 1 });
    // only its keys are used: a key that signs for another issuer
    other = await startTestIdp({ accounts: [ACCOUNT], ca, keyIdPrefix: 'other-idp-key' });
    caFile = join(process.env.TMPDIR ?? '/tmp', `idp-forged-ca-${process.pid}.pem`);
    writeFileSync(caFile, ca.certPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('idp_add', ['forged'], idpReference(idp, 'openid'));
    await admin.call('idp_add', ['forged-emp'], { ...idpReference(idp, 'openid'), idp_user_id: 'employee_id' });
    await admin.call('user_add', ['alice'], { first: 'Alice', last: 'L' });
    await admin.call('user_mod', ['alice'], { user_auth_type: ['idp'], idp: 'forged', idp_user_id: ACCOUNT });
    // no issuer: the token answer is read as plain OAuth and the ID token is judged only when the identity is read
    const { issuer_url: _issuer, ...noIssuer } = idpReference(idp, 'openid');
    await admin.call('idp_add', ['forged-noiss'], noIssuer);
    await admin.call('user_add', ['nora'], { first: 'Nora', last: 'N' });
    await admin.call('user_mod', ['nora'], { user_auth_type: ['idp'], idp: 'forged-noiss', idp_user_id: ACCOUNT });
    await admin.call('user_add', ['erin'], { first: 'Erin', last: 'E' });
    await admin.call('user_mod', ['erin'], { user_auth_type: ['idp'], idp: 'forged-emp', idp_user_id: '12345' });

    const data = join(realm.dataDir, 'realm');
    const conf = parseKrb5Conf(readFileSync(join(data, 'krb5.conf'), 'utf8'));
    const kdcs = kdcAddresses(conf, REALM);
    send = (m) => sendToKdc(REALM, kdcs, m);
    const keys = readKeytab(readFileSync(join(data, 'host.keytab'))).filter((e) => e.realm === REALM);
    const host = keys[0]!;
    armor = await asWithKeys(send, { nameType: host.nameType, nameString: host.components }, REALM, keys.filter((k) => k.components.join('/') === host.components.join('/')).map((k) => ({ etype: k.etype, value: k.key })));

    const pair = await generateKeyPair('RS256', { extractable: true });
    attacker = { priv: { ...(await exportJWK(pair.privateKey)), kid: 'attacker-key', alg: 'RS256' }, pub: { ...(await exportJWK(pair.publicKey)), kid: 'attacker-key', alg: 'RS256' } };
  });
  after(async () => {
    idp?.rewriteTokenAnswers();
    await realm?.stop();
    await idp?.stop();
    await other?.stop();
    if (caFile) rmSync(caFile, { force: true });
  });

  const sign = async (claims: JWTPayload, header: JWTHeaderParameters, key: JWK | Uint8Array): Promise<string> =>
    new SignJWT(claims).setProtectedHeader(header).sign(key instanceof Uint8Array ? key : await importJWK(key, header.alg));

  /** The IdP's signing key as an attacker sees it: the public half, PEM text. */
  const publicPem = async (): Promise<string> => {
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = idp.signingJwk();
    return createPublicKey({ key: pub as never, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
  };

  /** Sends one AS-REQ for `user`; answer: an idp answer with `cookie`, or the first request. */
  async function asRequest(user: string, cookie?: PaData): Promise<ArmoredReply> {
    const b = asReqBody({ nameType: 1, nameString: [user] }, REALM, {});
    const req = armoredAsReq(armor, b, cookie ? [{ type: PaType.REDHAT_IDP_OAUTH2, value: Buffer.alloc(0) }, cookie] : []);
    return processArmored(await send(req.msg), req, b, req.armorKey);
  }

  /** A device-flow login of `user`, approved at the IdP; the KDC's answer to it, the cookie it answered with and the log lines. */
  async function login(user: string): Promise<{ reply: ArmoredReply; cookie: PaData; log: string[] }> {
    const start = realm.log.length;
    const first = await asRequest(user);
    assert.equal(first.kind, 'error');
    if (first.kind !== 'error') throw new Error('unreachable');
    assert.equal(first.error.errorCode, ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    const challenge = first.padata.find((p) => p.type === PaType.REDHAT_IDP_OAUTH2);
    const cookie = first.padata.find((p) => p.type === PaType.FX_COOKIE);
    assert.ok(challenge && cookie, 'a device-flow challenge with a cookie');
    await idp.approveDevice(parseIdpChallenge(challenge.value).user_code, ACCOUNT);
    const reply = await asRequest(user, cookie);
    return { reply, cookie, log: realm.log.slice(start).filter((x) => x.includes(`client=${user}@${REALM}`)) };
  }

  /** Makes the token endpoint answer its successful exchanges with the token `forge` makes from the genuine one. */
  function forging(forge: Case['forge']): void {
    idp.rewriteTokenAnswers(async (a: TokenAnswer) => {
      if (a.status !== 200 || typeof a.body.id_token !== 'string') return a;
      const token = a.body.id_token;
      const header = JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as JWTHeaderParameters;
      const claims = decodeJwt(token);
      const signed = (c: JWTPayload, h: Partial<JWTHeaderParameters> = {}) => sign(c, { ...header, ...h } as JWTHeaderParameters, idp.signingJwk());
      return { status: 200, body: { ...a.body, id_token: await forge({ claims, header, signed }) } };
    });
  }

  function assertRefused(r: { reply: ArmoredReply; log: string[] }, reason: RegExp): void {
    const seen = r.log.join('\n');
    assert.equal(r.reply.kind, 'error', `a TGT was issued:\n${seen}`);
    if (r.reply.kind !== 'error') return;
    assert.equal(r.reply.error.errorCode, ErrorCode.KDC_ERR_PREAUTH_FAILED, `KDC error ${r.reply.error.errorCode} (${r.reply.error.eText}):\n${seen}`);
    assert.ok(!r.log.some((x) => /outcome=ISSUE/.test(x)), seen);
    const refusal = r.log.find((x) => /outcome=KDC_ERR_PREAUTH_FAILED/.test(x));
    assert.ok(refusal, `no refusal in the KDC log:\n${seen}`);
    const preauth = (/preauth="idp: ((?:[^"\\]|\\.)*)"/.exec(refusal)?.[1] ?? '').replace(/\\(.)/g, '$1');
    if (process.env.SHOW_REASONS) console.log(`REASON ${preauth}`);
    assert.match(preauth, reason, refusal);
  }

  it('control: the genuine token, re-signed by the test with the IdP key, gets a TGT', async () => {
    forging(({ claims, signed }) => signed(claims));
    const r = await login('alice');
    assert.equal(r.reply.kind, 'rep', r.log.join('\n'));
    assert.ok(r.log.some((x) => /outcome=ISSUE .*preauth="idp: forged identified \\"alice-sub\\""/.test(x)), r.log.join('\n'));
  });

  const CASES: Case[] = [
    {
      name: 'alg none',
      forge: async ({ claims, header }) => `${b64({ ...header, alg: 'none' })}.${b64(claims)}.`,
      reason: /signed with "none", which is not an accepted signing algorithm/,
    },
    {
      name: 'HS256 keyed with the IdP public key (key confusion)',
      forge: async ({ claims, header }) => sign(claims, { ...header, alg: 'HS256' }, Buffer.from(await publicPem())),
      reason: /signed with "HS256", which is not an accepted/,
    },
    {
      name: 'a kid absent from the JWKS',
      forge: ({ claims, signed }) => signed(claims, { kid: 'no-such-kid' }),
      reason: /unknown kid "no-such-kid"/,
    },
    {
      name: "a kid from another IdP's JWKS, signed with that IdP's key",
      forge: ({ claims, header }) => sign(claims, { ...header, kid: other.signingJwk().kid! }, other.signingJwk()),
      reason: /unknown kid "other-idp-key-1"/,
    },
    {
      name: "the IdP's own kid, signed with another IdP's key",
      forge: ({ claims, header }) => sign(claims, header, other.signingJwk()),
      reason: /signature verification failed/,
    },
    {
      name: 'an embedded jwk header naming the signing key',
      forge: ({ claims }) => sign(claims, { alg: 'RS256', typ: 'JWT', jwk: attacker.pub }, attacker.priv),
      reason: /header parameter "jwk" refused/,
    },
    {
      name: 'a jku header pointing at another key set',
      forge: ({ claims }) => sign(claims, { alg: 'RS256', typ: 'JWT', kid: 'attacker-key', jku: 'https://attacker.example/jwks' }, attacker.priv),
      reason: /header parameter "jku" refused/,
    },
    {
      name: 'an x5u header pointing at another certificate',
      forge: ({ claims }) => sign(claims, { alg: 'RS256', typ: 'JWT', kid: 'attacker-key', x5u: 'https://attacker.example/cert.pem' }, attacker.priv),
      reason: /header parameter "x5u" refused/,
    },
    {
      name: 'a jku header on a token signed with the IdP key',
      forge: ({ claims, signed }) => signed(claims, { jku: 'https://attacker.example/jwks' }),
      reason: /header parameter "jku" refused/,
    },
    {
      name: 'a symmetric key (kty oct) published in the JWKS and a token HS256-signed with it',
      forge: ({ claims, header }) => sign(claims, { ...header, alg: 'HS256', kid: 'sym-key' }, symmetricKey),
      reason: /signed with "HS256", which is not an accepted/,
    },
    { name: 'expired (exp an hour ago)', forge: ({ claims, signed }) => signed({ ...claims, iat: now() - 7200, exp: now() - 3600 }), reason: /ID token rejected: expired \(exp 36\d\d s ago\)/ },
    { name: 'not yet valid (nbf in an hour)', forge: ({ claims, signed }) => signed({ ...claims, nbf: now() + 3600 }), reason: /ID token rejected: not yet valid \(nbf 3\d\d\d s ahead\)/ },
    { name: 'iat a day in the future', forge: ({ claims, signed }) => signed({ ...claims, iat: now() + 86400, exp: now() + 90000 }), reason: /ID token rejected: issued in the future \(iat 86\d\d\d s ahead\)/ },
    { name: 'a wrong iss', forge: ({ claims, signed }) => signed({ ...claims, iss: 'https://evil.example' }), reason: /Issuer does not match: ID token from https:\/\/evil\.example, expected https:\/\/localhost:\d+/ },
    { name: 'a wrong aud', forge: ({ claims, signed }) => signed({ ...claims, aud: 'someone-else' }), reason: /aud "someone-else" does not name our client id/ },
    {
      name: 'an extra aud without azp',
      forge: ({ claims, signed }) => signed({ ...claims, aud: [String(claims.aud), 'narrow-scope'], azp: undefined }),
      reason: /several audiences and no azp claim/,
    },
    {
      name: 'an extra aud with azp naming the other client',
      forge: ({ claims, signed }) => signed({ ...claims, aud: [String(claims.aud), 'narrow-scope'], azp: 'narrow-scope' }),
      reason: /azp "narrow-scope" is not our client id/,
    },
    {
      name: 'a token for another client (aud and azp the other client id)',
      forge: ({ claims, signed }) => signed({ ...claims, aud: 'narrow-scope', azp: 'narrow-scope' }),
      reason: /aud "narrow-scope" does not name our client id/,
    },
    // nora's reference names no issuer
    {
      name: 'an extra aud without azp, through a reference without issuer',
      user: 'nora',
      forge: ({ claims, signed }) => signed({ ...claims, aud: [String(claims.aud), 'narrow-scope'], azp: undefined }),
      reason: /several audiences and no azp claim/,
    },
    { name: 'alg none, through a reference without issuer', user: 'nora', forge: async ({ claims, header }) => `${b64({ ...header, alg: 'none' })}.${b64(claims)}.`, reason: /signed with "none", which is not an accepted signing algorithm/ },
    { name: 'expired, through a reference without issuer', user: 'nora', forge: ({ claims, signed }) => signed({ ...claims, iat: now() - 7200, exp: now() - 3600 }), reason: /ID token rejected: expired/ },
    { name: 'a jku header, through a reference without issuer', user: 'nora', forge: ({ claims, signed }) => signed(claims, { jku: 'https://attacker.example/jwks' }), reason: /header parameter "jku" refused/ },
    { name: 'no sub (the identifier claim)', forge: ({ claims, signed }) => signed({ ...claims, sub: undefined }), reason: /no sub claim/ },
    { name: 'an empty sub', forge: ({ claims, signed }) => signed({ ...claims, sub: '' }), reason: /the sub claim is empty/ },
    { name: 'a numeric sub', forge: ({ claims, signed }) => signed({ ...claims, sub: 12345 as never }), reason: /the sub claim is not a string \(a number\)/ },
    { name: 'an array sub', forge: ({ claims, signed }) => signed({ ...claims, sub: [ACCOUNT] as never }), reason: /the sub claim is not a string \(a list\)/ },
    { name: 'an object sub', forge: ({ claims, signed }) => signed({ ...claims, sub: { id: ACCOUNT } as never }), reason: /the sub claim is not a string \(an object\)/ },
    // erin is linked through a reference whose identifier is the employee_id claim
    { name: 'no employee_id (the identifier claim)', user: 'erin', forge: ({ claims, signed }) => signed(claims), reason: /has no 'employee_id' claim/ },
    { name: 'an empty employee_id', user: 'erin', forge: ({ claims, signed }) => signed({ ...claims, employee_id: '' }), reason: /'employee_id' claim is empty/ },
    { name: 'a numeric employee_id', user: 'erin', forge: ({ claims, signed }) => signed({ ...claims, employee_id: 12345 }), reason: /'employee_id' claim is not a string \(a number\)/ },
    { name: 'an array employee_id', user: 'erin', forge: ({ claims, signed }) => signed({ ...claims, employee_id: ['12345'] }), reason: /'employee_id' claim is not a string \(a list\)/ },
    { name: 'an object employee_id', user: 'erin', forge: ({ claims, signed }) => signed({ ...claims, employee_id: { id: '12345' } }), reason: /'employee_id' claim is not a string \(an object\)/ },
  ];
  const symmetricKey = randomBytes(32);

  for (const c of CASES) {
    it(`refuses ${c.name}`, async () => {
      idp.publishKeys(c.name.includes('kty oct') ? [{ kty: 'oct', k: symmetricKey.toString('base64url'), kid: 'sym-key', alg: 'HS256', use: 'sig' }] : []);
      forging(c.forge);
      try {
        assertRefused(await login(c.user ?? 'alice'), c.reason);
      } finally {
        idp.rewriteTokenAnswers();
        idp.publishKeys([]);
      }
    });
  }

  it('a replayed device code: the exchange of a used device code issues nothing, even when the IdP answers it with tokens', async () => {
    // the IdP answers every exchange with the tokens of the first successful one, as a replaying IdP (or a man in the middle) would;
    // nora's reference reads no UserInfo, whose refusal of the revoked access token would otherwise hide a second issue
    let first: TokenAnswer | undefined;
    idp.rewriteTokenAnswers((a) => {
      if (a.status === 200) first ??= a;
      return first ?? a;
    });
    try {
      const r = await login('nora');
      assert.equal(r.reply.kind, 'rep', r.log.join('\n'));
      const start = realm.log.length;
      // the client answers again with the cookie that carried the device code
      const again = await asRequest('nora', r.cookie);
      assertRefused({ reply: again, log: realm.log.slice(start).filter((x) => x.includes(`client=nora@${REALM}`)) }, /device code already used/);
    } finally {
      idp.rewriteTokenAnswers();
    }
  });
});
