/**
 * IdP references (docs/conventions.md: labels, provider templates): the OAuth 2.0 / OIDC
 * identity providers users can be linked to. Declared once; idp-add/del/find/
 * mod/show are derived. What is special lives in the `complete` hook, which
 * sees every add and mod whatever options made it: provider templates, the
 * endpoints a login needs, and OIDC discovery (OpenID Connect Discovery 1.0
 * §4, through the server's IdP client) for a reference given by its issuer.
 * The client secret is write-only: stored encrypted by the directory and
 * never output. A reference set to private_key_jwt (docs/client-auth.md)
 * gets a key pair made here, its private key sealed like the secret and
 * never output, its public key set shown (and published by the server at
 * the URL shown); --rotate-client-key starts a rollover.
 */
import type { CallContext, OidcProviderMetadata } from '../framework/command.js';
import { publicError } from '../framework/errors.js';
import { containers, KNOWN_CONTAINERS } from '../directory/layout.js';
import { escapeFilterValue as filterEscape } from '../directory/filter.js';
import { dnOf, REFERENCED, withArticle } from '../framework/crud.js';
import { defineObject, type PendingEntry } from '../framework/object.js';
import { cliName, httpsUrlProblem, URL_MAX_LENGTH } from '../framework/params.js';
import { idpCheckCommand } from './idp-check.js';
import { CLIENT_KEYS_MAX, clientAuthMethods, clientJwksPath, clientKeyAlgorithms, newClientKey, publicKeySet, readClientKeys, writeClientKeys, type ClientKeyAlgorithm } from './idp-client-key.js';

/** RFC 6749 §3.3 scope-token characters, separated by single spaces. */
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/;
/** RFC 6749 Appendix A VSCHAR */
const VSCHAR = /^[\x20-\x7e]+$/;

export const providerNames = ['keycloak', 'github', 'google', 'microsoft', 'okta', 'oidc'] as const;
export type ProviderName = (typeof providerNames)[number];

interface TemplateInput {
  org: string;
  base: string;
}

interface Endpoints {
  auth: string;
  devAuth: string;
  token: string;
  userinfo: string;
  keys?: string;
  issuer?: string;
  scope: string;
  userIdAttr: string;
}

