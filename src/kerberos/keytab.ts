/**
 * Keytab files as MIT writes them (krb5 keytab file format, version 0x0502;
 * 0x0501, in host byte order with the realm counted as a component, is read
 * and written too). Records are {principal, timestamp, 8-bit kvno, key,
 * optional 32-bit kvno that overrides the 8-bit one}; a negative record
 * length marks a hole left by a deleted entry. `readKeytab`/`writeKeytab`
 * deal in entries; `decodeKeytabFile`/`encodeKeytabFile` keep holes and
 * record layout so that a file round-trips byte for byte. `mergeKeytab`
 * adds new keys to what a keytab holds (`dirid keytab-get -k FILE`).
 */
export interface KeytabEntry {
  realm: string;
  components: string[];
  nameType: number;
  timestamp: number;
  kvno: number;
  etype: number;
  key: Buffer;
}

export class KeytabError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeytabError';
  }
}

export interface KeytabRecord {
  entry: KeytabEntry;
  /** the record carries the 32-bit kvno after the key (MIT writes it; ktutil may not) */
  kvno32: boolean;
  /** bytes after the key (and 32-bit kvno) inside the record, normally none */
  padding: Buffer;
}

export interface KeytabHole {
  /** the bytes of the hole after its negative length, normally zeros */
  hole: Buffer;
}

export interface KeytabFile {
  version: 1 | 2;
  slots: Array<KeytabRecord | KeytabHole>;
  /** bytes from a zero record length on, which ends the keytab as in MIT */
  trailer?: Buffer;
}

const MAX_RECORD = 1 << 16;
const MAX_COMPONENTS = 16;

