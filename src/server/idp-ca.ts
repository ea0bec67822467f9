/**
 * The extra CAs the server trusts for IdP endpoints: `--idp-ca-file`, given
 * any number of times, or server.conf's `idp_ca_file` (one file, or several
 * separated by commas). Each file is read and checked when the server
 * starts: a missing or unreadable file, or one holding no PEM certificate
 * (a key, a password file), stops the start with a message naming it. Only
 * the certificates go on to the IdP client, all files' together.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../cli/ini.js';

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

/** server.conf's idp_ca_file as a list of files (empty items dropped). */
export function idpCaFilesOf(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
}

/** The list as server.conf's idp_ca_file holds it; undefined for none. A file name with a comma cannot be listed there. */
export function idpCaFileValue(files: readonly string[]): string | undefined {
  for (const f of files) if (f.includes(',')) throw new ConfigError(`server.conf: idp_ca_file cannot name ${f}, whose name holds a comma`);
  return files.length > 0 ? files.join(', ') : undefined;
}

/**
 * The PEM certificates of `files`, one bundle, or undefined for no file.
 * `origin` says where the list came from, for the messages
 * ('--idp-ca-file' or 'server.conf idp_ca_file').
 */
export function readIdpCaFiles(files: readonly string[], origin: string): string | undefined {
  if (files.length === 0) return undefined;
  const certs: string[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'a directory, not a file' : (e as Error).message;
      throw new ConfigError(`${origin} ${file}: cannot read the IdP CA certificates (${why})`);
    }
    const blocks = text.match(CERTIFICATE_BLOCK) ?? [];
    if (blocks.length === 0) {
      const key = /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text) ? ' (it holds a private key)' : '';
      throw new ConfigError(`${origin} ${file}: holds no PEM certificate${key}; give the IdP's CA certificate (-----BEGIN CERTIFICATE-----)`);
    }
    blocks.forEach((block, i) => {
      try {
        new X509Certificate(block);
      } catch {
        throw new ConfigError(`${origin} ${file}: certificate ${i + 1} is not a valid PEM certificate`);
      }
    });
    certs.push(...blocks);
  }
  return certs.join('\n') + '\n';
}
