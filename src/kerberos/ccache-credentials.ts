/** Usable credentials out of a credential cache (for Negotiate and FAST armor). */
import type { EncKdcRepPart } from './asn1/kdc-rep.js';
import { decodeTicket } from './asn1/ticket.js';
import { CONF_REALM, type Ccache } from './ccache.js';
import type { Credentials } from './client.js';

/** The credentials for `serverName` (`svc/host@REALM`) valid at least `minValiditySec` more. */
export function findCredentials(cc: Ccache, serverName: string, minValiditySec = 0): Credentials | null {
  const now = Date.now() / 1000;
  const c = cc.credentials.find((x) => x.server.realm !== CONF_REALM && `${x.server.components.join('/')}@${x.server.realm}` === serverName && x.endtime >= now + minValiditySec);
  if (!c) return null;
  const sname = { nameType: c.server.nameType, nameString: c.server.components };
  const part: EncKdcRepPart = { key: { etype: c.key.etype, value: c.key.value }, lastReq: [], nonce: 0, flags: c.flags, authtime: new Date(c.authtime * 1000), endtime: new Date(c.endtime * 1000), srealm: c.server.realm, sname };
  return {
    client: { nameType: c.client.nameType, nameString: c.client.components },
    crealm: c.client.realm,
    server: sname,
    srealm: c.server.realm,
    sessionKey: { etype: c.key.etype, value: c.key.value },
    ticket: decodeTicket(c.ticket),
    part,
  };
}
