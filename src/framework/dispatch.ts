/**
 * Runs one API call: look up the command, check the caller's access, check
 * the inputs, run. Every transport (JSON-RPC, XML-RPC, later LDAP extended
 * operations) calls this; none of them holds domain rules.
 */
import { authorize } from './access.js';
import { checkInputs, type CallContext, type CommandResult } from './command.js';

export async function dispatch(ctx: CallContext, method: string, args: unknown[], options: Record<string, unknown>): Promise<CommandResult> {
  const cmd = ctx.registry.get(method);
  await authorize(ctx, cmd);
  const input = checkInputs(cmd, args, options);
  return cmd.run(ctx, input.args, input.options);
}
