/**
 * The realm CA `dirid join` trusts, never taken on faith: from a file the
 * administrator gives (`--ca-file`), or from the server's own TLS chain when
 * one certificate of it is a CA whose SHA-256 fingerprint the administrator
 * gives (`--ca-fingerprint`, as `openssl x509 -noout -fingerprint -sha256`
 * prints it, colons optional). Either way the server's certificate must
 * then verify against that CA for the server's name, or nothing is
 * written.
 */
import { readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { connect, type PeerCertificate } from 'node:tls';
import { CliError } from './errors.js';

export type CaSource = { file: string } | { fingerprint: string };

/** `AB:CD:…` or `abcd…` (64 hex digits, `sha256:` or `SHA256 Fingerprint=` before it allowed) → `AB:CD:…` as node prints it. */
export function normalizeFingerprint(text: string): string {
  const hex = text
    .trim()
    .replace(/^(sha256( fingerprint)?[:=]\s*)/i, '')
    .replace(/:/g, '')
    .toUpperCase();
  if (!/^[0-9A-F]{64}$/.test(hex)) throw new CliError(`invalid --ca-fingerprint '${text}': expected the CA certificate's SHA-256 fingerprint (64 hexadecimal digits, colons allowed)`);
  return hex.match(/../g)!.join(':');
}

/** The PEM certificates of a file; throws when it holds none. */
export function pemCertificates(text: string, source: string): X509Certificate[] {
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const certs: X509Certificate[] = [];
  for (const b of blocks) {
    try {
      certs.push(new X509Certificate(b));
    } catch {
      throw new CliError(`${source} holds a certificate that cannot be read`);
    }
  }
  if (certs.length === 0) throw new CliError(`${source} holds no PEM certificate`);
  return certs;
}

interface Handshake {
  authorized: boolean;
  error?: string;
  chain: X509Certificate[];
}

function handshake(host: string, port: number, ca: string | undefined, timeoutMs = 15_000): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, servername: host, rejectUnauthorized: false, ...(ca !== undefined ? { ca } : {}), timeout: timeoutMs });
    const fail = (e: Error) => {
      socket.destroy();
      reject(new CliError(`cannot reach the dirid server ${host}:${port}: ${e.message}`));
    };
    socket.once('timeout', () => fail(new Error('timed out')));
    socket.once('error', fail);
    socket.once('secureConnect', () => {
      const chain: X509Certificate[] = [];
      let c: PeerCertificate | undefined = socket.getPeerCertificate(true) as PeerCertificate;
      const seen = new Set<string>();
      while (c && c.raw && !seen.has(c.fingerprint256)) {
        seen.add(c.fingerprint256);
        chain.push(new X509Certificate(c.raw));
        c = (c as PeerCertificate & { issuerCertificate?: PeerCertificate }).issuerCertificate;
      }
      const authorized = socket.authorized;
      const error = socket.authorizationError ? String(socket.authorizationError) : undefined;
      socket.end();
      resolve({ authorized, ...(error ? { error } : {}), chain });
    });
  });
}

/**
 * The CA's PEM, once the server at host:port has shown a certificate for
 * `host` that it issued. Throws a CliError saying what did not match.
 */
export async function trustedCa(host: string, port: number, source: CaSource): Promise<string> {
  let pem: string;
  if ('file' in source) {
    let text: string;
    try {
      text = readFileSync(source.file, 'utf8');
    } catch {
      throw new CliError(`cannot read the CA file ${source.file}`);
    }
    const certs = pemCertificates(text, source.file);
    if (!certs.every((c) => c.ca)) throw new CliError(`${source.file} holds a certificate that is not a CA`);
    pem = certs.map((c) => c.toString()).join('');
  } else {
    const want = normalizeFingerprint(source.fingerprint);
    const shown = await handshake(host, port, undefined);
    const ca = shown.chain.find((c) => c.fingerprint256 === want);
    if (!ca) throw new CliError(`the server ${host}:${port} did not show a certificate with the SHA-256 fingerprint ${want}: check the fingerprint (on the server: openssl x509 -noout -fingerprint -sha256 -in DATA_DIR/ca.crt); nothing was changed`);
    if (!ca.ca) throw new CliError(`the certificate with the fingerprint ${want} is not a CA: give the realm CA's fingerprint (DATA_DIR/ca.crt)`);
    pem = ca.toString();
  }
  const checked = await handshake(host, port, pem);
  if (!checked.authorized) {
    throw new CliError(`the server ${host}:${port} is not trusted: its certificate does not verify against the given CA (${checked.error ?? 'unknown reason'}); nothing was changed`);
  }
  const leaf = checked.chain[0];
  if (!leaf || leaf.checkHost(host) === undefined) throw new CliError(`the certificate of ${host}:${port} does not name ${host}; nothing was changed`);
  return pem;
}
