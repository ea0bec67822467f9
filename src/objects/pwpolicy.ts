/**
 * Password policies (FreeIPA's pwpolicy-*): the realm's global policy
 * (`global_policy`, which pwpolicy-show and pwpolicy-mod act on when given
 * no group) and one policy per group, with a priority: a user is held to
 * the policy of the group with the lowest priority number among its
 * groups, nested ones included, else to the global one
 * (account/password-policy.ts reads them; account/credentials.ts holds every
 * new password to them, account/state.ts and the KDC lock accounts by
 * them). The figures are stored as MIT and FreeIPA store them
 * (krbPwdPolicy: lifetimes in seconds) and given and shown as FreeIPA's
 * options take them: --maxlife in days, --minlife in hours, --failinterval
 * and --lockouttime in seconds; --raw shows them as stored. A group policy
 * takes the figures it is not given from the global policy when it is
 * added. Priorities are unique, as FreeIPA has them. A group's policy goes
 * with the group (objects/group.ts), and a group with a policy keeps its
 * name. Readable by every authenticated principal, as FreeIPA's; written by
 * administrators and holders of the Password Policy Administrators privilege.
 */
import { DEFAULT_POLICY, policyAttributes, policyOf, POLICY_ATTRIBUTES, PRIORITY_ATTRIBUTE } from '../account/password-policy.js';
import { escapeRdnValue } from '../directory/dn.js';
import { escapeFilterValue } from '../directory/filter.js';
import { containers, GLOBAL_PWPOLICY, globalPwpolicyDn, KNOWN_CONTAINERS } from '../directory/layout.js';
import type { Attributes, Modification } from '../directory/types.js';
import type { CallContext, Inputs } from '../framework/command.js';
import { publicError } from '../framework/errors.js';
import { defineObject } from '../framework/object.js';

const NAME = /^[a-zA-Z0-9_.][a-zA-Z0-9_. -]{0,254}$/;

/** The options given in units other than the stored seconds: the factor from the option's unit to seconds. */
const SCALED = { krbMaxPwdLife: 86400, krbMinPwdLife: 3600 } as const;
const SCALED_OPTION = { krbMaxPwdLife: 'maxlife', krbMinPwdLife: 'minlife' } as const;

/** The DN of the policy of the group named `group`. */
export function groupPolicyDn(baseDn: string, group: string): string {
  return `cn=${escapeRdnValue(group)},${containers(baseDn).pwpolicies}`;
}

/** Stored seconds from an option's days or hours. */
function toSeconds(attr: keyof typeof SCALED, values: readonly string[]): string[] {
  return values.map((v) => String(Number(v) * SCALED[attr]));
}

/** The group policy holding `priority`, other than `self`; null when none. */
async function priorityHolder(ctx: CallContext, priority: string, self: string): Promise<string | null> {
  const res = await ctx.dir.search({
    base: containers(ctx.dir.baseDn).pwpolicies,
    scope: 'one',
    filter: `(&(objectClass=krbPwdPolicy)(${PRIORITY_ATTRIBUTE}=${escapeFilterValue(priority)}))`,
    attrs: ['cn'],
    sizeLimit: 2,
  });
  const other = res.entries.find((e) => (e.attrs.cn?.[0] ?? '').toLowerCase() !== self.toLowerCase());
  return other ? (other.attrs.cn?.[0] ?? other.dn) : null;
}

async function checkPriorityFree(ctx: CallContext, priority: string | undefined, self: string): Promise<void> {
  if (priority === undefined) return;
  const holder = await priorityHolder(ctx, priority, self);
  if (holder) throw publicError('ValidationError', { name: 'priority', error: `priority must be a unique value (${priority} already used by ${holder})` });
}

const figure = (attr: string, label: string, doc: string, maxValue: number) => ({ attr, type: 'int', label, doc, minValue: 0, maxValue }) as const;

