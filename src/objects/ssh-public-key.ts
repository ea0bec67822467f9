/**
 * OpenSSH public keys, as users and hosts carry them in `sshPublicKey` (the
 * openssh-lpk attribute SSSD's ldap provider reads by default, and hands to
 * sshd through sss_ssh_authorizedkeys and sss_ssh_knownhostsproxy): one line
 * of an authorized_keys file (sshd(8) "AUTHORIZED_KEYS FILE FORMAT"), that
 * is `[options] type base64 [comment]`. The key data is the SSH wire form
 * (RFC 4253 §6.6): ssh-ed25519 (RFC 8709 §4), ecdsa-sha2-nistp256/384/521
 * (RFC 5656 §3.1), ssh-rsa (RFC 4253 §6.6), and the FIDO security-key
 * types sk-ssh-ed25519@openssh.com and sk-ecdsa-sha2-nistp256@openssh.com
 * (OpenSSH PROTOCOL.u2f). The key material itself is checked by node:crypto
 * (an ECDSA point must lie on its curve). ssh-dss is refused: OpenSSH 9.8
 * turned DSA off and 10.0 removed it.
 *
 * A value is checked and stored in one canonical form (single spaces, the
 * key data re-encoded), and shown by its fingerprint as `ssh-keygen -l`
 * prints it (`SHA256:` and the unpadded base64 SHA-256 of the key data).
 * No error message repeats what was given: a private key pasted by mistake
 * must not come back in an answer, a log or a terminal's scrollback.
 */
import { createHash, createPublicKey } from 'node:crypto';
import type { PendingEntry } from '../framework/command.js';
import { publicError } from '../framework/errors.js';
import type { ParamDef } from '../framework/params.js';
import { hasObjectClass } from '../directory/entry.js';

/** One OpenSSH public key, parsed. */
export interface SshPublicKey {
  /** authorized_keys options (`from="10.0.0.0/8",no-pty`), as given */
  readonly options?: string;
  /** the key type, as in the key data */
  readonly type: string;
  /** the key data (the SSH wire form) */
  readonly blob: Buffer;
  readonly comment?: string;
  /** the canonical line: `[options ]type base64[ comment]` */
  readonly line: string;
  /** `SHA256:…`, as ssh-keygen -l prints it */
  readonly fingerprint: string;
}

/** A key that is not one: the message says what is wrong, never what was given. */
export class SshKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SshKeyError';
  }
}

const CURVES = { nistp256: 'P-256', nistp384: 'P-384', nistp521: 'P-521' } as const;
type Curve = keyof typeof CURVES;

/** How each accepted key type's data continues after its name. */
const KEY_TYPES: Record<string, (r: WireReader) => void> = {
  'ssh-ed25519': (r) => checkEd25519(r.string()),
  'sk-ssh-ed25519@openssh.com': (r) => {
    checkEd25519(r.string());
    r.string(); // the FIDO application, "ssh:" by default
  },
  'ecdsa-sha2-nistp256': (r) => checkEcdsa(r, 'nistp256'),
  'ecdsa-sha2-nistp384': (r) => checkEcdsa(r, 'nistp384'),
  'ecdsa-sha2-nistp521': (r) => checkEcdsa(r, 'nistp521'),
  'sk-ecdsa-sha2-nistp256@openssh.com': (r) => {
    checkEcdsa(r, 'nistp256');
    r.string();
  },
  'ssh-rsa': (r) => checkRsa(r.mpint(), r.mpint()),
};

export const SSH_KEY_TYPES: readonly string[] = Object.keys(KEY_TYPES);

/** OpenSSH's limits on RSA moduli (SSH_RSA_MINIMUM_MODULUS_SIZE, SSH_RSA_MAXIMUM_MODULUS_SIZE). */
const RSA_MIN_BITS = 1024;
const RSA_MAX_BITS = 16384;

/** The options sshd knows (sshd(8) "AUTHORIZED_KEYS FILE FORMAT"); a value is quoted. */
const OPTIONS = new Set([
  'agent-forwarding',
  'cert-authority',
  'command',
  'environment',
  'expiry-time',
  'from',
  'no-agent-forwarding',
  'no-port-forwarding',
  'no-pty',
  'no-touch-required',
  'no-user-rc',
  'no-x11-forwarding',
  'permitlisten',
  'permitopen',
  'port-forwarding',
  'principals',
  'pty',
  'restrict',
  'tunnel',
  'user-rc',
  'verify-required',
  'x11-forwarding',
]);

/** Reads SSH wire types (RFC 4251 §5) and fails as a damaged key. */
class WireReader {
  private at = 0;
  constructor(private readonly buf: Buffer) {}

