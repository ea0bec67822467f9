/**
 * idp-check NAME (docs/device-flow.md, "Checking an IdP reference"): tells
 * an administrator whether an IdP reference will work before users try it.
 * The server runs the checks itself, through its IdP client (the service
 * `idpCheck` the server wires in; objects/ may not reach the network), with
 * the sealed client secret or client keys, which never leave the server. Its result is a
 * list of checks (output kind `checks`), one PASS, FAIL or SKIP line each,
 * and a summary counting them; a client exits non-zero when one failed.
 * It changes nothing: no write, and a device code it obtains is abandoned.
 *
 * Who may run it: the writers of IdP references (admins and holders of the
 * IdP Administrators privilege), not every reader. It uses the secret, which
 * readers never reach, and it makes the server send requests in the
 * reference's name to the IdP, which is an administrator's act.
 */
import type { CheckLine, Command, IdpCheckTarget, ObjectDef } from '../framework/command.js';
import { dnOf, getEntry, pkeyOf } from '../framework/crud.js';

/** "6 passed, 1 failed, 2 skipped": every status, even at 0, so the line reads the same each time. */
function counts(lines: CheckLine[]): string {
  const n = (s: CheckLine['status']) => lines.filter((l) => l.status === s).length;
  return `${n('PASS')} passed, ${n('FAIL')} failed, ${n('SKIP')} skipped`;
}

/** idp-check, a command of the IdP reference object (idp.ts declares it). */
export const idpCheckCommand = (idpObject: ObjectDef): Command => ({
  name: 'idp_check',
  doc: 'Check an IdP reference against its IdP: discovery, endpoints, signing keys, and a device authorization with its client credentials. Changes nothing.',
  object: 'idp',
  args: [{ ...idpObject.params[idpObject.pkey]!, name: 'name', required: true }],
  options: {},
  access: { manage: 'idp' },
  output: 'checks',
  async run(ctx, args) {
    const name = pkeyOf(ctx, idpObject, args[0]);
    const entry = await getEntry(ctx, idpObject, name);
    const dn = dnOf(idpObject, ctx.dir.baseDn, name);
    const [secret] = await ctx.dir.readSecret(dn, 'dirIdpClientSecret');
    const [keys] = await ctx.dir.readSecret(dn, 'dirIdpClientKey');
    const target: IdpCheckTarget = { name, attrs: entry.attrs, ...(secret ? { clientSecret: secret } : {}), ...(keys ? { clientKeys: keys } : {}) };
    const check = ctx.registry.services.idpCheck;
    const lines: CheckLine[] = check ? await check(target) : [{ check: 'IdP client', status: 'FAIL', message: 'this server has no IdP client' }];
    return { result: lines, value: name, summary: `Checked IdP reference "${name}": ${counts(lines)}` };
  },
});
