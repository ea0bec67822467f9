/**
 * IdP references (specification §2.1, §2.2, §4.1–4.5): the OAuth 2.0 / OIDC
 * identity providers users can be linked to. Declared once; idp-add/del/find/
 * mod/show are derived. What is special lives in the preAdd hook: provider
 * templates and the endpoint rules. The client secret is write-only: stored
 * encrypted by the directory and never output.
 */
import type { Attributes } from '../directory/types.js';
import type { CallContext, Inputs } from '../framework/command.js';
import { publicError } from '../framework/errors.js';
import { defineObject } from '../framework/object.js';
import { httpsUrlProblem } from '../framework/params.js';

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
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Provider templates: endpoints as the providers document them (PRODUCT-NOTES.md). */
export const templates: Record<Exclude<ProviderName, 'oidc'>, Template> = {
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
    build: ({ org }) => {
      const p = `https://login.microsoftonline.com/${org}/oauth2/v2.0/`;
      return {
        auth: `${p}authorize`,
        devAuth: `${p}devicecode`,
        token: `${p}token`,
        userinfo: 'https://graph.microsoft.com/oidc/userinfo',
        keys: `https://login.microsoftonline.com/${org}/discovery/v2.0/keys`,
        // Entra ID puts the tenant GUID in `iss`; a tenant given by domain name cannot predict it.
        ...(GUID.test(org) ? { issuer: `https://login.microsoftonline.com/${org}/v2.0` } : {}),
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

const endpointOptions = ['auth_uri', 'dev_auth_uri', 'token_uri', 'userinfo_uri', 'keys_uri'] as const;

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

async function applyTemplate(_ctx: CallContext, attrs: Attributes, options: Inputs): Promise<void> {
  const provider = options.provider as ProviderName | undefined;
  const explicit = endpointOptions.filter((k) => options[k] !== undefined);
  if (provider === undefined || provider === 'oidc') {
    for (const k of ['organization', 'base_url'] as const) {
      if (options[k] !== undefined) {
        throw publicError('ValidationError', { name: k, error: 'is only used with the keycloak, microsoft and okta provider templates' });
      }
    }
    if (options.issuer_url === undefined) {
      for (const k of ['auth_uri', 'token_uri'] as const) {
        if (options[k] === undefined) throw publicError('RequirementError', { name: k });
      }
    }
    return;
  }
  if (explicit.length > 0) {
    throw publicError('MutuallyExclusiveError', {
      reason: `cannot specify both individual endpoints (--${explicit[0]!.replace(/_/g, '-')}) and IdP provider`,
    });
  }
  const template = templates[provider];
  for (const k of ['organization', 'base_url'] as const) {
    if (template.needs.includes(k)) {
      if (options[k] === undefined) throw publicError('RequirementError', { name: k });
    } else if (options[k] !== undefined) {
      throw publicError('ValidationError', { name: k, error: `is not used by the ${provider} template` });
    }
  }
  const base = options.base_url === undefined ? '' : normalizeBaseUrl(String(options.base_url));
  if (base) attrs.dirIdpBaseUrl = [base];
  const org = options.organization === undefined ? '' : encodeURIComponent(String(options.organization));
  const e = template.build({ org, base });
  const set = (attr: string, value: string | undefined, option: string) => {
    if (value === undefined) return;
    const problem = httpsUrlProblem(value);
    if (problem) throw publicError('ValidationError', { name: option, error: `${problem} (built from the ${provider} template)` });
    attrs[attr] = [value];
  };
  set('dirIdpAuthEndpoint', e.auth, 'auth_uri');
  set('dirIdpDevAuthEndpoint', e.devAuth, 'dev_auth_uri');
  set('dirIdpTokenEndpoint', e.token, 'token_uri');
  set('dirIdpUserInfoEndpoint', e.userinfo, 'userinfo_uri');
  set('dirIdpKeysEndpoint', e.keys, 'keys_uri');
  if (options.issuer_url === undefined) set('dirIdpIssuerUrl', e.issuer, 'issuer_url');
  if (options.scope === undefined) attrs.dirIdpScope = [e.scope];
  if (options.idp_user_id === undefined) attrs.dirIdpUserIdAttribute = [e.userIdAttr];
}

export const idpObject = defineObject({
  name: 'idp',
  label: 'IdP references',
  labelSingular: 'IdP reference',
  doc: 'External identity provider (OAuth 2.0 / OpenID Connect) references.',
  container: 'cn=idp',
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
      pattern: /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/,
      patternError: 'may only include letters, numbers, _, - and . (at most 64 characters)',
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
      doc: 'OAuth 2.0 scope, several separated by single spaces (e.g. "openid email profile")',
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
      required: true,
      noSearch: true,
    },
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
  ],
  searchAttributes: ['name', 'client_id', 'auth_uri', 'token_uri', 'issuer_url', 'scope'],
  hooks: {
    async preAdd(ctx, attrs, options) {
      // The template decides base_url/organization storage; drop the raw copies first.
      delete attrs.dirIdpBaseUrl;
      if (options.organization === undefined) delete attrs.dirIdpOrg;
      await applyTemplate(ctx, attrs, options);
    },
  },
});