export function decodeKeytabFile(buf: Buffer): KeytabFile {
  if (buf.length < 2 || buf[0] !== 5 || (buf[1] !== 2 && buf[1] !== 1)) throw new KeytabError('not a keytab (expected version 0x0502)');
  const v1 = buf[1] === 1;
  const u16 = (o: number) => (v1 ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
  const u32 = (o: number) => (v1 ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const slots: KeytabFile['slots'] = [];
  let off = 2;
  while (off < buf.length) {
    if (off + 4 > buf.length) throw new KeytabError('truncated keytab record length');
    const len = v1 ? buf.readInt32LE(off) : buf.readInt32BE(off);
    if (len === 0) return { version: v1 ? 1 : 2, slots, trailer: Buffer.from(buf.subarray(off)) };
    off += 4;
    const size = Math.abs(len);
    if (size > MAX_RECORD || off + size > buf.length) throw new KeytabError('truncated keytab record');
    const end = off + size;
    if (len < 0) {
      slots.push({ hole: Buffer.from(buf.subarray(off, end)) });
      off = end;
      continue;
    }
    let p = off;
    const need = (n: number) => {
      if (p + n > end) throw new KeytabError('malformed keytab record');
    };
    need(2);
    let count = u16(p);
    p += 2;
    if (v1) count -= 1;
    if (count < 0 || count > MAX_COMPONENTS) throw new KeytabError('keytab record with a bad component count');
    const str = () => {
      need(2);
      const l = u16(p);
      p += 2;
      need(l);
      const s = buf.subarray(p, p + l).toString('utf8');
      p += l;
      return s;
    };
    const realm = str();
    const components: string[] = [];
    for (let i = 0; i < count; i++) components.push(str());
    let nameType = 1;
    if (!v1) {
      need(4);
      nameType = u32(p);
      p += 4;
    }
    need(4 + 1 + 2 + 2);
    const timestamp = u32(p);
    let kvno = buf[p + 4]!;
    const etype = u16(p + 5);
    const klen = u16(p + 7);
    p += 9;
    need(klen);
    const key = Buffer.from(buf.subarray(p, p + klen));
    p += klen;
    const kvno32 = end - p >= 4;
    if (kvno32) {
      const k32 = u32(p);
      if (k32 !== 0) kvno = k32;
      p += 4;
    }
    slots.push({ entry: { realm, components, nameType, timestamp, kvno, etype, key }, kvno32, padding: Buffer.from(buf.subarray(p, end)) });
    off = end;
  }
  return { version: v1 ? 1 : 2, slots };
}

export function encodeKeytabFile(kt: KeytabFile): Buffer {
  const v1 = kt.version === 1;
  const parts: Buffer[] = [Buffer.from([5, kt.version])];
  const int32 = (v: number) => {
    const b = Buffer.alloc(4);
    if (v1) b.writeInt32LE(v);
    else b.writeInt32BE(v);
    return b;
  };
  const u16 = (v: number) => {
    const b = Buffer.alloc(2);
    if (v1) b.writeUInt16LE(v);
    else b.writeUInt16BE(v);
    return b;
  };
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    if (v1) b.writeUInt32LE(v >>> 0);
    else b.writeUInt32BE(v >>> 0);
    return b;
  };
  const str = (s: string) => {
    const b = Buffer.from(s, 'utf8');
    if (b.length > 0xffff) throw new KeytabError('keytab string too long');
    return Buffer.concat([u16(b.length), b]);
  };
  for (const slot of kt.slots) {
    if ('hole' in slot) {
      if (slot.hole.length === 0) throw new KeytabError('empty keytab hole');
      parts.push(int32(-slot.hole.length), slot.hole);
      continue;
    }
    const e = slot.entry;
    if (e.components.length > MAX_COMPONENTS) throw new KeytabError('too many name components');
    if (e.key.length > 0xffff || e.etype < 0 || e.etype > 0xffff) throw new KeytabError('key does not fit a keytab record');
    const head = [u16(e.components.length + (v1 ? 1 : 0)), str(e.realm), ...e.components.map(str), ...(v1 ? [] : [u32(e.nameType)])];
    const tail = [u32(e.timestamp), Buffer.from([e.kvno & 0xff]), u16(e.etype), u16(e.key.length), e.key];
    if (slot.kvno32 || e.kvno > 0xff) tail.push(u32(e.kvno));
    tail.push(slot.padding);
    const rec = Buffer.concat([...head, ...tail]);
    parts.push(int32(rec.length), rec);
  }
  if (kt.trailer) parts.push(kt.trailer);
  return Buffer.concat(parts);
}

/** The entries of a keytab, holes skipped. */
export function readKeytab(buf: Buffer): KeytabEntry[] {
  return decodeKeytabFile(buf).slots.flatMap((s) => ('entry' in s ? [s.entry] : []));
}

/** A version 0x0502 keytab with the 32-bit kvno in every record, as MIT's ktadd writes. */
export function writeKeytab(entries: KeytabEntry[]): Buffer {
  return encodeKeytabFile({ version: 2, slots: entries.map((entry) => ({ entry, kvno32: true, padding: Buffer.alloc(0) })) });
}

function samePrincipal(a: KeytabEntry, b: KeytabEntry): boolean {
  return a.realm === b.realm && a.components.length === b.components.length && a.components.every((c, i) => c === b.components[i]);
}

/**
 * A keytab's entries with `added` put in: the entries of other principals
 * stay as they are, and of a principal that gets new keys only the previous
 * key version stays (the highest kvno below the new ones), after which come
 * the new keys. Tickets issued before a rotation are in the previous key
 * version and are still accepted for their lifetime; older versions would
 * serve no ticket a KDC still issues, and keys kept for ever outlive the
 * reason they were rotated (a leak, a weak enctype). MIT's ktadd keeps every
 * version and leaves the clean-up to `ktremove`; we keep one.
 */
export function mergeKeytab(existing: readonly KeytabEntry[], added: readonly KeytabEntry[]): KeytabEntry[] {
  const kept = existing.filter((e) => {
    const mine = added.filter((a) => samePrincipal(a, e));
    if (mine.length === 0) return true;
    const oldest = Math.min(...mine.map((a) => a.kvno));
    const below = existing.filter((x) => samePrincipal(x, e) && x.kvno < oldest).map((x) => x.kvno);
    return below.length > 0 && e.kvno === Math.max(...below);
  });
  return [...kept, ...added];
}
