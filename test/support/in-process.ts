/**
 * A realm in process, for the fast tier: its directory made by init's own
 * directory steps (server/init-directory.ts: the tree, the ID range, the
 * admin user and the admins group, the Kerberos principals, the objects'
 * default entries) in a SQLite store in a temporary directory, and commands
 * run through the one dispatch (framework/dispatch.ts) as the API runs
 * them, with a CallContext for a chosen principal, and the service the
 * server wires in that names its realm's servers. No server, socket or
 * process: a rule of the objects or the framework is tested in
 * milliseconds. A call's arguments, result and error go through the
 * JSON-RPC codec and the API's one error mapping (rpc/errors.ts), so a
 * test reads what it would read over HTTPS (caller.ts); that the API
 * carries them over HTTPS is the system tier's to test (realm.ts).
 */
import { changeOwnPassword } from '../../src/objects/passwd.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Accounts } from '../../src/account/state.js';
import { realmContainerDn, baseDnFromDomain } from '../../src/directory/layout.js';
import { openSqliteDirectory } from '../../src/directory/sqlite.js';
import type { Directory } from '../../src/directory/types.js';
import { API_VERSION } from '../../src/framework/api.js';
import type { CallContext, CommandRegistry, Principal, ServerInfo, Services } from '../../src/framework/command.js';
import { dispatch } from '../../src/framework/dispatch.js';
import { buildRegistry, realmSchema } from '../../src/objects/index.js';
import { AuthRefusal, kerberosLogin, passwordLogin } from '../../src/objects/login.js';
import { decodeJsonRequest, decodeJsonResponse, encodeJsonRequest, encodeJsonResponse } from '../../src/rpc/codec/json.js';
import type { RpcResponse, WireValue } from '../../src/rpc/codec/types.js';
import { toRpcError } from '../../src/rpc/errors.js';
import { resultToWire } from '../../src/rpc/server.js';
import { dataPaths } from '../../src/server/data-paths.js';
import { directorySteps } from '../../src/server/init-directory.js';
import { serverPrincipals } from '../../src/server/servers.js';
import { SERVER_VERSION } from '../../src/server/version.js';
import { silentLogger } from '../../src/log/logger.js';
import { ADMIN_PASSWORD, grantRole, resultOf, type Caller } from './caller.js';

export interface InProcessOptions {
  realm?: string;
  domain?: string;
  hostname?: string;
  /** the ID range, as `init --idstart/--idmax` (default: a random one) */
  idStart?: number;
  idMax?: number;
  /** what the server wires in besides the realm's servers' principals (IdP discovery, a host's enrolment...): none by default */
  services?: Services;
}

/** A caller in process: a principal (null: no one authenticated) whose calls run through dispatch. */
export class InProcessCaller implements Caller {
  constructor(
    private readonly realm: InProcessRealm,
    readonly principal: Principal | null,
  ) {}

  /** One call, as the API answers it: the decoded JSON-RPC envelope. A failure the API would hide as InternalError is thrown as it is, to show its cause. */
  async raw(method: string, args: WireValue[] = [], options: Record<string, WireValue> = {}): Promise<{ response: RpcResponse }> {
    const r = this.realm;
    const envelope = (result: WireValue, error: RpcResponse['error']) =>
      decodeJsonResponse(encodeJsonResponse({ result, error, id: 1, principal: this.principal?.name ?? null, version: r.server.version }));
    try {
      const request = decodeJsonRequest(encodeJsonRequest({ method, args, options, id: 1 }));
      const ctx: CallContext = { dir: r.dir, principal: this.principal, server: r.server, cache: new Map<string, unknown>(), registry: r.registry };
      const result = await dispatch(ctx, request.method, request.args, request.options);
      return { response: envelope(resultToWire(result), null) };
    } catch (err) {
      const error = toRpcError(err instanceof AuthRefusal ? err.publicError : err, silentLogger);
      if (error.name === 'InternalError') throw err;
      return { response: envelope(null, error) };
    }
  }

  async call(method: string, args: WireValue[] = [], options: Record<string, WireValue> = {}): Promise<any> {
    return resultOf((await this.raw(method, args, options)).response);
  }
}

export class InProcessRealm {
  readonly registry: CommandRegistry;
  readonly accounts: Accounts;
  readonly adminPassword = ADMIN_PASSWORD;
  /** the administrator made by init, as a caller */
  admin!: InProcessCaller;

  private constructor(
    readonly dir: Directory,
    readonly server: ServerInfo,
    private readonly tmp: string,
    services: Services,
  ) {
    this.registry = buildRegistry(services);
    this.accounts = new Accounts(dir);
  }

