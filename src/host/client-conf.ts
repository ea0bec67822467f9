/**
 * The `dirid` client's configuration on a joined host
 * (/etc/dirid/default.conf): the realm, its domain, the preferred server's
 * API and the realm CA, so that `dirid` works there for every user.
 */
import { hostPort, HOST_PATHS, USUAL_PORTS, type RealmFacts } from './realm-facts.js';

export function clientConfText(facts: RealmFacts, caFile: string = HOST_PATHS.caFile): string {
  const s = facts.servers[0];
  if (!s) throw new Error('the realm has no server');
  return `# Written by dirid join for realm ${facts.realm}.
[global]
realm = ${facts.realm}
domain = ${facts.domain}
server = ${s.hostname}
xmlrpc_uri = https://${hostPort(s.hostname, s.https, USUAL_PORTS.https)}/dirid/xml
ca_file = ${caFile}
`;
}
