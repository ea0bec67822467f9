/**
 * Password hashing for directory logins (the session login endpoint).
 * scrypt from node:crypto; the stored form is `{SCRYPT}N$r$p$salt$hash`
 * (base64), kept in the secret attribute userPassword, so it is also
 * encrypted at rest and never output.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const PARAMS = { N: 16384, r: 8, p: 1 } as const;
const KEYLEN = 32;

function scryptAsync(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, KEYLEN, { ...PARAMS, maxmem: 64 * 1024 * 1024 });
  return `{SCRYPT}${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const m = /^\{SCRYPT\}(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (!m) return false;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (N > 1 << 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(m[5]!, 'base64');
  const got = await scryptAsync(password, Buffer.from(m[4]!, 'base64'), expected.length, { N, r, p, maxmem: 256 * 1024 * 1024 });
  return got.length === expected.length && timingSafeEqual(got, expected);
}
