/**
 * What every LDAP operation works with (docs/ldap.md, "The service"): the
 * store and its accounts, the realm, the command registry for the
 * operations that run a command (Password Modify runs `passwd`), the search
 * limits and the GSSAPI acceptor's keys. The service (server.ts) builds one
 * per start; operations only read it.
 */
import type { Accounts } from '../account/state.js';
import type { Directory } from '../directory/types.js';
import type { CommandRegistry, ServerInfo } from '../framework/command.js';
import type { AcceptSecContextOptions } from '../kerberos/gss-context.js';

export interface ServiceContext {
  readonly dir: Directory;
  readonly accounts: Accounts;
  readonly realm: string;
  readonly registry: CommandRegistry;
  readonly server: ServerInfo;
  /** the server's search limits: a client may ask for less, never more (0: none) */
  readonly sizeLimit: number;
  /** seconds */
  readonly timeLimit: number;
  /** finds the keys of ldap/ principals and remembers authenticators seen (SASL GSSAPI) */
  readonly gssapi: AcceptSecContextOptions;
}
