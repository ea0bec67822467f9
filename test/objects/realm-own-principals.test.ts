/**
 * The realm's own principals are not services an administrator rotates,
 * exports or deletes by accident: keytab_get refuses krbtgt/REALM (new keys
 * would void every TGT of the realm, and the file would let its holder forge
 * any ticket) and kadmin/changepw; service_del refuses the principals a
 * dirid server runs on (HTTP/<server> for the API's Negotiate, ldap/<server>
 * for LDAP SASL GSSAPI), as FreeIPA refuses to delete a principal "required
 * by the IPA master".
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';

describe("the realm's own principals", () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  before(async () => ({ realm, admin } = await openAdminRealm()));
  after(async () => realm.close());

  for (const principal of ['krbtgt/EXAMPLE.TEST@EXAMPLE.TEST', 'kadmin/changepw@EXAMPLE.TEST']) {
    it(`keytab_get ${principal} is refused, with or without --retrieve`, async () => {
      await assert.rejects(admin.call('keytab_get', [principal], { retrieve: true }), (e: Error & { code: number }) => e.code !== undefined);
      await assert.rejects(admin.call('keytab_get', [principal]), (e: Error & { code: number }) => e.code !== undefined);
    });
  }

  for (const principal of ['HTTP/localhost@EXAMPLE.TEST', 'ldap/localhost@EXAMPLE.TEST']) {
    it(`service_del ${principal} (the server's own) is refused`, async () => {
      await assert.rejects(admin.call('service_del', [principal]), (e: Error & { code: number }) => e.code !== undefined);
      const shown = await admin.call('service_show', [principal]);
      assert.equal(shown.value, principal);
    });
  }
});
