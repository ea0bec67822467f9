/**
 * host_enroll: a host joins the realm (`dirid join`, FreeIPA's `join`). It
 * gets new random keys for host/FQDN as a keytab (the key version one more
 * than before, as keytab_get makes them) and what it needs to configure
 * itself: the realm, its domain and base DN, the realm's servers with their
 * ports, and the realm CA's certificate.
 *
 * Who may: the host itself, with the one-time password an administrator
 * gave it (host-add/host-mod --random or --password), which needs no other
 * credentials (the API's `/dirid/session/enroll` takes this command alone,
 * unauthenticated: docs/access.md); or an administrator, with their own
 * credentials, for any host (one that does not exist yet is added).
 *
 * The password works once: the write that stores the new keys removes
 * exactly the stored password it was checked against (a delete of that
 * value, which the write path refuses when the value is no longer there),
 * so of two enrolments racing with one password, on one server or on two
 * sharing a store, one gets keys and the other is refused. A wrong password
 * is a failed login: it counts towards a lockout of the host's enrolment
 * under the realm's lockout policy (account/state.ts, on the host's own
 * counters, so the host's Kerberos principal is never locked by them), and
 * every attempt costs one password hash, so an unknown host, a host without
 * a password and a wrong password take the same time and get the same
 * answer (EnrolmentRefused); the log says which, never the password. Each
 * call is logged as a login is: `enroll host=FQDN method=password|admin
 * outcome=ok|denied`, a refusal with its error and reason (loginEvent).
 */
import type { ArgDef, CallContext, Command, EnrolmentInfo, OptionDef } from '../framework/command.js';
import type { Entry } from '../directory/types.js';
import { DirectoryError } from '../directory/types.js';
import { hostDn, realmContainerDn } from '../directory/layout.js';
import { hasObjectClass } from '../directory/entry.js';
import { serialized } from '../directory/serialized.js';
import { generalizedTime } from '../directory/schema.js';
import { canManage } from '../framework/access.js';
import { getEntry, mapDirectoryError } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';
import { HOST_NAME } from '../framework/params.js';
import { Accounts, accountOf, failuresAfter, verdict, type LockoutPolicy } from '../account/state.js';
import { keytabFor, parseKeys, randomKeys, serializeKeys } from '../account/keys.js';
import { AuthRefusal, accountRefusal } from './login.js';
import { checkPassword } from '../account/password-hash.js';
import { hostObject } from './host.js';
import { refuseServerPrincipal } from './realm-principals.js';

const FQDN_ARG: ArgDef = {
  name: 'fqdn',
  type: 'str',
  label: 'Host name',
  doc: "The host's fully qualified name",
  required: true,
  pattern: new RegExp(HOST_NAME.source, 'i'),
  patternError: 'must be a host name: labels of letters, digits and hyphens separated by dots',
};

const PASSWORD_OPTION: OptionDef = {
  type: 'password',
  label: 'One-time password',
  doc: "The host's one-time password (host-add or host-mod --random or --password); without it, the caller's own credentials, an administrator's",
  secret: true,
};

/** The refusal a caller sees for anything wrong with a host and its password; `reason` is for the log. */
function refused(fqdn: string, reason: string): AuthRefusal {
  return new AuthRefusal(publicError('EnrolmentRefused'), `host ${fqdn}: ${reason}`);
}

/** The enrolment's failure counters of a host as an account of account/state.ts, so its lockout rules apply to them. */
function enrolmentAccount(entry: Entry) {
  return accountOf({
    dn: entry.dn,
    attrs: { objectClass: ['dirUser'], krbLoginFailedCount: entry.attrs.dirEnrolmentFailures ?? [], krbLastFailedAuth: entry.attrs.dirEnrolmentLastFailure ?? [] },
  });
}

/** Counts a wrong one-time password on the host's own counters (the lockout arithmetic of account/state.ts). */
function countFailure(ctx: CallContext, dn: string, policy: LockoutPolicy, now: number): Promise<void> {
  if (policy.maxFailures === 0) return Promise.resolve();
  return serialized(ctx.dir, dn, async () => {
    const e = await ctx.dir.get(dn, ['dirEnrolmentFailures', 'dirEnrolmentLastFailure']);
    if (!e) return;
    const n = failuresAfter(enrolmentAccount(e), policy, now);
    try {
      await ctx.dir.modify(dn, [
        { op: 'replace', attr: 'dirEnrolmentFailures', values: [String(n)] },
        { op: 'replace', attr: 'dirEnrolmentLastFailure', values: [generalizedTime(new Date(now))] },
      ]);
    } catch (err) {
      if (!(err instanceof DirectoryError && err.code === 'noSuchObject')) throw err;
    }
  });
}

/**
 * The host entry whose one-time password `password` is, and that password's
 * stored form; an AuthRefusal otherwise. One password hash whatever comes.
 */
