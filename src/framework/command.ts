/**
 * Commands: the unit the API exposes. A command has positional arguments and
 * named options (both declared as params), an access rule, and a run
 * function. CRUD commands are derived from object declarations (crud.ts);
 * other commands (ping, schema, group-add-member...) are declared directly.
 * Input checking happens here, once, for every transport.
 */
import type { Attributes, Directory, Entry, Modification, SchemaDefinition } from '../directory/types.js';
import { publicError, PublicError } from './errors.js';
import { convertParam, type ParamDef, type ParamValue } from './params.js';
import type { Logger } from '../log/logger.js';

/** Who is calling. */
export interface Principal {
  /** Kerberos-style principal name, e.g. admin@EXAMPLE.TEST */
  name: string;
  /** directory entry of the user or service */
  dn: string;
  /** login / service name */
  uid: string;
  /** how it authenticated, when a Kerberos ticket said so: the ticket's authentication indicators (`idp`, `hardened`...) */
  authIndicators?: string[];
}

export interface ServerInfo {
  version: string;
  apiVersion: string;
  realm: string;
  domain: string;
  /** the HTTPS API's origin, `https://host[:port]`, once the server listens */
  origin?: string;
  /** default search limits (realm policy) */
  searchSizeLimit: number;
  searchTimeLimit: number;
}

/**
 * An OpenID Provider's metadata (OpenID Connect Discovery 1.0 §3), the
 * fields IdP references use.
 */
export interface OidcProviderMetadata {
  issuer: string;
  authorization_endpoint?: string;
  device_authorization_endpoint?: string;
  token_endpoint?: string;
  userinfo_endpoint?: string;
  jwks_uri?: string;
  /** how the token endpoint takes client credentials (OpenID Connect Discovery 1.0 §3; absent: client_secret_basic) */
  token_endpoint_auth_methods_supported?: string[];
}

/** An IdP reference as its check needs it (objects/idp-check.ts): its name, its stored attributes and its client secret, opened. */
export interface IdpCheckTarget {
  name: string;
  attrs: Readonly<Record<string, readonly string[] | undefined>>;
  clientSecret?: string;
  /** the sealed client keys, opened (private_key_jwt) */
  clientKeys?: string;
}

/** The outcome of one check of a `checks` command (docs/conventions.md, Output). */
export type CheckStatus = 'PASS' | 'FAIL' | 'SKIP';

/** One line of a `checks` command's result: what was checked, its outcome, and why in plain words. */
export interface CheckLine {
  check: string;
  status: CheckStatus;
  message: string;
}

/** One server of the realm as a joining host needs it: its name and the ports it answers on. */
export interface EnrolmentServer {
  hostname: string;
  ports: { kdc: number; kpasswd: number; https: number; ldap: number; ldaps: number };
}

/** What a host that joins the realm needs besides its keytab (objects/host-enroll.ts). */
export interface EnrolmentInfo {
  /** the realm's dirid servers, the answering one first */
  servers: EnrolmentServer[];
  /** the realm CA's certificate (PEM), which the servers' certificates chain to */
  caPem: string;
}

/**
 * What commands reach beyond the directory. The server wires these in when
 * it builds the registry: objects/ may not import the clients themselves.
 */
export interface Services {
  /**
   * OIDC discovery (OpenID Connect Discovery 1.0 §4) for an issuer URL; its
   * errors carry messages fit to show the caller.
   */
  oidcDiscovery?(issuerUrl: string): Promise<OidcProviderMetadata>;
  /**
   * Checks an IdP reference against its IdP (idp-check): discovery, each
   * endpoint, the signing keys and a device authorization with the
   * reference's client credentials. Never throws for what it finds: each
   * problem is a FAIL line whose message never carries the secret.
   */
  idpCheck?(target: IdpCheckTarget): Promise<CheckLine[]>;
  /**
   * The principals the realm's dirid servers run on (`host/`, `HTTP/` and
   * `ldap/` of each server's name, with the realm), each mapped to the
   * host name of the server that needs it; the server knows its realm's
   * servers (docs/servers.md). Without it no principal counts as a server's.
   */
  serverPrincipals?(): Promise<ReadonlyMap<string, string>>;
  /** The realm's servers and CA for a host that joins (host-enroll); the server knows both. */
  enrolment?(): Promise<EnrolmentInfo>;
}

export interface CallContext {
  dir: Directory;
  principal: Principal | null;
  server: ServerInfo;
  /** per-call cache for authorization lookups */
  cache: Map<string, unknown>;
  /** the registry, for commands that describe the API (schema) */
  registry: CommandRegistry;
  /**
   * Set by a transport whose own request proved the caller's current
   * password (the password service: an initial ticket; the LDAP service: a
   * bind, or Password Modify's old password): passwd of one's own password
   * then asks for no current_password. The API never sets it.
   */
  ownPasswordProven?: boolean;
  /** the transport's logger for this call: each directory write the command commits is logged on it (dispatch.ts, audit.ts) */
  log?: Logger;
}

