/**
 * The KDC's PKINIT certificate and key in the data directory (`kdc.crt`,
 * `kdc.key` mode 0600), issued by the realm CA (pki.ts): an init step, run
 * after the CA exists; at start, a realm made before anonymous PKINIT, or
 * whose KDC certificate is about to expire, gets a new one
 * (ensureKdcCertificate), as kerberos-init.ts adds kadmin/changepw; and the
 * identity the KDC signs with, read from those files.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as x509 from '@peculiar/x509';
import { pkinitIdentity, type PkinitIdentity } from '../kdc/pkinit-identity.js';
import { writeFileAtomic, type DataPaths } from './config.js';
import type { InitStep } from './init-step.js';
import { issueKdcCert } from './pki.js';

/** A KDC certificate is renewed at start when it expires within this time. */
const RENEW_BEFORE_MS = 30 * 24 * 60 * 60 * 1000;

/** Issues the KDC certificate into `paths` with the realm CA of `caPaths` (another server's data directory for a replica). */
export async function writeKdcCertificate(paths: DataPaths, realm: string, caPaths: DataPaths = paths): Promise<void> {
  const cert = await issueKdcCert({ certPem: readFileSync(caPaths.caCert, 'utf8'), keyPem: readFileSync(caPaths.caKey, 'utf8') }, realm);
  // the key first: a certificate is never left beside another key
  writeFileAtomic(paths.kdcKey, cert.keyPem, 0o600);
  writeFileAtomic(paths.kdcCert, cert.certPem, 0o644);
}

/** Whether the KDC certificate is there and good for a while yet. */
function current(paths: DataPaths, now: number): boolean {
  if (!existsSync(paths.kdcCert) || !existsSync(paths.kdcKey)) return false;
  try {
    return new x509.X509Certificate(readFileSync(paths.kdcCert, 'utf8')).notAfter.getTime() > now + RENEW_BEFORE_MS;
  } catch {
    return false;
  }
}

/**
 * Issues the KDC certificate when it is missing or about to expire; a
 * reason when it cannot (no CA key here), which leaves anonymous PKINIT
 * unavailable and everything else as it was.
 */
export async function ensureKdcCertificate(paths: DataPaths, realm: string, now = Date.now()): Promise<string | null> {
  if (current(paths, now)) return null;
  if (!existsSync(paths.caCert) || !existsSync(paths.caKey)) return `no realm CA key in ${paths.dir}`;
  try {
    await writeKdcCertificate(paths, realm);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
}

/** The identity the KDC signs anonymous PKINIT replies with; undefined when the files are missing or unreadable. */
export function loadKdcIdentity(paths: DataPaths): PkinitIdentity | undefined {
  if (!existsSync(paths.kdcCert) || !existsSync(paths.kdcKey)) return undefined;
  try {
    return pkinitIdentity(readFileSync(paths.kdcCert, 'utf8'), readFileSync(paths.kdcKey, 'utf8'));
  } catch {
    return undefined;
  }
}

export const kdcCertStep: InitStep = {
  name: 'KDC certificate for anonymous PKINIT',
  run: ({ paths, config }) => writeKdcCertificate(paths, config.realm),
};
