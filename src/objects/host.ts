/**
 * Hosts (computers) and their host/ principals (host/web.example.test@REALM):
 * add, delete, find, modify and show. A host name is kept in lower case, whatever
 * case it is given in; a new host needs a fully qualified name, while a
 * server's own host entry may have a short one (`localhost`). A new host
 * gets its principal name from its name and random keys (keytab.ts), or,
 * given a one-time password (--random, --password), no keys until it joins
 * with that password (host-enroll.ts): the password's scrypt hash is kept
 * sealed and never shown; show says whether there is one (Password) and
 * whether the host has keys (Keytab), and --random shows the password it
 * made once, in its own answer. A host is not renamed (its keys and its
 * services are named after it). Its SSH public keys (--sshpubkey, no
 * authorized_keys options) are served over LDAP with the class SSSD finds
 * hosts by (ssh-public-key.ts).
 * Deleting a host deletes the services that run on it (service/<host>); the
 * host entry of a dirid server is not deleted (realm-principals.ts); a
 * name another entry holds is a duplicate (principal-name.ts).
 */
import { randomBytes } from 'node:crypto';
import type { CallContext, Inputs } from '../framework/command.js';
import { publicError } from '../framework/errors.js';
import { defineObject } from '../framework/object.js';
import { FQDN, HOST_NAME } from '../framework/params.js';
import { newRandomKeys } from '../account/keys.js';
import { containers, KNOWN_CONTAINERS } from '../directory/layout.js';
import { escapeFilterValue } from '../directory/filter.js';
import { refuseServerPrincipal } from './realm-principals.js';
import { hashPassword } from '../account/password-hash.js';
import { completeSshKeys, FINGERPRINT_OUTPUT, sshFingerprints, sshPublicKeyParam } from './ssh-public-key.js';

const RANDOM_OPTION = {
  type: 'bool',
  flag: true,
  label: 'Random password',
  doc: 'Make a random one-time password with which the host joins the realm (dirid join), and show it',
} as const;

/** Where the password --random made waits for the answer of the same call (ctx.cache lives for one call). */
function randomPasswordKey(fqdn: string): string {
  return `host:randompassword:${fqdn}`;
}

/**
 * The stored form of the one-time password an add or mod sets: the scrypt
 * hash of the one given (--password) or of a random one (--random, 144
 * bits, kept for the answer); undefined when it sets none.
 */
async function oneTimePassword(ctx: CallContext, options: Inputs, given: string | undefined, fqdn: string): Promise<string | undefined> {
  if (options.random === true && given !== undefined) throw publicError('MutuallyExclusiveError', { reason: '--random and --password cannot be given together' });
  let password = given;
  if (options.random === true) {
    password = randomBytes(18).toString('base64url');
    ctx.cache.set(randomPasswordKey(fqdn), password);
  }
  return password === undefined ? undefined : hashPassword(password);
}

/** A host name in any case (normalised to lower case): labels of letters, digits and hyphens. */
const HOST_NAME_ANY_CASE = new RegExp(HOST_NAME.source, 'i');

