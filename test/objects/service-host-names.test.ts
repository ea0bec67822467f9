/**
 * Service and host names as the KDC and MIT clients use them: the host part
 * of a service principal and a host name are kept in lower case whatever
 * case they are given in (MIT clients ask for host/web.example.test, and the
 * KDC matches names exactly), and names that are no host names (an empty
 * label, a label starting with a hyphen, a trailing dot) are refused with a
 * message that says what a host name is. The principals a dirid server runs
 * on change only their description.
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';

type RpcFailure = Error & { code: number; message: string };

describe('service and host names', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  before(async () => {
    ({ realm, admin } = await openAdminRealm());
    await admin.call('host_add', ['web.example.test']);
  });
  after(async () => realm.close());

  it('service_add keeps the host part in lower case; show, keytab_get and del find it by any case', async () => {
    const added = await admin.call('service_add', ['cifs/WEB.Example.Test']);
    assert.equal(added.value, 'cifs/web.example.test@EXAMPLE.TEST');
    assert.deepEqual((await admin.call('service_show', ['cifs/web.example.test'])).result.krbprincipalname, ['cifs/web.example.test@EXAMPLE.TEST']);
    assert.equal((await admin.call('service_show', ['cifs/WEB.example.test'])).value, 'cifs/web.example.test@EXAMPLE.TEST');
    const kt = await admin.call('keytab_get', ['cifs/WEB.example.test'], { retrieve: true });
    assert.equal(kt.result.principal, 'cifs/web.example.test@EXAMPLE.TEST');
    await admin.call('service_del', ['cifs/Web.example.test']);
    await assert.rejects(admin.call('service_show', ['cifs/web.example.test']), (e: RpcFailure) => e.code === 4001);
  });

  for (const name of ['HTTP/a..example.test', 'HTTP/-x.example.test', 'HTTP/web.example.test.', 'HTTP/x-.example.test', 'HTTP/']) {
    it(`service_add ${name} is refused: not a host name`, async () => {
      await assert.rejects(admin.call('service_add', [name], { force: true }), (e: RpcFailure) => e.code === 3009 && /no empty label/.test(e.message) && /no trailing dot/.test(e.message));
    });
  }

  it('host_add keeps the name in lower case; host_show finds it by any case', async () => {
    const added = await admin.call('host_add', ['Web2.Example.TEST']);
    assert.equal(added.value, 'web2.example.test');
    assert.deepEqual(added.result.principal, ['host/web2.example.test@EXAMPLE.TEST']);
    assert.equal((await admin.call('host_show', ['WEB2.example.test'])).value, 'web2.example.test');
  });

  for (const name of ['a..example.test', '-x.example.test', 'web3.example.test.', 'x-.example.test']) {
    it(`host_add ${name} is refused: not a host name`, async () => {
      await assert.rejects(admin.call('host_add', [name]), (e: RpcFailure) => e.code === 3009 && /no empty label/.test(e.message));
    });
  }

  it('host_add of a short name is refused: a new host is fully qualified', async () => {
    await assert.rejects(admin.call('host_add', ['web4']), (e: RpcFailure) => e.code === 3009 && /fully qualified/.test(e.message));
    await assert.rejects(admin.call('host_show', ['web4']), (e: RpcFailure) => e.code === 4001);
  });

  it("service_mod of a server's principal changes its description only", async () => {
    await assert.rejects(admin.call('service_mod', ['HTTP/localhost'], { auth_ind: ['hardened'] }), (e: RpcFailure) => e.code === 3009 && /required by the dirid server localhost/.test(e.message));
    assert.equal((await admin.call('service_show', ['HTTP/localhost'])).result.krbprincipalauthind, undefined);
    const mod = await admin.call('service_mod', ['HTTP/localhost'], { description: 'the API' });
    assert.deepEqual(mod.result.description, ['the API']);
    await admin.call('service_add', ['nfs/web.example.test']);
    await admin.call('service_mod', ['nfs/web.example.test'], { auth_ind: ['hardened'] });
  });
});