/** An argument or option of a command. */
export interface OptionDef extends ParamDef {
  /** flags take no value on the CLI */
  readonly flag?: boolean;
  /** default applied when absent */
  readonly default?: ParamValue;
  /** the CLI prompts (twice, without echo) when given without a value */
  readonly prompt?: boolean;
  /** an empty value (`--email=`, "" or [] on the wire) removes what the option sets: a mod's options, as in FreeIPA */
  readonly clearable?: boolean;
}

export interface ArgDef extends OptionDef {
  readonly name: string;
  /** more than one value (e.g. X-del NAME...) */
  readonly multivalue?: boolean;
}

export type Access =
  /** anyone, authenticated or not (login endpoints only) */
  | 'anonymous'
  /** any authenticated principal */
  | 'authenticated'
  /** writes to an object: admins or holders of the object's privilege */
  | { manage: string };

/**
 * How a client prints a result. `checks`: the result is a list of
 * CheckLine, printed one line each before the summary; the client exits
 * non-zero when any is FAIL. `verdict`: the value is a yes or a no
 * (hbactest: whether access is granted) and the result lists of names
 * (the rules that matched, those that did not), printed after the summary;
 * the client exits 1 on a no, so a script can test it.
 */
export type OutputKind = 'entry' | 'entries' | 'summary' | 'deleted' | 'custom' | 'checks' | 'verdict';

export interface CommandResult {
  result: unknown;
  value?: unknown;
  summary: string | null;
  count?: number;
  truncated?: boolean;
  /** membership commands: how many were added/removed */
  completed?: number;
  /** membership commands: what failed, per attribute and kind, as [name, reason] */
  failed?: Record<string, Record<string, Array<[string, string]>>>;
}

export type Inputs = Record<string, ParamValue | undefined>;

export interface Command {
  /** wire name, `idp_add` */
  readonly name: string;
  readonly doc: string;
  /** object this command acts on, for labels in output */
  readonly object?: string;
  readonly args: readonly ArgDef[];
  readonly options: Readonly<Record<string, OptionDef>>;
  readonly access: Access;
  readonly output: OutputKind;
  /**
   * For a command that is a login of its own (host_enroll, which checks a
   * one-time password or an administrator): the event and fields of the
   * line the transport logs for each call beside its login lines (rpc/server.ts:
   * `enroll host=web.example.test method=password outcome=ok`), from the
   * raw inputs, before they are checked; never a secret.
   */
  readonly loginEvent?: (args: readonly unknown[], options: Readonly<Record<string, unknown>>) => { event: string; fields: Record<string, string> };
  run(ctx: CallContext, args: ParamValue[], options: Inputs): Promise<CommandResult>;
}

/** Options every command accepts and ignores (sent by clients). */
const ALWAYS_ACCEPTED = new Set(['version']);

/** "", [] or [""]: the empty value that clears a clearable option. */
function isEmptyValue(raw: unknown): boolean {
  if (typeof raw === 'string') return raw.trim() === '';
  return Array.isArray(raw) && raw.every((x) => typeof x === 'string' && x.trim() === '');
}

/**
 * Validates raw wire arguments and options against the declaration:
 * unknown options, argument count, required values, types.
 */
export function checkInputs(cmd: Command, rawArgs: unknown[], rawOptions: Record<string, unknown>): { args: ParamValue[]; options: Inputs } {
  const args: ParamValue[] = [];
  const declared = cmd.args;
  const lastMulti = declared.length > 0 && declared[declared.length - 1]!.multivalue;
  if (rawArgs.length > declared.length && !lastMulti) {
    throw publicError('ArgumentCountError', { command: cmd.name, expected: declared.length, given: rawArgs.length });
  }
  declared.forEach((a, i) => {
    // a trailing multi-valued argument may come as separate values or as one list
    let raw: unknown = a.multivalue && i === declared.length - 1 ? rawArgs.slice(i).flatMap((x) => (Array.isArray(x) ? x : [x])) : rawArgs[i];
    if (Array.isArray(raw) && raw.length === 0) raw = undefined;
    if (Array.isArray(raw) && !a.multivalue && raw.length === 1) raw = raw[0];
    if (raw === undefined || raw === null) {
      if (a.required) throw publicError('RequirementError', { name: a.name });
      return;
    }
    args[i] = convertParam(a.name, a, raw);
  });
  const options: Inputs = {};
  for (const [key, raw] of Object.entries(rawOptions)) {
    if (ALWAYS_ACCEPTED.has(key)) continue;
    const def = Object.prototype.hasOwnProperty.call(cmd.options, key) ? cmd.options[key] : undefined;
    if (!def) throw publicError('OptionError', { option: key });
    if (raw === undefined || raw === null) continue;
    if (def.clearable && isEmptyValue(raw)) {
      options[key] = [];
      continue;
    }
    options[key] = convertParam(key, def, raw);
  }
  for (const [key, def] of Object.entries(cmd.options)) {
    if (options[key] === undefined && def.default !== undefined) options[key] = def.default;
    if (options[key] === undefined && def.required) throw publicError('RequirementError', { name: key });
  }
  return { args, options };
}

