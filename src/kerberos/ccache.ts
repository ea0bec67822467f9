/**
 * MIT credential caches (the FILE ccache format, versions 4 and 3, as in
 * MIT's doc/formats/ccache_file_format): a header (version 4 only; tag 1 =
 * KDC time offset), the default principal, then credentials until the end;
 * version 3 repeats the enctype of each key. Configuration entries (fast_avail, pa_type, ...) are credentials
 * whose server is in the realm X-CACHECONF:. Files are written 0600 with an
 * atomic rename.
 */
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

export interface CcPrincipal {
  nameType: number;
  realm: string;
  components: string[];
}

export interface CcCredential {
  client: CcPrincipal;
  server: CcPrincipal;
  key: { etype: number; value: Buffer };
  authtime: number;
  starttime: number;
  endtime: number;
  renewTill: number;
  isSkey: boolean;
  flags: number;
  addresses: Array<{ type: number; data: Buffer }>;
  authdata: Array<{ type: number; data: Buffer }>;
  ticket: Buffer;
  secondTicket: Buffer;
}

export interface Ccache {
  version: 3 | 4;
  headers: Array<{ tag: number; value: Buffer }>;
  principal: CcPrincipal;
  credentials: CcCredential[];
}

export class CcacheError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CcacheError';
  }
}

export const CONF_REALM = 'X-CACHECONF:';

/** Header tags of version 4 (tag 1: KDC time offset, 4-byte seconds and 4-byte microseconds). */
export const CcacheHeaderTag = { KDC_TIME_OFFSET: 1 } as const;

/** The KDC time offset header of a version 4 ccache, if present. */
export function kdcTimeOffset(cc: Ccache): { seconds: number; microseconds: number } | undefined {
  const h = cc.headers.find((x) => x.tag === CcacheHeaderTag.KDC_TIME_OFFSET && x.value.length === 8);
  return h ? { seconds: h.value.readInt32BE(0), microseconds: h.value.readInt32BE(4) } : undefined;
}

/** The config entries (server realm X-CACHECONF:) as name, optional principal and value. */
export function configEntries(cc: Ccache): Array<{ name: string; principal?: string; value: Buffer }> {
  return cc.credentials
    .filter((c) => c.server.realm === CONF_REALM && c.server.components[0] === 'krb5_ccache_conf_data' && c.server.components.length >= 2)
    .map((c) => ({ name: c.server.components[1]!, ...(c.server.components[2] !== undefined ? { principal: c.server.components[2] } : {}), value: c.ticket }));
}

export function readCcache(buf: Buffer): Ccache {
  let p = 0;
  const need = (n: number) => {
    if (p + n > buf.length) throw new CcacheError('truncated credential cache');
  };
  const u8 = () => (need(1), buf[p++]!);
  const u16 = () => (need(2), (p += 2), buf.readUInt16BE(p - 2));
  const u32 = () => (need(4), (p += 4), buf.readUInt32BE(p - 4));
  const data = (max = 1 << 20) => {
    const len = u32();
    if (len > max) throw new CcacheError('oversized field in credential cache');
    need(len);
    p += len;
    return Buffer.from(buf.subarray(p - len, p));
  };
  const principal = (): CcPrincipal => {
    const nameType = u32();
    const count = u32();
    if (count > 64) throw new CcacheError('too many name components');
    const realm = data(1024).toString('utf8');
    const components: string[] = [];
    for (let i = 0; i < count; i++) components.push(data(1024).toString('utf8'));
    return { nameType, realm, components };
  };
  if (u8() !== 5) throw new CcacheError('not a credential cache');
  const v = u8();
  if (v !== 4 && v !== 3) throw new CcacheError(`unsupported credential cache version ${v}`);
  const headers: Ccache['headers'] = [];
  if (v === 4) {
    const hlen = u16();
    const end = p + hlen;
    need(hlen);
    while (p < end) {
      if (p + 4 > end) throw new CcacheError('malformed credential cache header');
      const tag = u16();
      const len = u16();
      if (p + len > end) throw new CcacheError('malformed credential cache header');
      headers.push({ tag, value: Buffer.from(buf.subarray(p, p + len)) });
      p += len;
    }
  }
  const cc: Ccache = { version: v, headers, principal: principal(), credentials: [] };
  while (p < buf.length) {
    const client = principal();
    const server = principal();
    const etype = u16();
    if (v === 3 && u16() !== etype) throw new CcacheError('credential cache v3 key with two different enctypes');
    const keyValue = data(1024);
    const cred: CcCredential = {
      client,
      server,
      key: { etype, value: keyValue },
      authtime: u32(),
      starttime: u32(),
      endtime: u32(),
      renewTill: u32(),
      isSkey: u8() !== 0,
      flags: u32(),
      addresses: [],
      authdata: [],
      ticket: Buffer.alloc(0),
      secondTicket: Buffer.alloc(0),
    };
    const nAddresses = u32();
    if (nAddresses > 256) throw new CcacheError('too many addresses');
    for (let i = 0; i < nAddresses; i++) cred.addresses.push({ type: u16(), data: data(1024) });
    const nAuthdata = u32();
    if (nAuthdata > 256) throw new CcacheError('too many authdata elements');
    for (let i = 0; i < nAuthdata; i++) cred.authdata.push({ type: u16(), data: data() });
    cred.ticket = data();
    cred.secondTicket = data();
    cc.credentials.push(cred);
  }
  return cc;
}

