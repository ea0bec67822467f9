/**
 * Runs one decoded request for a connection (docs/ldap.md, "The
 * service"): first whether the bound principal's account may still act
 * (account/state.ts, as the API asks on each request of a session), then the
 * operation: bind, search, compare, the extended operations; add, modify,
 * delete and modify DN are refused with unwillingToPerform, pointing to the
 * API, because every write goes through the framework's rules.
 */
import type { LdapMessage } from '../ldap/protocol.js';
import type { LdapRequest } from '../ldap/protocol-requests.js';
import { stillUsable } from '../objects/login.js';
import { bind } from './bind.js';
import { compare } from './compare.js';
import type { LdapConnection, Operation, OpResult } from './connection.js';
import type { ServiceContext } from './context.js';
import { refuse } from './errors.js';
import { extended } from './extended-ops.js';
import { search } from './search.js';

/** The message of every refused write. */
export const WRITE_REFUSAL = 'writes over LDAP are not supported: use the dirid API (dirid user-mod …, dirid group-add-member …)';

/** A bound principal whose account may no longer act loses its binding, and the request is refused. */
async function checkBinding(ctx: ServiceContext, conn: LdapConnection): Promise<void> {
  const p = conn.principal;
  if (!p) return;
  const state = await stillUsable(ctx.accounts, p.dn);
  if (state === 'usable') return;
  conn.principal = null;
  if (state === 'gone') throw refuse('insufficientAccessRights', 'the bound account no longer exists; bind again');
  throw state;
}
export async function handle(ctx: ServiceContext, conn: LdapConnection, op: Operation, m: LdapMessage<LdapRequest>): Promise<OpResult> {
  const req = m.protocolOp;
  if (req.op === 'bindRequest') return bind(ctx, conn, req, op.controls);
  await checkBinding(ctx, conn);
  switch (req.op) {
    case 'searchRequest':
      return search(ctx, conn, op, req);
    case 'compareRequest':
      return compare(ctx, conn, req);
    case 'extendedReq':
      return extended(ctx, conn, req);
    case 'addRequest':
    case 'modifyRequest':
    case 'delRequest':
    case 'modDNRequest':
      throw refuse('unwillingToPerform', WRITE_REFUSAL);
    default:
      throw refuse('protocolError', `${req.op} cannot be run`);
  }
}