// ---- declared objects (object.ts declares them; crud.ts derives their commands) ----

export type CrudMethod = 'add' | 'del' | 'find' | 'mod' | 'show';

/** Extra output fields that are computed, not stored (e.g. member_user). */
export interface ComputedOutput {
  readonly label: string;
  /** shown without --all */
  readonly default?: boolean;
}

/**
 * The entry an add or a mod is about to store, complete: hooks check it
 * and derive attributes from it, whichever options produced it.
 */
export interface PendingEntry {
  /** the entry's DN: the one an add creates, or the modified entry's (before a rename) */
  readonly dn: string;
  /** the stored entry before a mod; null on add */
  readonly before: Entry | null;
  /** values of `attr` after the write ([] when none); secrets only when this write sets them */
  values(attr: string): string[];
  /** whether this write touches `attr` (on add: whether it stores it) */
  changes(attr: string): boolean;
  /** makes the write leave `attr` with `values` ([] removes it) */
  set(attr: string, values: string[]): void;
}

export interface Hooks {
  /** adjust attributes before an add; may throw public errors */
  preAdd?(ctx: CallContext, attrs: Attributes, options: Inputs, pkey: string): Promise<void>;
  /** adjust modifications before a mod; `entry` is the current entry */
  preMod?(ctx: CallContext, mods: Modification[], options: Inputs, entry: Entry): Promise<void>;
  /**
   * Runs on the complete entry after every add and mod, once the required
   * params are known to be present: derives what follows from the entry and
   * throws public errors for entries that would not be usable.
   */
  complete?(ctx: CallContext, entry: PendingEntry, options: Inputs): Promise<void>;
  /** checks before a delete */
  preDel?(ctx: CallContext, entry: Entry): Promise<void>;
  /** the DNs of entries deleted with this one, in the same transaction (a host's services); runs after preDel */
  alsoDelete?(ctx: CallContext, entry: Entry): Promise<string[]>;
  /** add computed fields to an output entry */
  postRead?(ctx: CallContext, entry: Entry, out: Record<string, unknown>, options: Inputs): Promise<void>;
}

/** Where a realm is: what a declared place is relative to. */
export interface RealmPlace {
  readonly baseDn: string;
  readonly realm: string;
}

/** An entry every realm has: a declared object's built-in entry (a privilege, a policy's defaults). */
export interface DefaultEntry {
  readonly dn: string;
  readonly attrs: Attributes;
}

/**
 * Whom the users of an object's entries act as (a sudo rule's run-as users
 * and groups): a delegate may write such an entry only when none of them
 * holds more than the delegate (access.ts, "A delegate reaches no one who
 * holds more").
 */
export interface ActsAs {
  /** attributes whose DN values name users or groups acted as; `members`: a group there stands for each of its members too */
  readonly attrs: ReadonlyArray<{ readonly attr: string; readonly members?: boolean }>;
  /** values that let them act as anyone (a run-as category `all`), with the words for it (`any user`) */
  readonly anyone?: ReadonlyArray<{ readonly attr: string; readonly value: string; readonly what: string }>;
}

/** Who may read an object's entries under the read rule (access.ts): any authenticated principal. */
export type ReadAudience = 'authenticated';

/** What a view's entries are computed from: the directory as it is, and the registry's objects. */
export interface ViewSource {
  readonly dir: Directory;
  readonly registry: CommandRegistry;
}

/**
 * Entries the LDAP service shows beside the directory's, computed from it
 * and never stored (as FreeIPA's compat tree shows its sudo rules as
 * sudoRole entries): a subtree below `root` that clients read and search
 * like any other, kept as the directory changes (framework/view.ts).
 */
