/**
 * What a test calls commands through: an API session over HTTPS
 * (rpc-client.ts RpcSession) or a caller in process (in-process.ts). Both
 * return the command's result as the API sends it and reject with an Error
 * carrying the public error's `code` and `errorName`, so a test reads the
 * same either way; and the setup both kinds of test share.
 */
import type { RpcResponse, WireValue } from '../../src/rpc/codec/types.js';

export interface Caller {
  /** Calls `method` (a command name, `-` as `_`); resolves to the result, rejects with the public error (`code`, `errorName`). */
  call(method: string, args?: WireValue[], options?: Record<string, WireValue>): Promise<any>;
}

/** A response's result, or its public error thrown as an Error with `code` and `errorName`: what Caller.call resolves to or rejects with. */
export function resultOf(response: RpcResponse): any {
  if (response.error) {
    const e = new Error(response.error.message) as Error & { code: number; errorName: string };
    e.code = response.error.code;
    e.errorName = response.error.name;
    throw e;
  }
  return response.result;
}

/** The admin password of test realms, over HTTPS (realm.ts) and in process (in-process.ts). */
export const ADMIN_PASSWORD = 'Secret123-admin';

/**
 * A role `role` (made here) granting `privilege`, given to `members`
 * (`users` or `groups`, added already): a delegation as an administrator
 * makes one.
 */
export async function grantRole(admin: Caller, role: string, privilege: string, members: { users?: string[]; groups?: string[] }): Promise<void> {
  await admin.call('role_add', [role], {});
  await admin.call('role_add_privilege', [role], { privileges: [privilege] });
  await admin.call('role_add_member', [role], members);
}
