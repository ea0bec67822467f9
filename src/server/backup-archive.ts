/**
 * The backup file's container (docs/backup.md): a POSIX ustar archive,
 * gzip-compressed, whose first member is MANIFEST.json (the realm, when and
 * from which server, and each other member's name, mode, size and SHA-256),
 * the others regular files of the data directory. With a passphrase, the
 * whole gzip stream is encrypted in the age format (age-encryption.org/v1:
 * an scrypt-stretched passphrase, then ChaCha20-Poly1305 over 64 KiB chunks,
 * each authenticated before it is used), through the age authors' own
 * TypeScript library; the standard `age -d` opens it too, and `tar -tz`
 * lists what it holds. Only what the writer writes is read back: regular
 * files with plain names, listed in the manifest in the same order.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { pipeline, Readable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';
import { Decrypter, Encrypter } from 'age-encryption';

export const MANIFEST = 'MANIFEST.json';
export const FORMAT = 'dirid-backup';
export const FORMAT_VERSION = 1;

export interface ManifestFile {
  name: string;
  mode: number;
  size: number;
  sha256: string;
}

export interface Manifest {
  format: typeof FORMAT;
  version: number;
  /** ISO 8601, when the store's snapshot was taken */
  created: string;
  realm: string;
  hostname: string;
  serverVersion: string;
  store: 'sqlite' | 'postgresql';
  files: ManifestFile[];
}

export class BackupFormatError extends Error {}

const BLOCK = 512;
/** names a member may have: the data directory's own files, no path */
const MEMBER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const AGE_MAGIC = Buffer.from('age-encryption.org/v1\n');
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

function octal(buf: Buffer, offset: number, width: number, value: number): void {
  buf.write(value.toString(8).padStart(width - 1, '0') + '\0', offset, width, 'ascii');
}

/** A ustar header of a regular file. Sizes past the 11 octal digits (8 GiB) take GNU's base-256 form, which GNU and BSD tar read. */
export function ustarHeader(name: string, mode: number, size: number, mtime: number): Buffer {
  if (!MEMBER_NAME.test(name)) throw new BackupFormatError(`cannot archive a file named ${JSON.stringify(name)}`);
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, mode & 0o7777);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  if (size < 8 ** 11) octal(h, 124, 12, size);
  else {
    h[124] = 0x80;
    h.writeBigUInt64BE(BigInt(size), 124 + 4);
  }
  octal(h, 136, 12, Math.floor(mtime / 1000));
  h.write('        ', 148, 8, 'ascii');
  h.write('0', 156, 1, 'ascii');
  h.write('ustar\u000000', 257, 8, 'ascii');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

function readOctal(h: Buffer, offset: number, width: number): number {
  if (h[offset]! & 0x80) {
    let v = 0n;
    for (let i = offset + 1; i < offset + width; i++) v = (v << 8n) | BigInt(h[i]!);
    return Number(v);
  }
  const text = h.toString('ascii', offset, offset + width).replace(/[\0 ]+$/, '').trim();
  if (!/^[0-7]*$/.test(text)) throw new BackupFormatError('not a dirid backup (a damaged archive header)');
  return text === '' ? 0 : parseInt(text, 8);
}

export interface ParsedHeader {
  name: string;
  mode: number;
  size: number;
}

/** A header block read back: null for the end-of-archive block (all zeros). */
export function parseUstarHeader(h: Buffer): ParsedHeader | null {
  if (h.every((b) => b === 0)) return null;
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
  if (readOctal(h, 148, 8) !== sum) throw new BackupFormatError('not a dirid backup (an archive header fails its checksum)');
  if (h.toString('ascii', 257, 262) !== 'ustar') throw new BackupFormatError('not a dirid backup (not a ustar archive)');
  const type = String.fromCharCode(h[156]!);
  const name = h.toString('utf8', 0, 100).replace(/\0.*$/s, '');
  if ((type !== '0' && type !== '\0') || h[345] !== 0) throw new BackupFormatError(`not a dirid backup (member ${JSON.stringify(name.slice(0, 100))} is not a plain file)`);
  if (!MEMBER_NAME.test(name)) throw new BackupFormatError(`not a dirid backup (a member named ${JSON.stringify(name.slice(0, 100))})`);
  return { name, mode: readOctal(h, 100, 8), size: readOctal(h, 124, 12) };
}

/** A member to archive: its name, mode and the file it is read from. */
export interface MemberSource {
  name: string;
  mode: number;
  path: string;
  size: number;
}

/** The ustar stream: the manifest, then each member from its file, then the end-of-archive blocks. */
async function* ustar(manifest: Manifest, members: readonly MemberSource[], mtime: number): AsyncGenerator<Buffer> {
  const text = Buffer.from(JSON.stringify(manifest, null, 2) + '\n', 'utf8');
  yield ustarHeader(MANIFEST, 0o600, text.length, mtime);
  yield text;
  yield padding(text.length);
  for (const m of members) {
    yield ustarHeader(m.name, m.mode, m.size, mtime);
    let n = 0;
    for await (const chunk of createReadStream(m.path)) {
      n += (chunk as Buffer).length;
      yield chunk as Buffer;
    }
    if (n !== m.size) throw new Error(`${m.path} changed size while it was archived`);
    yield padding(m.size);
  }
  yield Buffer.alloc(2 * BLOCK);
}

