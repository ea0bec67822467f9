/**
 * Password hashing for directory logins (the password login rule of
 * login.ts), and the check that costs the same without a stored password.
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

/**
 * A stored form no password matches (a random salt and hash, never computed),
 * with the parameters hashPassword uses: checking a password against it
 * costs one scrypt, as checking a real one does.
 */
const NO_ONES_PASSWORD = `{SCRYPT}${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${randomBytes(16).toString('base64')}$${randomBytes(KEYLEN).toString('base64')}`;

/**
 * `password` checked against `stored`, or, when there is none (no such
 * user, no password, an account refused before its password is looked at),
 * against a stored form no password matches: false, after the same scrypt
 * work, so the time a login takes does not tell whether the user exists.
 */
export function checkPassword(password: string, stored: string | undefined): Promise<boolean> {
  return verifyPassword(password, stored ?? NO_ONES_PASSWORD);
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