export function writeCcache(cc: Ccache): Buffer {
  const parts: Buffer[] = [];
  const u8 = (v: number) => parts.push(Buffer.from([v]));
  const u16 = (v: number) => {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(v);
    parts.push(b);
  };
  const u32 = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(v >>> 0);
    parts.push(b);
  };
  const data = (d: Buffer) => {
    u32(d.length);
    parts.push(d);
  };
  const principal = (pr: CcPrincipal) => {
    u32(pr.nameType);
    u32(pr.components.length);
    data(Buffer.from(pr.realm, 'utf8'));
    for (const c of pr.components) data(Buffer.from(c, 'utf8'));
  };
  u8(5);
  u8(cc.version);
  if (cc.version === 4) {
    u16(cc.headers.reduce((n, h) => n + 4 + h.value.length, 0));
    for (const h of cc.headers) {
      u16(h.tag);
      u16(h.value.length);
      parts.push(h.value);
    }
  } else if (cc.version !== 3) throw new CcacheError(`cannot write credential cache version ${String(cc.version)}`);
  else if (cc.headers.length) throw new CcacheError('credential cache version 3 has no header');
  principal(cc.principal);
  for (const c of cc.credentials) {
    principal(c.client);
    principal(c.server);
    u16(c.key.etype);
    if (cc.version === 3) u16(c.key.etype);
    data(c.key.value);
    u32(c.authtime);
    u32(c.starttime);
    u32(c.endtime);
    u32(c.renewTill);
    u8(c.isSkey ? 1 : 0);
    u32(c.flags);
    u32(c.addresses.length);
    for (const a of c.addresses) {
      u16(a.type);
      data(a.data);
    }
    u32(c.authdata.length);
    for (const a of c.authdata) {
      u16(a.type);
      data(a.data);
    }
    data(c.ticket);
    data(c.secondTicket);
  }
  return Buffer.concat(parts);
}

/** A configuration entry (what MIT kinit stores as fast_avail, pa_type, ...). */
export function configEntry(client: CcPrincipal, key: string, value: string, principal?: string): CcCredential {
  return {
    client,
    server: { nameType: 0, realm: CONF_REALM, components: ['krb5_ccache_conf_data', key, ...(principal ? [principal] : [])] },
    key: { etype: 0, value: Buffer.alloc(0) },
    authtime: 0,
    starttime: 0,
    endtime: 0,
    renewTill: 0,
    isSkey: false,
    flags: 0,
    addresses: [],
    authdata: [],
    ticket: Buffer.from(value),
    secondTicket: Buffer.alloc(0),
  };
}

/** The file path of a FILE: credential cache name (KRB5CCNAME), or the default. */
export function resolveCcacheName(name: string | undefined, uid: number = process.getuid?.() ?? 0): string {
  const n = name && name.length > 0 ? name : `FILE:/tmp/krb5cc_${uid}`;
  const m = /^([A-Za-z]+):(.*)$/.exec(n);
  if (!m) return n;
  if (m[1]!.toUpperCase() !== 'FILE') throw new CcacheError(`credential cache type ${m[1]} is not supported (use FILE:)`);
  return m[2]!;
}

export function loadCcacheFile(path: string): Ccache {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch {
    throw new CcacheError(`No credentials cache found (filename: ${path})`);
  }
  return readCcache(buf);
}

export function saveCcacheFile(path: string, cc: Ccache): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, writeCcache(cc), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
