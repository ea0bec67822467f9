/**
 * ping (docs/conventions.md): exercises the whole stack (HTTPS, RPC,
 * authentication, dispatch) and reports the server and API versions, and
 * who the caller is: its principal and the authentication indicators of the
 * ticket its session came from (`dirid -v ping` shows them).
 * Authenticated callers only; it reads and writes nothing.
 */
import type { Command } from '../framework/command.js';

export const pingCommand: Command = {
  name: 'ping',
  doc: 'Ping a remote server.',
  args: [],
  options: {},
  access: 'authenticated',
  output: 'summary',
  async run(ctx) {
    const p = ctx.principal;
    return {
      result: p ? { principal: p.name, auth_indicators: p.authIndicators ?? [] } : null,
      summary: `dirid server version ${ctx.server.version}. API version ${ctx.server.apiVersion}.`,
    };
  },
};
