/**
 * The directory's public contract: entries addressed by DN, a schema of
 * attribute types and object classes, RFC 4515 filters, size/time limits,
 * atomic writes with referential integrity and uniqueness rules, and
 * secrets encrypted at rest.
 *
 * Everything above the directory (framework/, objects/, kdc/) talks to it
 * only through {@link Directory}; the API is Promise-based so a network
 * backend fits without changing callers. Backends (SQLite, PostgreSQL)
 * implement only storage (storage.ts); the rules of a write run once, above
 * them (write-path.ts).
 */

/** Attribute syntaxes; each decides normalisation, validation and matching. */
export type Syntax =
  /** case-insensitive string (LDAP Directory String with caseIgnoreMatch) */
  | 'string'
  /** case-sensitive string (caseExactMatch), e.g. IdP subject identifiers, URLs */
  | 'exact'
  /** distinguished name; normalised (lower-cased attribute types and values, no spaces around separators) */
  | 'dn'
  /** signed decimal integer; ordering is numeric */
  | 'integer'
  /** TRUE / FALSE */
  | 'boolean'
  /** LDAP GeneralizedTime, e.g. 20261122103000Z; ordering is chronological */
  | 'time'
  /** opaque bytes, carried as base64 text in values */
  | 'binary'
  /**
   * Write-only secret: the plaintext is given on add/modify and stored only as
   * AES-256-GCM ciphertext under the master key, bound to the entry's
   * entryUUID and the attribute name. get()/search() never return it, filters
   * may only test presence. Read back with {@link Directory.readSecret}.
   */
  | 'secret';

export interface AttributeType {
  /** canonical name, e.g. 'dirIdpConfigLink'; matched case-insensitively */
  name: string;
  /** other names accepted on input, e.g. ['commonName'] for 'cn' */
  aliases?: readonly string[];
  syntax: Syntax;
  /** at most one value */
  singleValue?: boolean;
  /** maintained by the directory (entryUUID, createTimestamp...); writes rejected */
  operational?: boolean;
  /** keep an index of normalised values (equality, substring, ordering use it) */
  indexed?: boolean;
  /**
   * For syntax 'dn': referential integrity. 'restrict' = deleting the target
   * is refused while a value points at it; 'remove' = the value is removed
   * from referring entries when the target is deleted. Renaming the target
   * rewrites values in both cases.
   */
  references?: 'restrict' | 'remove';
  /** upper bound on a value's length in characters (default 4096) */
  maxLength?: number;
}

export interface ObjectClass {
  name: string;
  kind: 'structural' | 'auxiliary' | 'abstract';
  /** superior class; its must/may are inherited */
  sup?: string;
  must: readonly string[];
  may: readonly string[];
}

/**
 * Where the keys of a {@link UniqueRule} come from: one attribute, each
 * value a key, or several single-valued attributes whose values together
 * are one key (held only by an entry that has every one of them). The
 * first attribute is the one looked up in the index: name the most
 * selective first.
 */
export interface UniqueKeySource {
  attrs: readonly string[];
  /** only entries of this object class hold keys of this source */
  objectClass?: string;
  /**
   * The words of a refusal of a key of this source: `{attr}` stands for the
   * value of attr the write gave (a DN as its first RDN's value: an IdP
   * reference's name), `{holder}` for the entry that holds the key.
   */
  refusal: string;
}

/**
 * A uniqueness rule (slapd's unique overlay, kanidm's attrunique): no two
 * entries hold the same key. The keys of every source share one space, and
 * compare as the attributes' syntaxes compare values (so the sources'
 * attributes must agree in number and syntax). The write path refuses,
 * inside the write's transaction, a write that gives an entry a key another
 * entry holds (unique.ts).
 */
export interface UniqueRule {
  /** names the rule in logs and in what verify reports, e.g. 'principal name' */
  name: string;
  keys: readonly UniqueKeySource[];
}