function padding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** The backup file's bytes: gzip(ustar), encrypted with age under `passphrase` when one is given. */
export async function backupStream(manifest: Manifest, members: readonly MemberSource[], passphrase: string | undefined): Promise<Readable> {
  const gz = through(Readable.from(ustar(manifest, members, Date.parse(manifest.created))), createGzip({ level: 6 }));
  if (passphrase === undefined) return gz;
  const e = new Encrypter();
  e.setPassphrase(passphrase);
  const encrypted = await e.encrypt(Readable.toWeb(gz) as unknown as ReadableStream<Uint8Array>);
  return Readable.fromWeb(encrypted as unknown as import('node:stream/web').ReadableStream<Uint8Array>);
}

/** SHA-256 of a file, hex. */
export async function fileSha256(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Whether a backup file's first bytes are age's (encrypted) or gzip's (not); anything else is not a backup. */
export function backupKind(head: Buffer): 'encrypted' | 'plain' {
  if (head.subarray(0, AGE_MAGIC.length).equals(AGE_MAGIC)) return 'encrypted';
  if (head.subarray(0, 2).equals(GZIP_MAGIC)) return 'plain';
  throw new BackupFormatError('not a dirid backup (neither a gzip stream nor an age-encrypted file)');
}

/** The ustar stream inside a backup file: decrypted (the passphrase checked first) and decompressed. */
export async function openBackupStream(file: Readable, kind: 'encrypted' | 'plain', passphrase: string | undefined): Promise<Readable> {
  let gz: Readable = file;
  if (kind === 'encrypted') {
    if (passphrase === undefined) throw new BackupFormatError('the backup is encrypted: give its passphrase with --passphrase-file');
    const d = new Decrypter();
    d.addPassphrase(passphrase);
    let plain;
    try {
      plain = await d.decrypt(Readable.toWeb(file) as unknown as ReadableStream<Uint8Array>);
    } catch (e) {
      const m = e instanceof Error ? e.message : String(e);
      throw new BackupFormatError(/passphrase|identity|scrypt|decrypt|stanza/i.test(m) ? 'the passphrase does not open this backup' : `the encrypted backup is damaged (${m})`);
    }
    gz = Readable.fromWeb(plain as unknown as import('node:stream/web').ReadableStream<Uint8Array>);
  } else if (passphrase !== undefined) throw new BackupFormatError('the backup is not encrypted: leave out --passphrase-file');
  return through(gz, createGunzip());
}

/** `from` piped into `to`, whose reader sees an error of either (a damaged chunk, a file that changed) instead of a stream left hanging. */
function through<T extends NodeJS.ReadWriteStream & Readable>(from: Readable, to: T): T {
  pipeline(from, to, () => {});
  return to;
}

/**
 * Reads a ustar stream member by member: `onMember` gets each header and
 * the member's bytes as they come (an async iterable it must read whole).
 */
export async function readUstar(stream: Readable, onMember: (h: ParsedHeader, body: AsyncIterable<Buffer>) => Promise<void>): Promise<void> {
  const it = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let buf: Buffer = Buffer.alloc(0);
  let done = false;
  const fill = async (n: number): Promise<boolean> => {
    while (buf.length < n && !done) {
      const r = await it.next();
      if (r.done) done = true;
      else buf = buf.length ? Buffer.concat([buf, r.value]) : r.value;
    }
    return buf.length >= n;
  };
  for (;;) {
    if (!(await fill(BLOCK))) throw new BackupFormatError('the backup is cut short (no end-of-archive)');
    const h = parseUstarHeader(buf.subarray(0, BLOCK));
    buf = buf.subarray(BLOCK);
    if (!h) {
      // the end: read the stream to its last byte, so that gunzip checks its trailer (CRC-32 and length)
      // and a changed byte past the last member is found; nothing but zeros may follow
      for (;;) {
        if (buf.some((b) => b !== 0)) throw new BackupFormatError('the backup is damaged (data after its end-of-archive)');
        buf = Buffer.alloc(0);
        if (done || !(await fill(1))) return;
      }
    }
    let left = h.size;
    async function* body(): AsyncGenerator<Buffer> {
      while (left > 0) {
        if (buf.length === 0 && !(await fill(1))) throw new BackupFormatError(`the backup is cut short (in ${h!.name})`);
        const take = buf.subarray(0, Math.min(left, buf.length));
        buf = buf.subarray(take.length);
        left -= take.length;
        yield take;
      }
    }
    await onMember(h, body());
    if (left > 0) throw new Error(`member ${h.name} was not read whole`);
    const pad = (BLOCK - (h.size % BLOCK)) % BLOCK;
    if (!(await fill(pad))) throw new BackupFormatError(`the backup is cut short (after ${h.name})`);
    if (buf.subarray(0, pad).some((b) => b !== 0)) throw new BackupFormatError(`the backup is damaged (the padding after ${h.name})`);
    buf = buf.subarray(pad);
  }
}
