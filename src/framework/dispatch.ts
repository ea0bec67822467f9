/**
 * Runs one API call: look up the command, check the caller's access, check
 * the inputs, run. Every transport (JSON-RPC, XML-RPC, LDAP's Password
 * Modify, the password service) calls this; none of them holds domain
 * rules. Every directory write the command commits is logged on the
 * caller's logger as it commits (audit.ts: who, which command, which entry,
 * which attributes).
 */
import { recordingWrites } from '../directory/written.js';
import { authorize } from './access.js';
import { auditWrites } from './audit.js';
import { checkInputs, type CallContext, type CommandResult } from './command.js';

export async function dispatch(ctx: CallContext, method: string, args: unknown[], options: Record<string, unknown>): Promise<CommandResult> {
  const cmd = ctx.registry.get(method);
  await authorize(ctx, cmd);
  const input = checkInputs(cmd, args, options);
  const log = ctx.log;
  if (!log) return cmd.run(ctx, input.args, input.options);
  const who = { principal: ctx.principal?.name ?? null, command: cmd.name };
  return recordingWrites((ops) => auditWrites(log, ctx.dir.schema, who, ops), () => cmd.run(ctx, input.args, input.options));
}