export interface SchemaDefinition {
  attributeTypes: readonly AttributeType[];
  objectClasses: readonly ObjectClass[];
  /** uniqueness rules; attributes they name must be indexed */
  unique?: readonly UniqueRule[];
}

/** Attribute values keyed by canonical attribute name. */
export type Attributes = Record<string, string[]>;

export interface Entry {
  /** DN as stored (original case) */
  dn: string;
  /**
   * Attributes keyed by canonical attribute name (schema spelling), values in
   * stored form. Includes objectClass and the operational attributes
   * entryUUID, createTimestamp, modifyTimestamp. Never includes secrets.
   */
  attrs: Attributes;
}

export type Modification =
  | { op: 'add'; attr: string; values: string[] }
  /** no values = delete the whole attribute */
  | { op: 'delete'; attr: string; values?: string[] }
  /** empty values = delete the attribute if present */
  | { op: 'replace'; attr: string; values: string[] };

export type Scope = 'base' | 'one' | 'sub';

/** A search filter (RFC 4515) as data: what filter.ts parses text into and evaluates. */
export type Filter =
  | { kind: 'and'; items: Filter[] }
  | { kind: 'or'; items: Filter[] }
  | { kind: 'not'; item: Filter }
  | { kind: 'eq' | 'ge' | 'le'; attr: string; value: string }
  | { kind: 'present'; attr: string }
  | { kind: 'sub'; attr: string; initial?: string; any: string[]; final?: string };

export interface SearchRequest {
  base: string;
  scope: Scope;
  /** RFC 4515 filter string, or one already parsed (the LDAP service decodes it from BER); default (objectClass=*) */
  filter?: string | Filter;
  /** attributes to return (canonical or alias names); default all */
  attrs?: readonly string[];
  /** maximum entries; 0 or undefined = unlimited */
  sizeLimit?: number;
  /** seconds; 0 or undefined = unlimited */
  timeLimit?: number;
  /**
   * Order of the entries, as RFC 2891's sort control with one ascending key:
   * by the normalised values of this attribute (the least one when it has
   * several; integers numerically), entries without it last, ties in the
   * store's order. The size limit then keeps the first entries of that
   * order. Default: the store's order.
   */
  orderBy?: string;
  /**
   * The entries are worth keeping parsed however many there are: the caller
   * reads the same set again after each change to it (the indexes of
   * memberships and access rules). Without it a search of many candidates
   * or a scan only uses the store's cache of parsed entries, so that one
   * large search cannot push out what point reads keep there.
   */
  keep?: boolean;
  /**
   * The caller only reads the entries (the LDAP service, which encodes them
   * and lets them go): their values may be the store's own cached arrays
   * instead of copies. Never for a caller that changes what it gets.
   */
  shared?: boolean;
}

export interface SearchResult {
  entries: Entry[];
  /** true when a size or time limit cut the result short */
  truncated: boolean;
  /** which limit cut it short */
  limit?: 'size' | 'time';
}

/** One write of an atomic batch. */
export type WriteOp =
  | { kind: 'add'; dn: string; attrs: Attributes }
  | { kind: 'modify'; dn: string; mods: Modification[] }
  | { kind: 'delete'; dn: string }
  | { kind: 'rename'; dn: string; newRdn: string };

export interface Directory {
  readonly baseDn: string;
  readonly schema: Schema;
  /**
   * Increases with every write made through this handle (committed or
   * rolled back) and, on a backend several servers share, with every write
   * another server commits, so callers can cache derived data (the KDC's
   * principals) exactly as long as nothing changed.
   */
  readonly generation: number;
  /**
   * The generation of the last commit that wrote an entry within the
   * subtree at `dn` (or renamed or deleted an entry above it), references
   * rewritten and removed included; on a shared backend every other
   * server's commit counts as such a write. The first call for a subtree
   * answers the current generation (it is watched from then on). Callers
   * cache what they derive from a few subtrees (framework/view.ts) while
   * these stay unchanged, whatever else is written.
   */
  subtreeGeneration(dn: string): number;
  get(dn: string, attrs?: readonly string[]): Promise<Entry | null>;
  search(req: SearchRequest): Promise<SearchResult>;
  add(dn: string, attrs: Attributes): Promise<void>;
  modify(dn: string, mods: Modification[]): Promise<void>;
  delete(dn: string): Promise<void>;
  /** Renames the last RDN; returns the new DN. References are rewritten. */
  rename(dn: string, newRdn: string): Promise<string>;
  /** Applies all ops atomically (all or none), in order. */
  batch(ops: WriteOp[]): Promise<void>;
  /** Decrypted values of a secret attribute; [] when unset. */
  readSecret(dn: string, attr: string): Promise<string[]>;
  close(): Promise<void>;
}