export const hostObject = defineObject({
  name: 'host',
  label: 'hosts',
  labelSingular: 'host',
  doc: 'Hosts (computers) and their host/ principals.',
  container: KNOWN_CONTAINERS.hosts,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [
      { name: 'fqdn', syntax: 'string', singleValue: true, indexed: true },
      // a host's one-time enrolment password (its scrypt hash, sealed) and the failed attempts at it (host-enroll.ts)
      { name: 'dirEnrolmentPassword', syntax: 'secret', singleValue: true },
      { name: 'dirEnrolmentFailures', syntax: 'integer', singleValue: true },
      { name: 'dirEnrolmentLastFailure', syntax: 'time', singleValue: true },
    ],
    objectClasses: [
      {
        name: 'dirHost',
        kind: 'structural',
        sup: 'top',
        must: ['fqdn', 'cn'],
        may: ['description', 'nsAccountLock', 'dirEnrolmentPassword', 'dirEnrolmentFailures', 'dirEnrolmentLastFailure'],
      },
      // RFC 2307's host class, which SSSD's ldap provider finds a host's keys by ((&(objectClass=ipHost)(fqdn=H))); dirid keeps no ipHostNumber
      { name: 'ipHost', kind: 'auxiliary', must: ['cn'], may: ['fqdn', 'description'] },
    ],
  },
  rdnAttr: 'fqdn',
  objectClasses: ['top', 'dirHost', 'krbPrincipalAux'],
  pkey: 'fqdn',
  params: {
    fqdn: {
      attr: 'fqdn',
      type: 'str',
      label: 'Host name',
      doc: 'Fully qualified host name',
      pattern: HOST_NAME_ANY_CASE,
      patternError: 'must be a host name: labels of letters, digits and hyphens separated by dots, with no empty label, no label starting or ending with a hyphen and no trailing dot',
    },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Description', maxLength: 1024 },
    password: {
      attr: 'dirEnrolmentPassword',
      type: 'password',
      label: 'One-time password',
      doc: "One-time password with which the host joins the realm (dirid join), once (prompted for when given without a value)",
      secret: true,
      noSearch: true,
    },
    sshpubkey: sshPublicKeyParam("SSH public key of the host, the line of one of its /etc/ssh/ssh_host_*_key.pub files; repeat for several"),
  },
  noRename: true,
  extraOptions: {
    add: { random: RANDOM_OPTION },
    mod: { random: RANDOM_OPTION },
  },
  computed: {
    principal: { label: 'Principal name', default: true },
    randompassword: { label: 'Random password', default: true },
    has_password: { label: 'Password', default: true },
    has_keytab: { label: 'Keytab', default: true },
    ...FINGERPRINT_OUTPUT,
  },
  defaultAttributes: ['fqdn', 'description'],
  searchAttributes: ['fqdn', 'description'],
  normalizePkey: (v) => v.toLowerCase(),
  hooks: {
    async preAdd(ctx, attrs, options, pkey) {
      if (!FQDN.test(pkey)) throw publicError('ValidationError', { name: 'fqdn', error: 'must be fully qualified: the host name with its domain, as web.example.test' });
      attrs.cn = [pkey];
      attrs.krbPrincipalName = [`host/${pkey}@${ctx.server.realm}`];
      const password = await oneTimePassword(ctx, options, attrs.dirEnrolmentPassword?.[0], pkey);
      if (password === undefined) attrs.krbPrincipalKey = newRandomKeys();
      // a host that joins with a password gets its keys then, and has none before (Keytab: False)
      else attrs.dirEnrolmentPassword = [password];
    },
    async preMod(ctx, mods, options, entry) {
      const i = mods.findIndex((m) => m.attr === 'dirEnrolmentPassword');
      const given = i < 0 ? undefined : mods[i]!.values?.[0];
      const password = await oneTimePassword(ctx, options, given, entry.attrs.fqdn?.[0] ?? '');
      if (password === undefined) return;
      for (const name of entry.attrs.krbPrincipalName ?? []) await refuseServerPrincipal(ctx, name, 'given a one-time password: a dirid server is enrolled by init or replica-prepare');
      if (i >= 0) mods.splice(i, 1);
      // a new password starts with no failed attempts
      mods.push(
        { op: 'replace', attr: 'dirEnrolmentPassword', values: [password] },
        { op: 'replace', attr: 'dirEnrolmentFailures', values: [] },
        { op: 'replace', attr: 'dirEnrolmentLastFailure', values: [] },
      );
    },
    async preDel(ctx, entry) {
      for (const name of entry.attrs.krbPrincipalName ?? []) await refuseServerPrincipal(ctx, name, 'deleted');
    },
    async alsoDelete(ctx, entry) {
      // its services: every service/<this host>@REALM
      const fqdn = entry.attrs.fqdn?.[0];
      if (!fqdn) return [];
      const filter = `(&(objectClass=krbPrincipal)(krbPrincipalName=*/${escapeFilterValue(fqdn)}@${escapeFilterValue(ctx.server.realm)}))`;
      const found = await ctx.dir.search({ base: containers(ctx.dir.baseDn).services, scope: 'one', filter, attrs: ['1.1'] });
      return found.entries.map((e) => e.dn);
    },
    async complete(_ctx, entry) {
      // host/FQDN is no other entry's: the directory's principalNameRule, at the write
      completeSshKeys(entry, false, ['ldapPublicKey', 'ipHost']);
    },
    async postRead(ctx, entry, out) {
      if (entry.attrs.krbPrincipalName) out.principal = entry.attrs.krbPrincipalName;
      const made = ctx.cache.get(randomPasswordKey(entry.attrs.fqdn?.[0] ?? ''));
      if (typeof made === 'string') out.randompassword = made;
      out.has_password = (await ctx.dir.readSecret(entry.dn, 'dirEnrolmentPassword')).length > 0;
      out.has_keytab = (await ctx.dir.readSecret(entry.dn, 'krbPrincipalKey')).length > 0;
      if (entry.attrs.sshPublicKey) out.sshpubkeyfp = sshFingerprints(entry.attrs.sshPublicKey);
    },
  },
});