  /** A realm made as `dirid-server init` makes its directory (the default names are realm.ts's). */
  static async open(o: InProcessOptions = {}): Promise<InProcessRealm> {
    const realm = o.realm ?? 'EXAMPLE.TEST';
    const domain = o.domain ?? 'example.test';
    const hostname = o.hostname ?? 'localhost';
    const tmp = mkdtempSync(join(tmpdir(), 'dirid-inproc-'));
    const paths = dataPaths(tmp);
    const dir = await openSqliteDirectory({ path: paths.store, baseDn: baseDnFromDomain(domain), schema: realmSchema, masterKey: randomBytes(32), create: true });
    try {
      const options = { dataDir: tmp, realm, domain, hostname, adminPassword: ADMIN_PASSWORD, ...(o.idStart !== undefined ? { idStart: o.idStart } : {}), ...(o.idMax !== undefined ? { idMax: o.idMax } : {}) };
      for (const step of directorySteps) await step.run({ paths, config: { realm, hostname }, options, dir });
      // the search limits init writes to server.conf
      const server: ServerInfo = { version: SERVER_VERSION, apiVersion: API_VERSION, realm, domain, searchSizeLimit: 100, searchTimeLimit: 2 };
      // the principals of the realm's servers, kept from harm, as start.ts wires them in: this one's (on `hostname`)
      const services: Services = { serverPrincipals: () => serverPrincipals(dir, realm, hostname), ...o.services };
      const r = new InProcessRealm(dir, server, tmp, services);
      r.admin = await r.as('admin');
      return r;
    } catch (e) {
      await dir.close();
      rmSync(tmp, { recursive: true, force: true });
      throw e;
    }
  }

  get realm(): string {
    return this.server.realm;
  }

  /** A caller acting as the user or service `name` (a login, or a principal name), as the API takes it from a Kerberos ticket: the account must be one that may authenticate now (objects/login.ts kerberosLogin). */
  async as(name: string): Promise<InProcessCaller> {
    const principal = name.includes('@') ? name : `${name}@${this.realm}`;
    const p = await kerberosLogin(this.accounts, principal);
    if (p === null) throw new Error(`${principal}: no such principal`);
    if (p instanceof AuthRefusal) throw new Error(`${principal} may not authenticate: ${p.message}`);
    return new InProcessCaller(this, p);
  }

  /** A caller of no principal, as an API request without credentials. */
  anonymous(): InProcessCaller {
    return new InProcessCaller(this, null);
  }

  /** The password login every transport runs (objects/login.ts passwordLogin): the principal, or the refusal. */
  passwordLogin(user: string, password: string): Promise<Principal | AuthRefusal> {
    return passwordLogin(this.accounts, this.realm, user, password);
  }

  /** Whether `user` logs in with `password` now. */
  async logsIn(user: string, password: string): Promise<boolean> {
    return !((await this.passwordLogin(user, password)) instanceof AuthRefusal);
  }

  /** A caller of `user`, logged in with `password`; throws when the login is refused (as realm.ts userSession). */
  async login(user: string, password: string): Promise<InProcessCaller> {
    const p = await this.passwordLogin(user, password);
    if (p instanceof AuthRefusal) throw new Error(`${user}'s login failed: ${p.message}`);
    return new InProcessCaller(this, p);
  }

  /**
   * A user an administrator adds with a temporary password, who then chooses
   * `password` at the first login (the change the API's change_password
   * runs, objects/passwd.ts changeOwnPassword), as realm.ts addActiveUser
   * does over HTTPS: a password an administrator sets has expired.
   */
  async addActiveUser(login: string, password: string, options: Record<string, WireValue> = {}): Promise<any> {
    const temporary = `Temporary-${randomBytes(6).toString('hex')}`;
    const added = await this.admin.call('user_add', [login], { first: login, last: 'User', ...options, password: temporary });
    const done = await changeOwnPassword({ dir: this.dir, accounts: this.accounts, registry: this.registry, server: this.server }, { user: login, oldPassword: temporary, newPassword: password });
    if (done.outcome !== 'changed') throw new Error(`${login} could not choose a password at the first login: ${done.message}`);
    return added;
  }

  /**
   * A delegate, logged in: a user with a usable password who holds
   * `privilege` through the role `role` (made here), as an administrator
   * delegates one (caller.ts grantRole).
   */
  async delegate(login: string, password: string, role: string, privilege: string): Promise<InProcessCaller> {
    await this.addActiveUser(login, password, { first: login[0]!.toUpperCase(), last: 'A' });
    await grantRole(this.admin, role, privilege, { users: [login] });
    return this.login(login, password);
  }

  async close(): Promise<void> {
    await this.dir.close();
    rmSync(this.tmp, { recursive: true, force: true });
  }
}

/** A realm in process and its administrator (as realm.ts startAdminRealm, without a server). */
export async function openAdminRealm(o: InProcessOptions = {}): Promise<{ realm: InProcessRealm; admin: InProcessCaller }> {
  const realm = await InProcessRealm.open(o);
  return { realm, admin: realm.admin };
}
