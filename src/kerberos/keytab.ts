/**
 * Keytab files, format 0x0502 (and 0x0501 for reading), as MIT writes them:
 * records of {principal, timestamp, kvno, key}; negative lengths are holes;
 * a trailing 32-bit kvno overrides the 8-bit one.
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

export function readKeytab(buf: Buffer): KeytabEntry[] {
  if (buf.length < 2 || buf[0] !== 5 || (buf[1] !== 2 && buf[1] !== 1)) throw new KeytabError('not a keytab (expected version 0x0502)');
  const v1 = buf[1] === 1;
  const u16 = (o: number) => (v1 ? buf.readUInt16LE(o) : buf.readUInt16BE(o));
  const u32 = (o: number) => (v1 ? buf.readUInt32LE(o) : buf.readUInt32BE(o));
  const out: KeytabEntry[] = [];
  let off = 2;
  while (off + 4 <= buf.length) {
    const len = v1 ? buf.readInt32LE(off) : buf.readInt32BE(off);
    off += 4;
    if (len < 0) {
      off += -len;
      continue;
    }
    if (len === 0) break;
    const end = off + len;
    if (end > buf.length) throw new KeytabError('truncated keytab record');
    let p = off;
    const need = (n: number) => {
      if (p + n > end) throw new KeytabError('malformed keytab record');
    };
    need(2);
    let count = u16(p);
    p += 2;
    if (v1) count -= 1;
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
    p += 4;
    let kvno = buf[p]!;
    p += 1;
    const etype = u16(p);
    p += 2;
    const klen = u16(p);
    p += 2;
    need(klen);
    const key = Buffer.from(buf.subarray(p, p + klen));
    p += klen;
    if (end - p >= 4) {
      const k32 = u32(p);
      if (k32 !== 0) kvno = k32;
    }
    out.push({ realm, components, nameType, timestamp, kvno, etype, key });
    off = end;
  }
  return out;
}

export function writeKeytab(entries: KeytabEntry[]): Buffer {
  const parts: Buffer[] = [Buffer.from([5, 2])];
  for (const e of entries) {
    const str = (s: string) => {
      const b = Buffer.from(s, 'utf8');
      const l = Buffer.alloc(2);
      l.writeUInt16BE(b.length);
      return Buffer.concat([l, b]);
    };
    const head = Buffer.alloc(2);
    head.writeUInt16BE(e.components.length);
    const tail = Buffer.alloc(4 + 4 + 1 + 2 + 2);
    tail.writeUInt32BE(e.nameType >>> 0, 0);
    tail.writeUInt32BE(e.timestamp >>> 0, 4);
    tail.writeUInt8(e.kvno & 0xff, 8);
    tail.writeUInt16BE(e.etype, 9);
    tail.writeUInt16BE(e.key.length, 11);
    const kvno32 = Buffer.alloc(4);
    kvno32.writeUInt32BE(e.kvno >>> 0);
    const rec = Buffer.concat([head, str(e.realm), ...e.components.map(str), tail, e.key, kvno32]);
    const len = Buffer.alloc(4);
    len.writeInt32BE(rec.length);
    parts.push(len, rec);
  }
  return Buffer.concat(parts);
}