async function checkOneTimePassword(ctx: CallContext, fqdn: string, password: string): Promise<{ entry: Entry; stored: string }> {
  const accounts = new Accounts(ctx.dir);
  const found = await ctx.dir.get(hostDn(ctx.dir.baseDn, fqdn));
  const entry = found && hasObjectClass(found.attrs.objectClass, 'dirHost') ? found : null;
  // the realm's lockout figures (its global password policy), counted on the host's own enrolment attempts
  const policy = await accounts.passwordPolicy({ dn: entry?.dn ?? '', isUser: false });
  const now = Date.now();
  const host = entry ? verdict(accountOf(entry), policy, now) : null;
  const lock = entry ? verdict(enrolmentAccount(entry), policy, now) : null;
  const [stored] = entry && host?.state === 'usable' && lock?.state === 'usable' ? await ctx.dir.readSecret(entry.dn, 'dirEnrolmentPassword') : [];
  const matches = await checkPassword(password, stored);
  if (!entry || !host || !lock) throw refused(fqdn, 'no such host');
  if (host.state !== 'usable') throw accountRefusal(host);
  if (lock.state === 'locked') {
    const until = lock.until ? `until ${lock.until.toISOString()}` : 'until an administrator sets a new one';
    throw new AuthRefusal(publicError('AccountLocked'), `host ${fqdn}: enrolment locked after too many wrong one-time passwords, ${until}`);
  }
  if (!stored) throw refused(fqdn, 'the host has no one-time password (used already, or never set)');
  if (!matches) {
    await countFailure(ctx, entry.dn, policy, now);
    throw refused(fqdn, 'wrong one-time password');
  }
  return { entry, stored };
}

/** The host an administrator enrols: as it is, or added as host-add adds it. */
async function hostForAdministrator(ctx: CallContext, fqdn: string): Promise<Entry> {
  if (!ctx.principal) throw publicError('NotAuthenticated');
  if (!(await canManage(ctx, undefined))) throw publicError('ACIError', { info: 'only administrators enrol a host without its one-time password' });
  const dn = hostDn(ctx.dir.baseDn, fqdn);
  if (!(await ctx.dir.get(dn, ['1.1']))) await ctx.registry.get('host_add').run(ctx, [fqdn], {});
  return getEntry(ctx, hostObject, fqdn);
}

function serversOut(info: EnrolmentInfo) {
  return info.servers.map((s) => ({
    hostname: s.hostname,
    kdc_port: s.ports.kdc,
    kpasswd_port: s.ports.kpasswd,
    https_port: s.ports.https,
    ldap_port: s.ports.ldap,
    ldaps_port: s.ports.ldaps,
  }));
}

export const hostEnrollCommand: Command = {
  name: 'host_enroll',
  doc: "Enrol a host (dirid join): new keys for host/FQDN as a keytab, and the realm's servers and CA. Takes the host's one-time password, once, or an administrator's credentials.",
  args: [FQDN_ARG],
  options: { password: PASSWORD_OPTION },
  // the command checks its own credentials: the one-time password, or an administrator
  access: 'anonymous',
  output: 'custom',
  // logged as a login, by host and way in (docs/access.md)
  loginEvent: (args, opts) => ({ event: 'enroll', fields: { host: String(args[0] ?? '').toLowerCase(), method: opts.password != null ? 'password' : 'admin' } }),
  async run(ctx, args, opts) {
    const fqdn = String(args[0]).toLowerCase();
    const wire = ctx.registry.services.enrolment;
    if (!wire) throw new Error('host_enroll: the server wired in no enrolment service');
    const password = typeof opts.password === 'string' ? opts.password : undefined;
    const { entry, stored } = password !== undefined ? await checkOneTimePassword(ctx, fqdn, password) : { entry: await hostForAdministrator(ctx, fqdn), stored: undefined };
    const name = entry.attrs.krbPrincipalName?.[0];
    if (!name) throw new Error(`host ${fqdn} has no principal name`);
    await refuseServerPrincipal(ctx, name, 'enrolled: a dirid server is enrolled by init or replica-prepare');
    const old = parseKeys(await ctx.dir.readSecret(entry.dn, 'krbPrincipalKey'));
    const keys = randomKeys(Math.max(0, ...old.map((k) => k.kvno)) + 1);
    const mods = [
      // the password checked, exactly: gone (used by another enrolment, or replaced), the write fails
      stored !== undefined ? { op: 'delete' as const, attr: 'dirEnrolmentPassword', values: [stored] } : { op: 'replace' as const, attr: 'dirEnrolmentPassword', values: [] },
      { op: 'replace' as const, attr: 'krbPrincipalKey', values: serializeKeys(keys) },
      { op: 'replace' as const, attr: 'dirEnrolmentFailures', values: [] },
      { op: 'replace' as const, attr: 'dirEnrolmentLastFailure', values: [] },
    ];
    try {
      await ctx.dir.modify(entry.dn, mods);
    } catch (err) {
      if (stored !== undefined && err instanceof DirectoryError && err.code === 'noSuchAttribute') throw refused(fqdn, 'the one-time password was used (or replaced) meanwhile');
      throw mapDirectoryError(ctx, hostObject, fqdn, err);
    }
    const info = await wire();
    const realm = name.slice(name.lastIndexOf('@') + 1);
    return {
      result: {
        fqdn,
        principal: name,
        kvno: keys[0]!.kvno,
        keytab: keytabFor(realm, name.slice(0, name.lastIndexOf('@')).split('/'), keys),
        realm: ctx.server.realm,
        domain: ctx.server.domain,
        basedn: ctx.dir.baseDn,
        servers: serversOut(info),
        ca_certificate: info.caPem,
      },
      value: fqdn,
      summary: `Enrolled host "${fqdn}" (keytab kvno ${keys[0]!.kvno})`,
    };
  },
};