export interface ViewDef {
  /** the DN of its root entry, relative to the base DN (`ou=sudoers`): an entry the directory does not hold */
  readonly root: string;
  /** the root entry's attributes (objectClass and its RDN's value) */
  readonly rootAttrs: Attributes;
  /** who may read it (access.ts, the read rule); absent: no one */
  readonly readBy?: ReadAudience;
  /** its entries below the root, as the directory holds things now (each DN below `root`,BASE) */
  build(src: ViewSource): Promise<Entry[]>;
  /**
   * the subtrees its entries are computed from (Directory.subtreeGeneration):
   * the entries are built again only after a write within one of them;
   * absent, after any write
   */
  watches?(src: ViewSource): string[];
}

export interface ObjectDef {
  /** object name: `idp`, `user`; commands are `<name>_add` ... */
  readonly name: string;
  /** plural label: `IdP references` */
  readonly label: string;
  /** singular label: `IdP reference` */
  readonly labelSingular: string;
  /**
   * Where its entries live (framework/place.ts): the container, relative to
   * the base DN (`cn=users,cn=accounts`; one of directory/layout.ts's
   * KNOWN_CONTAINERS when code below objects/ names it too), which the
   * realm's tree holds; or, for a one-of-a-kind object (a realm-wide
   * policy), `singleton`, the DN of its one entry, which show and mod act on
   * without a name. One of the two.
   */
  readonly container?: string;
  readonly singleton?: (at: RealmPlace) => string;
  /** who may read its entries through the API and LDAP (access.ts, the read rule); absent: no one */
  readonly readBy?: ReadAudience;
  /** the attribute types and object classes it adds to the realm's schema (objects/index.ts realmSchema) */
  readonly schema?: SchemaDefinition;
  /** the entries every realm has of it: init adds them, the upgrade at start adds those a realm lacks (server/upgrade.ts) */
  readonly defaults?: (at: RealmPlace) => DefaultEntry[];
  /**
   * The entries a realm starts with, which stay deleted once an
   * administrator deletes them (the allow_all access rule): init adds them
   * after the defaults, and a realm made before them gets them once, from
   * the upgrade step that introduced them (server/upgrade.ts), never again.
   */
  readonly initial?: (at: RealmPlace) => DefaultEntry[];
  /** its commands beside the derived ones (group-add-member, user-unlock), given the object itself */
  readonly commands?: (self: ObjectDef) => readonly Command[];
  /** RDN attribute: `cn`, `uid` */
  readonly rdnAttr: string;
  /** object classes of new entries; the first structural one filters find */
  readonly objectClasses: readonly string[];
  /** option key of the primary key param */
  readonly pkey: string;
  /** params keyed by option name (`client_id`); order is output order */
  readonly params: Readonly<Record<string, ParamDef>>;
  /** attributes returned without --all (option keys) */
  readonly defaultAttributes: readonly string[];
  /** option keys whose attributes CRITERIA searches */
  readonly searchAttributes: readonly string[];
  /** privilege that grants write access besides admins */
  readonly managePrivilege?: string;
  /** whom the users of its entries act as (access.ts bounds a delegate's writes by them) */
  readonly actsAs?: ActsAs;
  /** entries the LDAP service shows beside the directory's, computed from it (framework/view.ts: the sudo rules' sudoRole entries) */
  readonly views?: readonly ViewDef[];
  /** derived methods; default all five */
  readonly methods?: readonly CrudMethod[];
  /** the primary key never changes (X-mod has no --rename) */
  readonly noRename?: boolean;
  /**
   * The name X-show and X-mod act on when given none: an entry of the
   * container every realm has (its `defaults`), as FreeIPA's pwpolicy-show
   * without a group shows the global policy.
   */
  readonly defaultPkey?: string;
  /** extra options per method (hooks consume them) */
  readonly extraOptions?: Partial<Record<CrudMethod, Readonly<Record<string, OptionDef>>>>;
  readonly computed?: Readonly<Record<string, ComputedOutput>>;
  readonly hooks?: Hooks;
  /** canonical form of a primary key as given by a caller (e.g. add the realm) */
  readonly normalizePkey?: (value: string, ctx: CallContext) => string;
  /** one-line description for help */
  readonly doc: string;
}

export class CommandRegistry {
  private readonly commands = new Map<string, Command>();
  readonly objects = new Map<string, ObjectDef>();

  constructor(readonly services: Services = {}) {}

  register(...cmds: Command[]): void {
    for (const c of cmds) {
      if (this.commands.has(c.name)) throw new Error(`command ${c.name} registered twice`);
      this.commands.set(c.name, c);
    }
  }

  get(name: string): Command {
    const c = this.commands.get(name);
    if (!c) throw publicError('CommandError', { name: name.slice(0, 64) });
    return c;
  }

  has(name: string): boolean {
    return this.commands.has(name);
  }

  list(): Command[] {
    return [...this.commands.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}

export { PublicError };
