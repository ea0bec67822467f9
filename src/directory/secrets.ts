/**
 * Secrets at rest: AES-256-GCM under the realm's master key, a random 96-bit
 * nonce per value, and additional data binding the ciphertext to the entry
 * (its entryUUID) and the attribute, so a value copied to another entry or
 * attribute does not decrypt. Shared by every backend.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DirectoryError } from './types.js';

const PREFIX = 'v1:';

/** Additional data: the entry's entryUUID, NUL, the attribute's name in lower case. */
function aad(entryUuid: string, attr: string): Buffer {
  return Buffer.from(`${entryUuid}\u0000${attr.toLowerCase()}`, 'utf8');
}

/** Seals one plaintext value for an entry's attribute (canonical name). */
export function sealSecret(masterKey: Buffer, entryUuid: string, attr: string, plaintext: string): string {
  const nonce = randomBytes(12);
  const c = createCipheriv('aes-256-gcm', masterKey, nonce);
  c.setAAD(aad(entryUuid, attr));
  const ct = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
  return PREFIX + Buffer.concat([nonce, ct, c.getAuthTag()]).toString('base64');
}

/** Opens a sealed value; 'unwillingToPerform' (no detail of the secret) when it does not authenticate. */
export function openSecret(masterKey: Buffer, entryUuid: string, attr: string, sealed: string): string {
  const fail = () => new DirectoryError('unwillingToPerform', `stored secret ${attr} cannot be decrypted (wrong master key or moved value)`, { attr });
  if (typeof sealed !== 'string' || !sealed.startsWith(PREFIX)) throw fail();
  const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64');
  if (raw.length < 12 + 16) throw fail();
  try {
    const d = createDecipheriv('aes-256-gcm', masterKey, raw.subarray(0, 12));
    d.setAAD(aad(entryUuid, attr));
    d.setAuthTag(raw.subarray(raw.length - 16));
    return Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]).toString('utf8');
  } catch {
    throw fail();
  }
}
