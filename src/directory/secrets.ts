/**
 * Secrets at rest: sealed boxes (crypto/sealed-box.ts) under the realm's
 * master key, with additional data binding the ciphertext to the entry
 * (its entryUUID) and the attribute, so a value copied to another entry or
 * attribute does not decrypt. Sealed and opened by the write path
 * (write-path.ts), so no backend sees a plaintext.
 */
import { open, seal } from '../crypto/sealed-box.js';
import { DirectoryError } from './types.js';

const PREFIX = 'v1:';

/** Additional data: the entry's entryUUID, NUL, the attribute's name in lower case. */
function aad(entryUuid: string, attr: string): Buffer {
  return Buffer.from(`${entryUuid}\u0000${attr.toLowerCase()}`, 'utf8');
}

/** Seals one plaintext value for an entry's attribute (canonical name). */
export function sealSecret(masterKey: Buffer, entryUuid: string, attr: string, plaintext: string): string {
  return PREFIX + seal(masterKey, plaintext, aad(entryUuid, attr)).toString('base64');
}

/** Opens a sealed value; 'unwillingToPerform' (no detail of the secret) when it does not authenticate. */
export function openSecret(masterKey: Buffer, entryUuid: string, attr: string, sealed: string): string {
  const fail = () => new DirectoryError('unwillingToPerform', `stored secret ${attr} cannot be decrypted (wrong master key or moved value)`, { attr });
  if (typeof sealed !== 'string' || !sealed.startsWith(PREFIX)) throw fail();
  const plain = open(masterKey, Buffer.from(sealed.slice(PREFIX.length), 'base64'), aad(entryUuid, attr));
  if (!plain) throw fail();
  return plain.toString('utf8');
}