/** Compiled schema lookups shared by backends and callers. */
export interface Schema {
  /** attribute type by any of its names, case-insensitively */
  attribute(name: string): AttributeType | undefined;
  objectClass(name: string): ObjectClass | undefined;
  /** all must/may attributes of a class and its superiors */
  allowed(objectClasses: readonly string[]): { must: Set<string>; may: Set<string> };
  readonly definition: SchemaDefinition;
}

/**
 * Result codes of directory errors, named as in RFC 4511 §4.1.9 where one fits.
 * Callers map them to public errors; the message is for logs, not users.
 */
export type DirectoryErrorCode =
  | 'noSuchObject'
  | 'entryAlreadyExists'
  | 'objectClassViolation'
  | 'constraintViolation'
  | 'undefinedAttributeType'
  | 'invalidAttributeSyntax'
  | 'attributeOrValueExists'
  | 'noSuchAttribute'
  | 'notAllowedOnNonLeaf'
  | 'invalidDNSyntax'
  | 'filterError'
  | 'unwillingToPerform'
  /** delete refused: a 'restrict' reference points at the entry */
  | 'referenced'
  /** a DN-valued referencing attribute names an entry that does not exist */
  | 'referenceTargetMissing'
  /** the store cannot be reached (a database server down or failing over); a write may or may not have been made */
  | 'unavailable';

export class DirectoryError extends Error {
  readonly code: DirectoryErrorCode;
  /** the attribute involved, when there is one (canonical name) */
  readonly attr: string | undefined;
  /** the DN involved */
  readonly dn: string | undefined;
  constructor(code: DirectoryErrorCode, message: string, details: { attr?: string; dn?: string } = {}) {
    super(message);
    this.name = 'DirectoryError';
    this.code = code;
    this.attr = details.attr;
    this.dn = details.dn;
  }
}

/**
 * A write refused by a {@link UniqueRule}: it would give the entry `dn` a
 * key the entry `holder` holds. Its code is constraintViolation, as slapd's
 * unique overlay answers; `attr` is the (first) attribute of the key.
 */
export class UniquenessViolation extends DirectoryError {
  /** the rule's name */
  readonly rule: string;
  /** the DN of the entry that holds the key */
  readonly holder: string;
  private readonly refusal: string;
  private readonly shown: Readonly<Record<string, string>>;
  /**
   * `refusal` is the source's words, `shown` the key's values by attribute
   * as a refusal shows them.
   */
  constructor(rule: string, refusal: string, shown: Readonly<Record<string, string>>, details: { attr: string; dn: string; holder: string }) {
    super('constraintViolation', fill(refusal, shown, `the entry "${details.holder}"`), details);
    this.name = 'UniquenessViolation';
    this.rule = rule;
    this.holder = details.holder;
    this.refusal = refusal;
    this.shown = shown;
  }
  /** The refusal with the holder named as `holder` says (e.g. `user "carol"`). */
  describe(holder: string): string {
    return fill(this.refusal, this.shown, holder);
  }
}

function fill(template: string, shown: Readonly<Record<string, string>>, holder: string): string {
  return template.replace(/\{(\w+)\}/g, (m, k: string) => (k === 'holder' ? holder : (shown[k] ?? m)));
}