  string(): Buffer {
    if (this.at + 4 > this.buf.length) throw damaged();
    const n = this.buf.readUInt32BE(this.at);
    if (n > this.buf.length - this.at - 4) throw damaged();
    const out = this.buf.subarray(this.at + 4, this.at + 4 + n);
    this.at += 4 + n;
    return out;
  }

  /** A non-negative mpint (RFC 4251 §5): its magnitude, without the sign byte. */
  mpint(): Buffer {
    const v = this.string();
    if (v.length > 0 && (v[0]! & 0x80) !== 0) throw new SshKeyError('the key data holds a negative number');
    return v[0] === 0 ? v.subarray(1) : v;
  }

  end(): void {
    if (this.at !== this.buf.length) throw new SshKeyError('the key data has bytes after the key');
  }
}

function damaged(): SshKeyError {
  return new SshKeyError('the key data is truncated or damaged');
}

function checkEd25519(pk: Buffer): void {
  if (pk.length !== 32) throw new SshKeyError('an Ed25519 key is 32 bytes');
}

function checkEcdsa(r: WireReader, curve: Curve): void {
  if (r.string().toString('latin1') !== curve) throw new SshKeyError('the curve in the key data does not match its type');
  const q = r.string();
  const size = { nistp256: 32, nistp384: 48, nistp521: 66 }[curve];
  // an uncompressed point (SEC 1 §2.3.3), as OpenSSH writes it
  if (q.length !== 1 + 2 * size || q[0] !== 4) throw new SshKeyError('the ECDSA point is not an uncompressed point of its curve');
  try {
    createPublicKey({ key: { kty: 'EC', crv: CURVES[curve], x: q.subarray(1, 1 + size).toString('base64url'), y: q.subarray(1 + size).toString('base64url') }, format: 'jwk' });
  } catch {
    throw new SshKeyError('the ECDSA point is not on its curve');
  }
}

function checkRsa(e: Buffer, n: Buffer): void {
  const bits = n.length === 0 ? 0 : (n.length - 1) * 8 + (32 - Math.clz32(n[0]!));
  if (bits < RSA_MIN_BITS) throw new SshKeyError(`an RSA key needs at least ${RSA_MIN_BITS} bits, as OpenSSH requires`);
  if (bits > RSA_MAX_BITS) throw new SshKeyError(`an RSA key has at most ${RSA_MAX_BITS} bits`);
  if (e.length === 0 || e.length > 8 || (e[e.length - 1]! & 1) === 0 || (e.length === 1 && e[0]! < 3)) throw new SshKeyError('the RSA public exponent is not valid');
  if ((n[n.length - 1]! & 1) === 0) throw new SshKeyError('the RSA modulus is not valid');
  try {
    createPublicKey({ key: { kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') }, format: 'jwk' });
  } catch {
    throw new SshKeyError('the RSA key is not valid');
  }
}

/** Whether the text is (part of) a private key: PEM or OpenSSH armour, PuTTY's file, or OpenSSH's private key data. */
function looksPrivate(text: string): boolean {
  if (/PRIVATE KEY|PuTTY-User-Key-File|^\s*-----BEGIN|^\s*----\s*BEGIN/i.test(text)) return true;
  // "openssh-key-v1\0" in base64, wherever a token of it starts
  return /(^|\s)b3BlbnNzaC1rZXktdjE/.test(text);
}

/** The options at the start of a line: up to the first blank outside double quotes. */
function splitOptions(line: string): { options: string; rest: string } {
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && quoted && i + 1 < line.length) i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && (c === ' ' || c === '\t')) return { options: line.slice(0, i), rest: line.slice(i).trimStart() };
  }
  if (quoted) throw new SshKeyError('the options have an unterminated quoted value');
  return { options: line, rest: '' };
}

