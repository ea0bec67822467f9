/**
 * The names a dirid server's TLS certificate carries, and init's words
 * when other hosts cannot reach the server by the name the realm's files
 * give it. Hosts check the certificate against the name they reach the
 * server by (SSSD's StartTLS, MIT's PKINIT anchors aside, the `dirid`
 * client, a browser): a name missing from it fails the handshake, and SSSD
 * then goes offline without saying why.
 */
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { HOST_NAME } from '../framework/params.js';
import { localMachineName } from './kerberos-init.js';

/** Whether `san` is a host name (any case) or an IP address. */
export function validSan(san: string): boolean {
  return new RegExp(HOST_NAME.source, 'i').test(san) || isIP(san) !== 0;
}

/**
 * The names the server's certificate carries: `hostname`, the `sans`
 * (names and addresses), the machine's name and its addresses other than
 * link-local ones, localhost, 127.0.0.1 and ::1.
 */
export function serverCertNames(hostname: string, sans: readonly string[]): { dnsNames: string[]; ipAddresses: string[] } {
  const machine = localMachineName();
  const addresses = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((a) => !a.internal && !/^fe80:/i.test(a.address)).map((a) => a.address.replace(/%.*$/, '')));
  return {
    dnsNames: [...new Set([hostname, ...sans.filter((s) => isIP(s) === 0).map((s) => s.toLowerCase()), ...(machine ? [machine] : []), 'localhost'])],
    ipAddresses: [...new Set([...sans.filter((s) => isIP(s) !== 0), ...addresses, '127.0.0.1', '::1'])],
  };
}

/** What init says when other hosts cannot reach the server by the name the realm's files give it. */
export function reachabilityWarnings(hostname: string, sans: readonly string[]): string[] {
  const others = sans.length ? ` (the certificate also names ${sans.join(', ')})` : '';
  if (hostname === 'localhost' || hostname.endsWith('.localhost')) {
    return [
      `dirid-server: WARNING: the realm names this server "${hostname}" in krb5.conf, sssd.conf and default.conf${others}: ` +
        'no other host can reach it by that name, so no host can join this realm or log its users in (SSSD goes offline). ' +
        'For a realm hosts use, run init with --hostname set to the name they reach this server by (its DNS name), and --san for any other name.',
    ];
  }
  if (!hostname.includes('.')) {
    return [`dirid-server: WARNING: the realm names this server "${hostname}", which is not fully qualified: hosts of the domain reach a server by its DNS name; use --hostname with that name.`];
  }
  return [];
}
