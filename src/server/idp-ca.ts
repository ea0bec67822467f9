/**
 * The extra CAs the server trusts for IdP endpoints: `--idp-ca-file`, given
 * any number of times, or server.conf's `idp_ca_file` (one file, or several
 * separated by commas: config.ts reads and writes that list). Each file is read and checked when the server
 * starts: a missing or unreadable file, or one holding no PEM certificate
 * (a key, a password file), stops the start with a message naming it. Only
 * the certificates go on to the IdP client, all files' together.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../cli/ini.js';
import { readProblem } from './config.js';

const CERTIFICATE_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n[\s\S]*?-----END CERTIFICATE-----/g;

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
      throw new ConfigError(`${origin} ${file}: cannot read the IdP CA certificates (${readProblem(e)})`);
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
