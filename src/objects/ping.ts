/**
 * ping (specification §2.3.1, §4.7): exercises the whole stack (HTTPS, RPC,
 * authentication, dispatch) and reports the server and API versions.
 * Authenticated callers only (§5.1); it reads and writes nothing.
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
    return { result: null, summary: `dirid server version ${ctx.server.version}. API version ${ctx.server.apiVersion}.` };
  },
};