function checkOptions(options: string): void {
  // name or name="value", separated by commas (commas inside quotes belong to the value)
  const re = /([A-Za-z0-9-]+)(?:="(?:[^"\\]|\\.)*")?(?:,|$)/y;
  let at = 0;
  while (at < options.length) {
    re.lastIndex = at;
    const m = re.exec(options);
    if (!m) throw new SshKeyError('the options are not name or name="value" separated by commas');
    if (!OPTIONS.has(m[1]!.toLowerCase())) throw new SshKeyError('the options name one sshd does not know (see sshd(8), AUTHORIZED_KEYS FILE FORMAT)');
    at = re.lastIndex;
  }
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Parses one public key line. `allowOptions`: authorized_keys options may
 * precede the key (users' keys; a host key takes none). Throws SshKeyError.
 */
export function parseSshPublicKey(text: string, allowOptions: boolean): SshPublicKey {
  if (looksPrivate(text)) throw new SshKeyError('this is a private key: give the public key (the .pub file), and keep the private key to yourself');
  let line = text.trim();
  let options: string | undefined;
  const first = /^\S+/.exec(line)?.[0] ?? '';
  if (!Object.hasOwn(KEY_TYPES, first)) {
    if (first === 'ssh-dss') throw new SshKeyError('DSA keys (ssh-dss) are no longer accepted by OpenSSH: use an Ed25519, ECDSA or RSA key');
    // a known type further on: what precedes it are options
    const typeLater = line.split(/\s+/).slice(1).some((t) => Object.hasOwn(KEY_TYPES, t));
    if (!typeLater || !/[=,"]|^[a-z-]+$/i.test(first)) throw new SshKeyError(`unknown key type: the line must start with one of ${SSH_KEY_TYPES.join(', ')}`);
    if (!allowOptions) throw new SshKeyError('a host key takes no options: give the line of the host\'s .pub file');
    const split = splitOptions(line);
    checkOptions(split.options);
    options = split.options;
    line = split.rest;
  }
  const [type = '', data = '', ...commentWords] = line.split(/[ \t]+/);
  if (!Object.hasOwn(KEY_TYPES, type)) throw new SshKeyError(`unknown key type: the line must start with one of ${SSH_KEY_TYPES.join(', ')}`);
  if (!data) throw new SshKeyError('the key data is missing after the key type');
  if (!BASE64.test(data) || data.length % 4 !== 0) throw new SshKeyError('the key data is not base64 (or is cut short)');
  const blob = Buffer.from(data, 'base64');
  const r = new WireReader(blob);
  if (r.string().toString('latin1') !== type) throw new SshKeyError('the key type does not match the key data');
  KEY_TYPES[type]!(r);
  r.end();
  const comment = commentWords.join(' ').trim() || undefined;
  const canonical = [options, type, blob.toString('base64'), comment].filter((x) => x !== undefined).join(' ');
  return {
    ...(options !== undefined ? { options } : {}),
    type,
    blob,
    ...(comment !== undefined ? { comment } : {}),
    line: canonical,
    fingerprint: `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`,
  };
}

/** How user-show and host-show show a key, as FreeIPA does: `SHA256:… comment (type)`. */
export function fingerprintText(k: SshPublicKey): string {
  return `${k.fingerprint}${k.comment ? ` ${k.comment}` : ''} (${k.type})`;
}

/** The `sshpubkey` param of users and hosts (FreeIPA's option name). */
export function sshPublicKeyParam(doc: string): ParamDef {
  return { attr: 'sshPublicKey', type: 'str', multivalue: true, label: 'SSH public key', doc, noSearch: true, maxLength: 8192 } as const;
}

/** The output key and label of the fingerprints (FreeIPA's). */
export const FINGERPRINT_OUTPUT = { sshpubkeyfp: { label: 'SSH public key fingerprint', default: true } } as const;

/**
 * The keys an add or mod leaves on an entry, checked and stored in their
 * canonical form, whichever option gave them (--sshpubkey, --setattr,
 * --addattr); the same key twice is refused. `classes` come with keys and
 * leave with the last of them: ldapPublicKey (whose MUST is sshPublicKey),
 * and for hosts ipHost, the class SSSD finds hosts by.
 */
export function completeSshKeys(entry: PendingEntry, allowOptions: boolean, classes: readonly string[]): void {
  if (!entry.changes('sshPublicKey')) return;
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const value of entry.values('sshPublicKey')) {
    let key: SshPublicKey;
    try {
      key = parseSshPublicKey(value, allowOptions);
    } catch (e) {
      if (e instanceof SshKeyError) throw publicError('ValidationError', { name: 'sshpubkey', error: e.message });
      throw e;
    }
    if (seen.has(key.fingerprint)) throw publicError('ValidationError', { name: 'sshpubkey', error: `the key ${key.fingerprint} is given twice` });
    seen.add(key.fingerprint);
    lines.push(key.line);
  }
  entry.set('sshPublicKey', lines);
  let ocs = entry.values('objectClass');
  for (const c of classes) {
    if (lines.length > 0 && !hasObjectClass(ocs, c)) ocs = [...ocs, c];
    if (lines.length === 0) ocs = ocs.filter((o) => o.toLowerCase() !== c.toLowerCase());
  }
  entry.set('objectClass', ocs);
}

/** The fingerprints of stored keys, as user-show and host-show show them; a value that does not parse is shown as such. */
export function sshFingerprints(values: readonly string[] | undefined): string[] {
  return (values ?? []).map((v) => {
    try {
      return fingerprintText(parseSshPublicKey(v, true));
    } catch {
      return '(not a valid key)';
    }
  });
}