interface Template {
  needs: ReadonlyArray<'organization' | 'base_url'>;
  build(i: TemplateInput): Endpoints;
  /** Why these parameters cannot make a safe reference (the parameter and the reason), or null. */
  refuse?(i: TemplateInput): { name: 'organization' | 'base_url'; error: string } | null;
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The tenant of personal Microsoft accounts, in the issuer of the `consumers` endpoint's ID tokens. */
const MICROSOFT_ACCOUNTS_TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';
/** Entra ID's endpoints that sign in users of any tenant: the ID tokens' issuer names each user's own tenant. */
const ENTRA_MULTI_TENANT = new Set(['common', 'organizations']);

type TemplateName = Exclude<ProviderName, 'oidc'>;

/** Provider templates: endpoints as the providers document them (docs/conventions.md). */
export const templates: Record<TemplateName, Template> = {
  keycloak: {
    needs: ['organization', 'base_url'],
    build: ({ org, base }) => {
      const issuer = `https://${base}/realms/${org}`;
      const p = `${issuer}/protocol/openid-connect/`;
      return {
        auth: `${p}auth`,
        devAuth: `${p}auth/device`,
        token: `${p}token`,
        userinfo: `${p}userinfo`,
        keys: `${p}certs`,
        issuer,
        scope: 'openid email',
        userIdAttr: 'email',
      };
    },
  },
  github: {
    needs: [],
    build: () => ({
      auth: 'https://github.com/login/oauth/authorize',
      devAuth: 'https://github.com/login/device/code',
      token: 'https://github.com/login/oauth/access_token',
      userinfo: 'https://api.github.com/user',
      scope: 'user',
      userIdAttr: 'login',
    }),
  },
  google: {
    needs: [],
    build: () => ({
      auth: 'https://accounts.google.com/o/oauth2/auth',
      devAuth: 'https://oauth2.googleapis.com/device/code',
      token: 'https://oauth2.googleapis.com/token',
      userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
      keys: 'https://www.googleapis.com/oauth2/v3/certs',
      issuer: 'https://accounts.google.com',
      scope: 'openid email',
      userIdAttr: 'email',
    }),
  },
  microsoft: {
    needs: ['organization'],
    refuse: ({ org }) =>
      ENTRA_MULTI_TENANT.has(decodeURIComponent(org).toLowerCase())
        ? {
            name: 'organization',
            error: `"${decodeURIComponent(org)}" is Entra ID's multi-tenant endpoint: users of every Entra tenant sign in there, and their ID tokens could not be told from your users' (a name or email claim is theirs to set). Give your tenant ID (a GUID) or one of its domain names`,
          }
        : null,
    build: ({ org }) => {
      const p = `https://login.microsoftonline.com/${org}/oauth2/v2.0/`;
      return {
        auth: `${p}authorize`,
        devAuth: `${p}devicecode`,
        token: `${p}token`,
        userinfo: 'https://graph.microsoft.com/oidc/userinfo',
        keys: `https://login.microsoftonline.com/${org}/discovery/v2.0/keys`,
        // Entra ID puts the tenant GUID in `iss`; a tenant given by domain name cannot predict it
        // (its endpoints still sign in only that tenant's users and guests); `consumers` is one tenant
        ...(GUID.test(org) ? { issuer: `https://login.microsoftonline.com/${org}/v2.0` } : {}),
        ...(org.toLowerCase() === 'consumers' ? { issuer: `https://login.microsoftonline.com/${MICROSOFT_ACCOUNTS_TENANT}/v2.0` } : {}),
        scope: 'openid email',
        userIdAttr: 'email',
      };
    },
  },
  okta: {
    needs: ['organization', 'base_url'],
    build: ({ org, base }) => {
      const issuer = `https://${base}/oauth2/${org}`;
      return {
        auth: `${issuer}/v1/authorize`,
        devAuth: `${issuer}/v1/device/authorize`,
        token: `${issuer}/v1/token`,
        userinfo: `${issuer}/v1/userinfo`,
        keys: `${issuer}/v1/keys`,
        issuer,
        scope: 'openid email',
        userIdAttr: 'email',
      };
    },
  },
};

/** The endpoint params: option, attribute, what a template builds and what discovery names. */
const endpoints = [
  { option: 'auth_uri', attr: 'dirIdpAuthEndpoint', built: 'auth', discovered: 'authorization_endpoint' },
  { option: 'dev_auth_uri', attr: 'dirIdpDevAuthEndpoint', built: 'devAuth', discovered: 'device_authorization_endpoint' },
  { option: 'token_uri', attr: 'dirIdpTokenEndpoint', built: 'token', discovered: 'token_endpoint' },
  { option: 'userinfo_uri', attr: 'dirIdpUserInfoEndpoint', built: 'userinfo', discovered: 'userinfo_endpoint' },
  { option: 'keys_uri', attr: 'dirIdpKeysEndpoint', built: 'keys', discovered: 'jwks_uri' },
] as const satisfies ReadonlyArray<{ option: string; attr: string; built: keyof Endpoints; discovered: keyof OidcProviderMetadata }>;

const templateParams = { organization: 'dirIdpOrg', base_url: 'dirIdpBaseUrl' } as const;

/** --base-url: host[:port][/path], an optional leading https:// stripped. */
function normalizeBaseUrl(raw: string): string {
  let v = raw.trim();
  if (/^https:\/\//i.test(v)) v = v.slice('https://'.length);
  else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(v)) {
    throw publicError('ValidationError', { name: 'base_url', error: 'must be an https:// URL with a host' });
  }
  v = v.replace(/\/+$/, '');
  const problem = v === '' ? 'must not be empty' : httpsUrlProblem(`https://${v}`);
  if (problem) throw publicError('ValidationError', { name: 'base_url', error: problem });
  if (/[?#]/.test(v)) throw publicError('ValidationError', { name: 'base_url', error: 'must not contain a query or fragment' });
  return v;
}

function buildFrom(template: Template, org: string | undefined, base: string | undefined): Endpoints {
  return template.build(templateInput(org, base));
}

/** A template's input: the organization as it goes into a URL path, the base URL as stored. */
function templateInput(org: string | undefined, base: string | undefined): TemplateInput {
  return { org: org === undefined ? '' : encodeURIComponent(org), base: base ?? '' };
}

/**
 * A template-built reference (docs/conventions.md, Provider templates): its parameters are the
 * ones the template needs, and its endpoints are the ones the template
 * builds from them, on add and after every change of a parameter; an
 * endpoint given otherwise is refused. The issuer, scope and user id
 * attribute are the template's unless given.
 */
function applyTemplate(entry: PendingEntry, provider: TemplateName): void {
  const template = templates[provider];
  const rebuilt = entry.before === null || ['dirIdpProvider', ...Object.values(templateParams)].some((a) => entry.changes(a));
  for (const [k, attr] of Object.entries(templateParams) as Array<[keyof typeof templateParams, string]>) {
    const given = entry.values(attr).length > 0;
    if (template.needs.includes(k)) {
      if (!given) throw publicError('RequirementError', { name: k });
    } else if (given) throw publicError('ValidationError', { name: k, error: `is not used by the ${provider} template` });
  }
  const base = entry.values('dirIdpBaseUrl')[0];
  if (base !== undefined) entry.set('dirIdpBaseUrl', [normalizeBaseUrl(base)]);
  const input = templateInput(entry.values('dirIdpOrg')[0], entry.values('dirIdpBaseUrl')[0]);
  const refused = template.refuse?.(input);
  if (refused) throw publicError('ValidationError', refused);
  const built = template.build(input);
  const from = template.needs.length > 0 ? ` and its ${template.needs.map((n) => `--${cliName(n)}`).join(' and ')}` : '';
  for (const e of endpoints) {
    const want = built[e.built];
    if (entry.changes(e.attr) && entry.values(e.attr)[0] !== want) {
      throw publicError('MutuallyExclusiveError', { reason: `the endpoints of ${withArticle(provider)} reference come from its template${from}: --${cliName(e.option)} cannot be set` });
    }
    const problem = want === undefined ? null : httpsUrlProblem(want);
    if (problem) throw publicError('ValidationError', { name: e.option, error: `${problem} (built from the ${provider} template)` });
  }
  for (const e of endpoints) entry.set(e.attr, built[e.built] === undefined ? [] : [built[e.built]!]);
  if (rebuilt && !entry.changes('dirIdpIssuerUrl')) {
    // an issuer the previous parameters built follows the new ones; one given stays
    const before = entry.before?.attrs;
    const previous = before?.dirIdpProvider?.[0] === provider ? buildFrom(template, before.dirIdpOrg?.[0], before.dirIdpBaseUrl?.[0]).issuer : undefined;
    const issuer = entry.values('dirIdpIssuerUrl')[0];
    if (issuer === undefined || issuer === previous) entry.set('dirIdpIssuerUrl', built.issuer === undefined ? [] : [built.issuer]);
  }
  if (entry.before === null) {
    if (entry.values('dirIdpScope').length === 0) entry.set('dirIdpScope', [built.scope]);
    if (entry.values('dirIdpUserIdAttribute').length === 0) entry.set('dirIdpUserIdAttribute', [built.userIdAttr]);
  }
}

/** `<issuer>/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4.1). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/** The issuer's provider metadata; `hint` follows the reason when it fails. */
async function discoverProvider(ctx: CallContext, issuer: string, hint = ''): Promise<OidcProviderMetadata> {
  const url = discoveryUrl(issuer);
  const discover = ctx.registry.services.oidcDiscovery;
  if (!discover) throw publicError('DiscoveryError', { url, reason: `this server has no IdP client${hint}` });
  try {
    return await discover(issuer);
  } catch (e) {
    const message = e instanceof Error ? e.message : 'unknown error';
    throw publicError('DiscoveryError', { url, reason: message.replace(`OIDC discovery at ${issuer}: `, '') + hint });
  }
}

/** The scope a generic reference with an issuer gets when its idp-add gives none. */
export const OIDC_DEFAULT_SCOPE = 'openid';

/**
 * A generic reference needs what a login uses: a token endpoint and a
 * device or authorization endpoint. When this write leaves one to the
 * issuer, discovery runs now and fills every endpoint not given, so what is
 * shown is what logins will use; a failed discovery fails the write. A
 * reference stored with an issuer and no endpoints (before discovery ran
 * at write time) keeps them to discovery at login.
 *
 * A new issuer is another IdP, or the same one moved: an idp-mod that
 * changes the issuer and gives no endpoint leaves every endpoint to it, as
 * idp-add with that issuer would, instead of keeping the old IdP's
 * endpoints beside an issuer whose tokens they never sign. An idp-mod that
 * gives endpoints with the issuer keeps the others (a reference configured
 * by hand for an IdP without discovery).
 *
 * A reference added with an issuer and no scope gets the scope openid:
 * without it an OpenID Connect IdP issues no ID token, and the issuer would
 * check nothing. One without an issuer (plain OAuth) keeps the scope given.
 */
async function completeGeneric(ctx: CallContext, entry: PendingEntry): Promise<void> {
  for (const [k, attr] of Object.entries(templateParams)) {
    if (entry.values(attr).length > 0) throw publicError('ValidationError', { name: k, error: 'is only used with the keycloak, microsoft and okta provider templates' });
  }
  const has = (attr: string) => entry.values(attr).length > 0;
  // an OpenID Connect IdP issues an ID token only for the scope openid (docs/conventions.md, Provider templates)
  if (entry.before === null && has('dirIdpIssuerUrl') && !has('dirIdpScope')) entry.set('dirIdpScope', [OIDC_DEFAULT_SCOPE]);
  const canLogIn = () => has('dirIdpTokenEndpoint') && (has('dirIdpDevAuthEndpoint') || has('dirIdpAuthEndpoint'));
  const newIssuer = entry.before !== null && entry.changes('dirIdpIssuerUrl') && has('dirIdpIssuerUrl') && !endpoints.some((e) => entry.changes(e.attr));
  if (newIssuer) for (const e of endpoints) entry.set(e.attr, []);
  if (canLogIn()) return;
  const issuer = entry.values('dirIdpIssuerUrl')[0];
  if (issuer === undefined) {
    // nothing to log in with and nothing to discover it from: say both ways (RequirementError names one option only)
    if (!['dirIdpAuthEndpoint', 'dirIdpDevAuthEndpoint', 'dirIdpTokenEndpoint'].some(has)) {
      throw publicError('MutuallyExclusiveError', {
        reason: 'an IdP reference without a provider template needs either --issuer-url (its endpoints then come from OIDC discovery) or its endpoints: --auth-uri (or --dev-auth-uri) and --token-uri',
      });
    }
    throw publicError('RequirementError', { name: has('dirIdpDevAuthEndpoint') || has('dirIdpAuthEndpoint') ? 'token_uri' : 'auth_uri' });
  }
  if (!entry.changes('dirIdpIssuerUrl') && !endpoints.some((e) => entry.changes(e.attr))) return;
  const found = await discoverProvider(ctx, issuer, newIssuer ? ': a new issuer takes its endpoints from discovery unless the same idp-mod gives endpoints (--token-uri, --dev-auth-uri, --keys-uri, ...)' : '');
  const url = discoveryUrl(issuer);
  // the document's issuer matched the one given as URLs do (https://idp.example and https://idp.example/ are one);
  // ID tokens carry it as the document writes it, and iss is compared as a string
  if (found.issuer !== issuer && !discoveredUrlProblem(found.issuer)) entry.set('dirIdpIssuerUrl', [found.issuer]);
  for (const e of endpoints) {
    const value = found[e.discovered];
    if (has(e.attr) || value === undefined) continue;
    const problem = discoveredUrlProblem(value);
    if (problem) throw publicError('DiscoveryError', { url, reason: `its ${e.discovered} ${problem}` });
    entry.set(e.attr, [value]);
  }
  if (!has('dirIdpTokenEndpoint')) throw publicError('DiscoveryError', { url, reason: 'it names no token_endpoint' });
  if (!canLogIn()) throw publicError('DiscoveryError', { url, reason: 'it names no device_authorization_endpoint' });
  if (entry.before === null && !has('dirIdpClientAuth')) {
    const method = secretMethodOf(found);
    if (method !== 'client_secret_post') entry.set('dirIdpClientAuth', [method]);
  }
}

/** Why a URL a discovery document names cannot be stored (too long, or not an https:// URL with a host), or null. */
function discoveredUrlProblem(value: string): string | null {
  return value.length > URL_MAX_LENGTH ? `is longer than ${URL_MAX_LENGTH} characters` : httpsUrlProblem(value);
}

/**
 * How a new reference sends its secret when the add does not say: in the
 * form body (client_secret_post, the default, as FreeIPA and SSSD send it)
 * unless the issuer's discovery document lists the methods its token
 * endpoint takes and that list has HTTP Basic (client_secret_basic) but not
 * the body. A document without the list keeps the default (OpenID Connect
 * Discovery 1.0 §3 reads an absent list as Basic alone, but we cannot tell
 * that from an omission): --client-auth sets either, and idp-check's device
 * authorization shows whether the IdP takes the secret as sent.
 */
function secretMethodOf(found: OidcProviderMetadata): 'client_secret_post' | 'client_secret_basic' {
  const methods = found.token_endpoint_auth_methods_supported;
  return Array.isArray(methods) && !methods.includes('client_secret_post') && methods.includes('client_secret_basic') ? 'client_secret_basic' : 'client_secret_post';
}

/**
 * How the reference authenticates to its IdP (docs/client-auth.md). With
 * the secret (the default), an add needs one. With private_key_jwt, a key
 * is made when the reference has none, and a new one on --rotate-client-key
 * or a change of --client-key-alg: it signs from now on, and the keys before
 * it stay (at most CLIENT_KEYS_MAX in all) until the IdP accepts it
 * (kdc/idp-preauth.ts drops them then). Keys are only ever written here and
 * there, sealed; they are not dropped when the reference goes back to the
 * secret, and serve again if it returns to private_key_jwt.
 */
async function completeClientAuth(ctx: CallContext, entry: PendingEntry, rotate: boolean): Promise<void> {
  const jwt = entry.values('dirIdpClientAuth')[0] === 'private_key_jwt';
  if (!jwt) {
    if (entry.values('dirIdpClientSecret').length === 0) {
      // an add needs the secret; so does a reference going back to it from private_key_jwt, unless it kept one
      const back = entry.before !== null && entry.before.attrs.dirIdpClientAuth?.[0] === 'private_key_jwt';
      if (entry.before === null || (back && (await ctx.dir.readSecret(entry.before.dn, 'dirIdpClientSecret')).length === 0)) throw publicError('RequirementError', { name: 'secret' });
    }
    if (rotate) throw publicError('ValidationError', { name: 'rotate_client_key', error: 'is only used with --client-auth=private_key_jwt' });
    if (entry.changes('dirIdpClientKeyAlg') && entry.values('dirIdpClientKeyAlg').length > 0) {
      throw publicError('ValidationError', { name: 'client_key_alg', error: 'is only used with --client-auth=private_key_jwt' });
    }
    return;
  }
  if (entry.values('dirIdpClientKeyAlg').length === 0) entry.set('dirIdpClientKeyAlg', ['ES256']);
  const alg = entry.values('dirIdpClientKeyAlg')[0] as ClientKeyAlgorithm;
  const stored = entry.before === null ? [] : readClientKeys((await ctx.dir.readSecret(entry.before.dn, 'dirIdpClientKey'))[0]);
  const signing = stored[0];
  if (signing && signing.alg === alg && !rotate) return;
  const keys = [await newClientKey(alg), ...stored].slice(0, CLIENT_KEYS_MAX);
  entry.set('dirIdpClientKey', [writeClientKeys(keys)]);
}

export const idpObject = defineObject({
  name: 'idp',
  label: 'IdP references',
  labelSingular: 'IdP reference',
  doc: 'External identity provider (OAuth 2.0 / OpenID Connect) references.',
  container: KNOWN_CONTAINERS.idp,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [
      // IdP references (docs/conventions.md)
      { name: 'dirIdpProvider', syntax: 'string', singleValue: true },
      { name: 'dirIdpOrg', syntax: 'exact', singleValue: true },
      { name: 'dirIdpBaseUrl', syntax: 'exact', singleValue: true },
      { name: 'dirIdpClientId', syntax: 'exact', singleValue: true, indexed: true },
      { name: 'dirIdpClientSecret', syntax: 'secret', singleValue: true },
      // private_key_jwt (docs/client-auth.md): the method, the key algorithm, and the private keys (sealed, never returned)
      { name: 'dirIdpClientAuth', syntax: 'string', singleValue: true },
      { name: 'dirIdpClientKeyAlg', syntax: 'exact', singleValue: true },
      { name: 'dirIdpClientKey', syntax: 'secret', singleValue: true, maxLength: 16384 },
      { name: 'dirIdpAuthEndpoint', syntax: 'exact', singleValue: true, maxLength: 2048 },
      { name: 'dirIdpDevAuthEndpoint', syntax: 'exact', singleValue: true, maxLength: 2048 },
      { name: 'dirIdpTokenEndpoint', syntax: 'exact', singleValue: true, maxLength: 2048 },
      { name: 'dirIdpUserInfoEndpoint', syntax: 'exact', singleValue: true, maxLength: 2048 },
      { name: 'dirIdpKeysEndpoint', syntax: 'exact', singleValue: true, maxLength: 2048 },
      { name: 'dirIdpIssuerUrl', syntax: 'exact', singleValue: true, maxLength: 2048 },
      { name: 'dirIdpScope', syntax: 'exact', singleValue: true },
      { name: 'dirIdpUserIdAttribute', syntax: 'exact', singleValue: true },
    ],
    objectClasses: [
      {
        name: 'dirIdp',
        kind: 'structural',
        sup: 'top',
        must: ['cn', 'dirIdpClientId'],
        may: [
          'description',
          'dirIdpProvider',
          'dirIdpOrg',
          'dirIdpBaseUrl',
          'dirIdpClientSecret',
          'dirIdpClientAuth',
          'dirIdpClientKeyAlg',
          'dirIdpClientKey',
          'dirIdpAuthEndpoint',
          'dirIdpDevAuthEndpoint',
          'dirIdpTokenEndpoint',
          'dirIdpUserInfoEndpoint',
          'dirIdpKeysEndpoint',
          'dirIdpIssuerUrl',
          'dirIdpScope',
          'dirIdpUserIdAttribute',
        ],
      },
    ],
  },
  commands: (idp) => [idpCheckCommand(idp)],
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirIdp'],
  pkey: 'name',
  managePrivilege: 'IdP Administrators',
  params: {
    name: {
      attr: 'cn',
      type: 'str',
      label: 'IdP reference name',
      doc: 'Identity provider reference name',
      // what the message says, nothing more: `idp-add -- -name` names a reference "-name" (only . and .. are not names)
      pattern: /^(?!\.\.?$)[A-Za-z0-9_.-]{1,64}$/,
      patternError: 'may only include letters, numbers, _, - and .',
      maxLength: 64,
    },
    provider: {
      attr: 'dirIdpProvider',
      type: 'enum',
      values: providerNames,
      label: 'Provider',
      doc: 'Choose a pre-defined template to use',
      noUpdate: true,
      noSearch: true,
    },
    client_id: {
      attr: 'dirIdpClientId',
      type: 'str',
      label: 'Client identifier',
      doc: 'OAuth 2.0 client identifier',
      required: true,
      pattern: VSCHAR,
      patternError: 'must be printable ASCII',
    },
    auth_uri: { attr: 'dirIdpAuthEndpoint', type: 'url', label: 'Authorization URI', doc: 'OAuth 2.0 authorization endpoint' },
    dev_auth_uri: {
      attr: 'dirIdpDevAuthEndpoint',
      type: 'url',
      label: 'Device authorization URI',
      doc: 'Device authorization endpoint (default: the authorization endpoint)',
    },
    token_uri: { attr: 'dirIdpTokenEndpoint', type: 'url', label: 'Token URI', doc: 'Token endpoint' },
    userinfo_uri: { attr: 'dirIdpUserInfoEndpoint', type: 'url', label: 'User info URI', doc: 'User information endpoint' },
    scope: {
      attr: 'dirIdpScope',
      type: 'str',
      label: 'Scope',
      doc: 'OAuth 2.0 scope, several separated by single spaces (e.g. "openid email profile"; default with --issuer-url and no template: openid)',
      pattern: SCOPE,
      patternError: 'must be scope tokens separated by single spaces',
      maxLength: 1024,
    },
    organization: {
      attr: 'dirIdpOrg',
      type: 'str',
      label: 'Organization',
      doc: 'Organization ID or realm name for IdP provider templates',
      noUpdate: true,
      noSearch: true,
    },
    base_url: {
      attr: 'dirIdpBaseUrl',
      type: 'str',
      label: 'Base URL',
      doc: 'Base URL for IdP provider templates',
      noUpdate: true,
      noSearch: true,
      maxLength: 2048,
    },
    idp_user_id: {
      attr: 'dirIdpUserIdAttribute',
      type: 'str',
      label: 'IdP user ID attribute',
      doc: 'Attribute of the ID token or UserInfo data that identifies the user (default: sub)',
      pattern: /^[\x21-\x7e]+$/,
      patternError: 'must be printable ASCII without spaces',
    },
    issuer_url: { attr: 'dirIdpIssuerUrl', type: 'url', label: 'Issuer URL', doc: 'OIDC issuer; must equal the iss claim of ID tokens' },
    keys_uri: { attr: 'dirIdpKeysEndpoint', type: 'url', label: 'JWKS endpoint', doc: 'JWKS endpoint (ID-token signing keys)' },
    secret: {
      attr: 'dirIdpClientSecret',
      type: 'password',
      label: 'Secret',
      doc: 'OAuth 2.0 client secret (prompted for when given without a value; never displayed)',
      secret: true,
      noSearch: true,
    },
    client_auth: {
      attr: 'dirIdpClientAuth',
      type: 'enum',
      values: clientAuthMethods,
      label: 'Client authentication',
      doc: 'How the server authenticates to the IdP: client_secret_post (the secret in the request body; default), client_secret_basic (the secret in an HTTP Basic header; chosen on add when the issuer takes only that) or private_key_jwt (a signed assertion made with a key pair the server generates)',
      noSearch: true,
    },
    client_key_alg: {
      attr: 'dirIdpClientKeyAlg',
      type: 'enum',
      values: clientKeyAlgorithms,
      label: 'Client key algorithm',
      doc: 'Signing algorithm of the client key for private_key_jwt: ES256 (default) or RS256; a change makes a new key, as --rotate-client-key does',
      noSearch: true,
    },
  },
  extraOptions: {
    mod: {
      rotate_client_key: {
        type: 'bool',
        flag: true,
        label: 'Rotate client key',
        doc: 'Make a new client key for private_key_jwt; the old one stays published until the IdP has accepted the new one',
      },
    },
  },
  computed: {
    client_jwks_url: { label: 'Client JWKS URL', default: true },
    client_jwks: { label: 'Client JWKS', default: true },
  },
  defaultAttributes: [
    'name',
    'provider',
    'client_id',
    'auth_uri',
    'dev_auth_uri',
    'token_uri',
    'userinfo_uri',
    'scope',
    'organization',
    'base_url',
    'idp_user_id',
    'issuer_url',
    'keys_uri',
    'client_auth',
    'client_key_alg',
  ],
  searchAttributes: ['name', 'client_id', 'auth_uri', 'token_uri', 'issuer_url', 'scope'],
  hooks: {
    async preDel(ctx, entry) {
      // users linked to the reference keep it (the store refuses the delete): the specification's
      // sentence, which scripts look for, then which users and what to do
      const linked = await ctx.dir.search({ base: containers(ctx.dir.baseDn).users, scope: 'one', filter: `(dirIdpConfigLink=${filterEscape(entry.dn)})`, attrs: ['uid'], sizeLimit: LINKED_NAMED + 1 });
      if (linked.entries.length === 0) return;
      const names = linked.entries.slice(0, LINKED_NAMED).map((u) => u.attrs.uid?.[0] ?? '?').sort();
      const more = linked.entries.length > LINKED_NAMED ? ' and more' : '';
      const who = `${names.length === 1 && !more ? 'user' : 'users'} ${names.join(', ')}${more}`;
      throw publicError('ReferencedEntry', { reason: `${REFERENCED}: IdP reference "${entry.attrs.cn?.[0] ?? ''}" is still linked to ${who}; change that with user-mod first` });
    },
    async complete(ctx, entry, options) {
      // the generic provider is the absence of a template (docs/conventions.md, Provider templates)
      if (entry.values('dirIdpProvider')[0] === 'oidc') entry.set('dirIdpProvider', []);
      const provider = entry.values('dirIdpProvider')[0];
      if (provider !== undefined && Object.hasOwn(templates, provider)) applyTemplate(entry, provider as TemplateName);
      else await completeGeneric(ctx, entry);
      await completeClientAuth(ctx, entry, options.rotate_client_key === true);
    },
    async postRead(ctx, entry, out) {
      if (entry.attrs.dirIdpClientAuth?.[0] !== 'private_key_jwt') return;
      const [stored] = await ctx.dir.readSecret(entry.dn, 'dirIdpClientKey');
      const name = entry.attrs.cn?.[0] ?? '';
      out.client_jwks_url = [`${ctx.server.origin ?? ''}${clientJwksPath(name)}`];
      out.client_jwks = [JSON.stringify(publicKeySet(stored))];
    },
  },
});

/** Linked users idp-del names at most when it refuses. */
const LINKED_NAMED = 5;

/**
 * The public key set a reference using private_key_jwt publishes
 * (docs/client-auth.md, served unauthenticated by rpc/server.ts at
 * clientJwksPath); null when there is no such reference or it does not use
 * private_key_jwt.
 */
export async function publishedClientJwks(dir: CallContext['dir'], name: string): Promise<{ keys: object[] } | null> {
  if (!idpObject.params.name.pattern.test(name)) return null;
  const dn = dnOf(idpObject, dir.baseDn, name);
  const entry = await dir.get(dn);
  if (!entry || entry.attrs.dirIdpClientAuth?.[0] !== 'private_key_jwt') return null;
  const [stored] = await dir.readSecret(dn, 'dirIdpClientKey');
  return publicKeySet(stored);
}
