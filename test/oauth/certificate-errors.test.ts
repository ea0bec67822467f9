/**
 * An IdP whose TLS certificate the IdP client refuses (src/oauth/errors.ts
 * codedError): discovery, the device authorization, the token poll,
 * UserInfo and the key set fetch say the certificate was not accepted and why, point at
 * `dirid-server start --idp-ca-file` when the CA is not trusted, and do not
 * pass on Node's hint about its own command-line flags. Real HTTPS servers:
 * one with a certificate from a CA the client was not given, one whose
 * certificate names another host.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { IdpClient } from '../../src/oauth/client.js';
import { discover } from '../../src/oauth/discovery.js';
import { pollToken, startDeviceAuthorization } from '../../src/oauth/device-flow.js';
import { httpsFetch } from '../../src/oauth/http.js';
import { fetchUserinfo } from '../../src/oauth/userinfo.js';
import { KeySetCache } from '../../src/oauth/key-sets.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';
import { createCa, issueServerCert } from '../../src/server/pki.js';

async function listening(key: string, cert: string): Promise<{ server: Server; port: number }> {
  const server = createServer({ key, cert }, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, port: (server.address() as AddressInfo).port };
}

/** The OAuthError `p` rejects with. */
async function refusal(p: Promise<unknown>): Promise<OAuthError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof OAuthError, `not an OAuthError: ${String(e)}`);
    return e;
  }
  assert.fail('no error');
}

describe('an IdP certificate the client does not accept', () => {
  const servers: Server[] = [];
  let untrusted: string;
  let misnamed: string;
  let caPem: string;
  before(async () => {
    const ca = await createCa('certificate errors test CA');
    caPem = ca.certPem;
    const good = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    const a = await listening(good.keyPem, good.certPem);
    untrusted = `https://localhost:${a.port}`;
    const other = await issueServerCert(ca, { commonName: 'idp.other.example', dnsNames: ['idp.other.example'], ipAddresses: [] });
    const b = await listening(other.keyPem, other.certPem);
    misnamed = `https://localhost:${b.port}`;
    servers.push(a.server, b.server);
  });
  after(() => {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
  });

  const cfgAt = (base: string): IdpConfig => ({ name: 'x', clientId: 'c', clientSecret: 'client-secret-1234', devAuthUri: `${base}/device`, tokenUri: `${base}/token` });

  it('says the certificate was not accepted, not that the IdP could not be reached, and names --idp-ca-file', async () => {
    const client = () => new IdpClient(httpsFetch());
    const errors = [
      await refusal(discover(untrusted, client())),
      await refusal(startDeviceAuthorization(cfgAt(untrusted), client())),
      await refusal(pollToken(cfgAt(untrusted), 'device-code-5678', client())),
      await refusal(fetchUserinfo(`${untrusted}/userinfo`, 'access-token-9012', httpsFetch())),
    ];
    for (const e of errors) {
      assert.match(e.message, /the IdP's TLS certificate was not accepted \(it is not issued by a CA this server trusts \[UNABLE_TO_VERIFY_LEAF_SIGNATURE\]\)/, e.message);
      assert.match(e.message, /dirid-server start --idp-ca-file/);
      assert.doesNotMatch(e.message, /could not be reached|--use-system-ca/);
    }
    assert.match(errors[0]!.message, /^OIDC discovery at https:\/\/localhost:\d+: /);
    // the codes callers act on are those of before: discovery failed, the others a transport failure
    assert.deepEqual(
      errors.map((e) => e.code),
      ['discovery_failed', 'idp_unreachable', 'idp_unreachable', 'idp_unreachable'],
    );
  });

  it('the key set fetch says so too, keeping its own beginning', async () => {
    const lookup = new KeySetCache().lookup(`${untrusted}/jwks`, httpsFetch());
    const e = await refusal((async () => lookup({ alg: 'RS256', kid: 'k1' }, { payload: new Uint8Array(), signature: new Uint8Array() } as never))());
    assert.equal(e.code, 'jwks_unreachable');
    assert.match(e.message, /^Unable to fetch keys from https:\/\/localhost:\d+\/jwks \(the IdP's TLS certificate was not accepted \(it is not issued by a CA this server trusts \[UNABLE_TO_VERIFY_LEAF_SIGNATURE\]\)/, e.message);
    assert.doesNotMatch(e.message, /--use-system-ca/);
  });

  it('says the certificate names another host when the CA is trusted but the name is not the one asked for', async () => {
    const e = await refusal(startDeviceAuthorization(cfgAt(misnamed), new IdpClient(httpsFetch(caPem))));
    assert.match(e.message, /the IdP's TLS certificate was not accepted \(it is not issued for the host asked for: .*localhost.*idp\.other\.example.* \[ERR_TLS_CERT_ALTNAME_INVALID\]\)/, e.message);
    assert.doesNotMatch(e.message, /could not be reached|--idp-ca-file/);
  });

  it('still says the IdP could not be reached when nothing answers', async () => {
    const e = await refusal(startDeviceAuthorization(cfgAt('https://127.0.0.1:1'), new IdpClient(httpsFetch())));
    assert.equal(e.code, 'idp_unreachable');
    assert.match(e.message, /the IdP could not be reached/);
  });

  it('a trusted certificate is accepted', async () => {
    const e = await refusal(startDeviceAuthorization(cfgAt(untrusted), new IdpClient(httpsFetch(caPem))));
    assert.doesNotMatch(e.message, /certificate/);
  });
});