export const pwpolicyObject = defineObject({
  name: 'pwpolicy',
  label: 'password policies',
  labelSingular: 'password policy',
  doc: "Password policies: the realm's global policy, and policies of groups (the lowest priority number among a user's groups wins).",
  container: KNOWN_CONTAINERS.pwpolicies,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [
      { name: 'krbMaxPwdLife', syntax: 'integer', singleValue: true },
      { name: 'krbMinPwdLife', syntax: 'integer', singleValue: true },
      { name: 'krbPwdMinDiffChars', syntax: 'integer', singleValue: true },
      { name: 'krbPwdMinLength', syntax: 'integer', singleValue: true },
      { name: 'krbPwdHistoryLength', syntax: 'integer', singleValue: true },
      { name: 'cosPriority', syntax: 'integer', singleValue: true, indexed: true },
    ],
    objectClasses: [
      {
        name: 'krbPwdPolicy',
        kind: 'structural',
        sup: 'top',
        must: ['cn'],
        may: [...Object.values(POLICY_ATTRIBUTES), PRIORITY_ATTRIBUTE, 'description'],
      },
    ],
  },
  defaults: ({ baseDn }) => [{ dn: globalPwpolicyDn(baseDn), attrs: { objectClass: ['top', 'krbPwdPolicy'], cn: [GLOBAL_PWPOLICY], ...policyAttributes(DEFAULT_POLICY) } }],
  rdnAttr: 'cn',
  objectClasses: ['top', 'krbPwdPolicy'],
  pkey: 'group',
  defaultPkey: GLOBAL_PWPOLICY,
  noRename: true,
  managePrivilege: 'Password Policy Administrators',
  params: {
    group: { attr: 'cn', type: 'str', label: 'Group', doc: `Group the policy is for (${GLOBAL_PWPOLICY}: the global policy)`, pattern: NAME, patternError: 'may only include letters, numbers, _, -, . and spaces' },
    maxlife: figure('krbMaxPwdLife', 'Max lifetime (days)', 'Days a password its user sets stays valid (0: it never expires)', 20000),
    minlife: figure('krbMinPwdLife', 'Min lifetime (hours)', 'Hours before a user may change their password again (0: any time)', 5000),
    history: figure('krbPwdHistoryLength', 'History size', 'Number of last passwords (the current one included) a new one may not repeat (0: none)', 64),
    minclasses: figure('krbPwdMinDiffChars', 'Character classes', 'Minimum number of character classes: upper-case, lower-case, digits, special, other (0 to 5)', 5),
    minlength: figure('krbPwdMinLength', 'Min length', 'Minimum number of characters', 256),
    priority: { attr: PRIORITY_ATTRIBUTE, type: 'int', label: 'Priority', doc: "Priority of a group's policy (lower number wins; unique)", minValue: 0, maxValue: 2_147_483_647 },
    maxfail: figure('krbPwdMaxFailure', 'Max failures', 'Failed logins that lock the account (0: no lockout)', 1_000_000),
    failinterval: figure('krbPwdFailureCountInterval', 'Failure reset interval', 'Seconds after which failed logins count from one again (0: never)', 100_000_000),
    lockouttime: figure('krbPwdLockoutDuration', 'Lockout duration', 'Seconds an account stays locked (0: until an administrator unlocks it)', 100_000_000),
  },
  defaultAttributes: ['group', 'maxlife', 'minlife', 'history', 'minclasses', 'minlength', 'priority', 'maxfail', 'failinterval', 'lockouttime'],
  searchAttributes: ['group'],
  hooks: {
    async preAdd(ctx, attrs: Attributes, options: Inputs, pkey) {
      if (pkey.toLowerCase() === GLOBAL_PWPOLICY) throw publicError('ValidationError', { name: 'group', error: `${GLOBAL_PWPOLICY} is the global policy, which every realm has: change it with pwpolicy-mod` });
      if (!(await ctx.dir.get(`cn=${escapeRdnValue(pkey)},${containers(ctx.dir.baseDn).groups}`, ['1.1']))) throw publicError('NotFound', { reason: `${pkey}: group not found` });
      if (attrs[PRIORITY_ATTRIBUTE] === undefined) throw publicError('RequirementError', { name: 'priority' });
      for (const attr of Object.keys(SCALED) as Array<keyof typeof SCALED>) if (options[SCALED_OPTION[attr]] !== undefined && attrs[attr]) attrs[attr] = toSeconds(attr, attrs[attr]);
      // the figures it is not given are the global policy's now, as the policy shows them
      const global = policyAttributes(policyOf(GLOBAL_PWPOLICY, (await ctx.dir.get(globalPwpolicyDn(ctx.dir.baseDn)))?.attrs));
      for (const [attr, values] of Object.entries(global)) if (attrs[attr] === undefined) attrs[attr] = values;
      await checkPriorityFree(ctx, attrs[PRIORITY_ATTRIBUTE]?.[0], pkey);
    },
    async preMod(ctx, mods: Modification[], options: Inputs, entry) {
      const global = (entry.attrs.cn?.[0] ?? '').toLowerCase() === GLOBAL_PWPOLICY;
      for (const m of mods) {
        if (m.op === 'delete' || m.values.length === 0) continue;
        const attr = Object.keys(SCALED).find((a) => a.toLowerCase() === m.attr.toLowerCase()) as keyof typeof SCALED | undefined;
        if (attr && options[SCALED_OPTION[attr]] !== undefined) m.values = toSeconds(attr, m.values);
        if (m.attr.toLowerCase() === PRIORITY_ATTRIBUTE.toLowerCase()) {
          if (global) throw publicError('ValidationError', { name: 'priority', error: 'the global policy has no priority' });
          await checkPriorityFree(ctx, m.values[0], entry.attrs.cn?.[0] ?? '');
        }
      }
    },
    async complete(_ctx, entry) {
      if (entry.before && entry.changes(PRIORITY_ATTRIBUTE) && entry.values(PRIORITY_ATTRIBUTE).length === 0 && (entry.before.attrs.cn?.[0] ?? '').toLowerCase() !== GLOBAL_PWPOLICY) {
        throw publicError('RequirementError', { name: 'priority' });
      }
    },
    async preDel(_ctx, entry) {
      if ((entry.attrs.cn?.[0] ?? '').toLowerCase() === GLOBAL_PWPOLICY) throw publicError('ValidationError', { name: 'group', error: 'cannot delete the global password policy' });
    },
    async postRead(_ctx, _entry, out, options) {
      if (options.raw === true) return;
      for (const [attr, factor] of Object.entries(SCALED)) {
        const key = attr.toLowerCase();
        const v = out[key];
        if (Array.isArray(v)) out[key] = v.map((x) => Math.floor(Number(x) / factor));
      }
    },
  },
});
