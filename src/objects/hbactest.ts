/**
 * hbactest (FreeIPA's command of that name, docs/hbac.md): whether a user
 * may log in to a host through a PAM service, by the host-based access
 * rules, with the rules that matched and those that did not. It runs the
 * evaluation the LDAP service runs for the host's SSSD
 * (objects/hbac-eval.ts), so it answers what the host will do. `--rules`
 * tests only the rules it names, enabled or not, so that a rule can be
 * tried before it is enabled. The user and the host must exist (NotFound,
 * exit 2); the service is any PAM service name, since a host may ask for
 * one no HBAC service names (only a rule for all services grants it). The
 * client exits 0 when access is granted and 1 when it is denied (output
 * kind `verdict`). Any authenticated principal may ask, as anyone may read
 * the rules.
 */
import type { Command } from '../framework/command.js';
import { getEntry, pkeyOf } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';
import { hbacTest } from './hbac-eval.js';

const SERVICE = /^[a-zA-Z0-9_.][a-zA-Z0-9_.-]{0,254}$/;

export const hbactestCommand: Command = {
  name: 'hbactest',
  doc: 'Simulate use of Host-based access controls: may this user log in to this host through this service?',
  args: [],
  options: {
    user: { type: 'str', label: 'User name', doc: 'The user who logs in (login)', required: true, maxLength: 255 },
    host: { type: 'str', label: 'Target host', doc: 'The host the user logs in to (its fully qualified name)', required: true, maxLength: 255 },
    service: {
      type: 'str',
      label: 'Service',
      doc: 'The PAM service the user logs in through (sshd, login, su, sudo...)',
      required: true,
      pattern: SERVICE,
      patternError: 'must be a PAM service name: letters, numbers, _, - and .',
    },
    rules: { type: 'str', multivalue: true, label: 'Rules to test', doc: 'Test only these rules, enabled or not (default: every enabled rule)', maxLength: 255 },
  },
  access: 'authenticated',
  output: 'verdict',
  async run(ctx, _args, opts) {
    const userObj = ctx.registry.objects.get('user')!;
    const hostObj = ctx.registry.objects.get('host')!;
    const user = await getEntry(ctx, userObj, pkeyOf(ctx, userObj, opts.user));
    const host = await getEntry(ctx, hostObj, pkeyOf(ctx, hostObj, opts.host));
    const rules = opts.rules as string[] | undefined;
    const answer = await hbacTest(ctx.dir, { userDn: user.dn, hostDn: host.dn, service: String(opts.service), ...(rules ? { rules } : {}) });
    if (answer.unknown.length > 0) throw publicError('NotFound', { reason: `${answer.unknown.join(', ')}: HBAC rule not found` });
    return {
      result: { matched: answer.matched, notmatched: answer.notMatched },
      value: answer.granted,
      summary: `Access granted: ${answer.granted ? 'True' : 'False'}`,
    };
  },
};
