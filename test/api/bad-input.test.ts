/**
 * Malformed requests get clean errors and the server keeps serving
 * (house rule "Bad input gets a clear error and loses nothing").
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { httpsPost, RpcSession } from '../support/rpc-client.js';

describe('bad input over RPC', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  before(async () => {
    ({ realm, admin } = await startAdminRealm());
  });
  after(async () => realm.stop());

  const post = (path: string, body: string | Buffer, type: string, extra: Record<string, string> = {}) =>
    httpsPost(`${realm.url}${path}`, realm.ca, body, { 'Content-Type': type, Referer: `${realm.url}/dirid/`, Cookie: admin.cookie!, ...extra });

  async function stillServing() {
    assert.match((await admin.call('ping')).summary, /^dirid server version/);
  }

  it('malformed JSON and envelopes get a protocol error', async () => {
    for (const body of ['{', 'null', '[]', '{"method":"ping"}', '{"method":42,"params":[[],{}]}', '{"method":"ping","params":{}}', '\u0000\u0001', '{"method":"ping","params":[[],{}],"id":1}garbage']) {
      const r = await post('/dirid/session/json', body, 'application/json');
      assert.equal(r.status, 200, body);
      const env = JSON.parse(r.body) as { error: { code: number; name: string } | null };
      assert.equal(env.error?.code, 909, body);
      assert.equal(env.error?.name, 'ProtocolError');
    }
    await stillServing();
  });

  it('malformed XML, DOCTYPEs and entity tricks get a fault', async () => {
    const bodies = [
      '<methodCall>',
      '<?xml version="1.0"?><methodCall><methodName>ping</methodName><params><param><value><array><data></data></array></value></param>',
      '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]><methodCall><methodName>&b;</methodName></methodCall>',
      '<?xml version="1.0"?><!DOCTYPE x SYSTEM "file:///etc/passwd"><methodCall><methodName>ping</methodName></methodCall>',
      '<methodCall><methodName>ping</methodName><params><param><value><unknownType>1</unknownType></value></param></params></methodCall>',
    ];
    for (const body of bodies) {
      const r = await post('/dirid/session/xml', body, 'text/xml');
      assert.equal(r.status, 200, body);
      assert.match(r.body, /<fault>/, body);
      assert.match(r.body, /<int>909<\/int>/, body);
    }
    await stillServing();
  });

  it('unknown commands and options, wrong types and over-long values', async () => {
    const e = async (method: string, args: unknown[], options: Record<string, unknown>) => {
      const { response } = await admin.raw(method, args as never, options as never);
      return response.error;
    };
    assert.deepEqual(await e('no_such_command', [], {}), { code: 905, name: 'CommandError', message: "unknown command 'no_such_command'", data: { name: 'no_such_command' } });
    assert.equal((await e('idp_show', ['x'], { bogus: true }))?.message, "unknown option 'bogus'");
    assert.equal((await e('idp_find', [], { sizelimit: 'many' }))?.message, "invalid 'sizelimit': must be an integer");
    assert.equal((await e('idp_find', [], { sizelimit: [1, 2] }))?.code, 3009);
    assert.equal((await e('idp_show', [{ a: 1 }], {}))?.code, 3009);
    assert.equal((await e('idp_show', ['a', 'b'], {}))?.code, 3002);
    assert.equal((await e('idp_show', [], {}))?.message, "'name' is required");
    assert.equal((await e('idp_add', ['x'.repeat(65)], { client_id: 'c', secret: 's', auth_uri: 'https://a.example/', token_uri: 'https://a.example/' }))?.code, 3009);
    assert.equal((await e('idp_add', ['ok'], { client_id: 'c'.repeat(300), secret: 's', auth_uri: 'https://a.example/', token_uri: 'https://a.example/' }))?.message, "invalid 'client_id': must be printable ASCII (at most 255 characters)");
    assert.equal((await e('idp_add', ['ok'], { client_id: 'c\nd', secret: 's', auth_uri: 'https://a.example/', token_uri: 'https://a.example/' }))?.code, 3009);
    await stillServing();
  });

  it('huge bodies are refused with 413 before they are parsed', async () => {
    const big = Buffer.alloc(2 * 1024 * 1024, 0x20);
    const r = await post('/dirid/session/json', big, 'application/json').catch((err: Error) => ({ status: 413, body: err.message, headers: {} }));
    assert.equal(r.status, 413);
    await stillServing();
  });

  it('requests without our Referer are refused (CSRF)', async () => {
    const r = await httpsPost(`${realm.url}/dirid/session/json`, realm.ca, '{"method":"ping","params":[[],{}],"id":0}', {
      'Content-Type': 'application/json',
      Cookie: admin.cookie!,
    });
    assert.equal(r.status, 400);
    const evil = await post('/dirid/session/json', '{"method":"ping","params":[[],{}],"id":0}', 'application/json', { Referer: 'https://evil.example/dirid/' });
    assert.equal(evil.status, 400);
    // another site may not log a browser out either
    const out = await post('/dirid/session/logout', '', 'application/x-www-form-urlencoded', { Referer: 'https://evil.example/dirid/' });
    assert.equal(out.status, 400);
    assert.equal(out.headers['set-cookie'], undefined);
    await stillServing();
  });

  it('garbage on the TLS port does not hurt', async () => {
    await new Promise<void>((resolve) => {
      const s = connect({ host: '127.0.0.1', port: realm.server.httpsPort, ca: realm.ca, servername: 'localhost' }, () => {
        s.write('NOT HTTP AT ALL\r\n\r\n\u0000\u0001\u0002');
      });
      s.on('data', () => {});
      s.on('close', () => resolve());
      s.on('error', () => resolve());
      setTimeout(() => s.destroy(), 2000);
    });
    await stillServing();
  });
});
