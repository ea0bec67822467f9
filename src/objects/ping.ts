/**
 * ping (docs/conventions.md): exercises the whole stack (HTTPS, RPC,
 * authentication, dispatch) and reports the server and API versions.
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
    return { result: null, summary: `dirid server version ${ctx.server.version}. API version ${ctx.server.apiVersion}.` };
  },
};
