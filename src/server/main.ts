/**
 * `dirid-server`: init | replica-prepare | start | backup | restore | check.
 * Argument parsing, signals and exit codes only (the usage and the options
 * are usage.ts's); the work is in init.ts, replica.ts, start.ts, backup.ts
 * and restore.ts.
 */
import { parseArgs } from 'node:util';
import { hostname } from 'node:os';
import { initRealm, readPasswordFile, InitError } from './init.js';
import { prepareReplica } from './replica.js';
import { startServer } from './start.js';
import { watchStarters } from './starter-watch.js';
import { parseArgsProblem } from '../cli/errors.js';
import { COMMAND_OPTIONS, USAGE } from './usage.js';
import { backupRealm, readPassphraseFile } from './backup.js';
import { restoreRealm } from './restore.js';
import { checkSqliteStore } from '../directory/sqlite-backup.js';
import { dataPaths, readServerConfig, shownDatabase } from './config.js';
import { readMasterKey } from './store.js';

function port(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new InitError(`--${name} must be a port number (0 picks a free port)`);
  return Number(v);
}

function idNumber(v: string, name: string): number {
  if (!/^\d{1,10}$/.test(v)) throw new InitError(`--${name} must be a number, not '${v}'\n${USAGE}`);
  return Number(v);
}

/** A usage error: the reason, then the usage (exit 1, as every error: docs/conventions.md). */
class UsageError extends Error {}

/**
 * A subcommand's options, as node:util parses them, with -h/--help (undefined:
 * the usage was printed on standard output) and a usage error for an option
 * it does not know.
 */
function options<T extends Parameters<typeof parseArgs>[0] & { options: object }>(rest: string[], config: T) {
  let parsed;
  try {
    parsed = parseArgs({ ...config, args: rest, options: { ...config.options, help: { type: 'boolean', short: 'h' } }, strict: true });
  } catch (e) {
    throw new UsageError(parseArgsProblem(e));
  }
  if ((parsed.values as { help?: boolean }).help) {
    process.stdout.write(USAGE);
    return undefined;
  }
  return parsed;
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  if (cmd === '--help' || cmd === '-h' || cmd === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  if (cmd === 'init') {
    const parsed = options(rest, { options: COMMAND_OPTIONS.init });
    if (!parsed) return 0;
    const sans = (parsed.values as { san?: string[] }).san ?? [];
    const values = parsed.values as Record<string, string | undefined>;
    for (const k of ['data-dir', 'realm', 'domain', 'admin-password-file'] as const) {
      if (!values[k]) throw new InitError(`--${k} is required\n${USAGE}`);
    }
    await initRealm(
      {
        dataDir: values['data-dir']!,
        realm: values.realm!,
        domain: values.domain!,
        hostname: (values.hostname ?? hostname()).toLowerCase(),
        adminPassword: readPasswordFile(values['admin-password-file']!),
        ...(values.listen !== undefined ? { listen: values.listen } : {}),
        httpsPort: port(values['https-port'], 'https-port'),
        httpPort: port(values['http-port'], 'http-port'),
        kdcPort: port(values['kdc-port'], 'kdc-port'),
        kpasswdPort: port(values['kpasswd-port'], 'kpasswd-port'),
        ldapPort: port(values['ldap-port'], 'ldap-port'),
        ldapsPort: port(values['ldaps-port'], 'ldaps-port'),
        ...(values.idstart !== undefined ? { idStart: idNumber(values.idstart, 'idstart') } : {}),
        ...(values.idmax !== undefined ? { idMax: idNumber(values.idmax, 'idmax') } : {}),
        ...(values.database !== undefined ? { database: values.database } : {}),
        ...(sans.length ? { sans } : {}),
      },
      // a warning (a name no other host can reach the server by) goes where errors go
      (line) => (line.includes(': WARNING: ') ? process.stderr : process.stdout).write(line + '\n'),
    );
    return 0;
  }
  if (cmd === 'replica-prepare') {
    const parsed = options(rest, { options: COMMAND_OPTIONS['replica-prepare'] });
    if (!parsed) return 0;
    const values = parsed.values as Record<string, string | undefined>;
    for (const k of ['data-dir', 'hostname', 'out'] as const) {
      if (!values[k]) throw new InitError(`--${k} is required\n${USAGE}`);
    }
    const sans = (parsed.values as { san?: string[] }).san ?? [];
    await prepareReplica({ dataDir: values['data-dir']!, hostname: values.hostname!, out: values.out!, ...(sans.length ? { sans } : {}) }, (line) => process.stdout.write(line + '\n'));
    return 0;
  }
  if (cmd === 'start') {
    const parsed = options(rest, { options: COMMAND_OPTIONS.start });
    if (!parsed) return 0;
    const values = parsed.values as { [k in 'data-dir' | 'listen' | 'https-port' | 'http-port' | 'kdc-port' | 'kpasswd-port' | 'ldap-port' | 'ldaps-port']?: string } & {
      'exit-with-parent'?: boolean;
      'exit-with-pid'?: string[];
      'idp-ca-file'?: string[];
      'allow-admin-password-file'?: boolean;
    };
    if (!values['data-dir']) throw new InitError(`--data-dir is required\n${USAGE}`);
    const starterPids = (values['exit-with-pid'] ?? []).map((v) => {
      if (!/^[1-9]\d{0,9}$/.test(v)) throw new InitError(`--exit-with-pid must be a process id, not '${v}'\n${USAGE}`);
      return Number(v);
    });
    const starters = values['exit-with-parent'] || starterPids.length > 0 ? watchStarters(starterPids) : null;
    const goneEarly = starters?.gone() ?? null;
    if (goneEarly !== null) {
      process.stdout.write(`dirid-server: process ${goneEarly} that started it is gone; not starting\n`);
      return 0;
    }
    let reload: (() => void) | undefined;
    // before the server is up a SIGHUP must not end it (its default)
    process.on('SIGHUP', () => (reload ? reload() : process.stdout.write('dirid-server: SIGHUP while starting; ignored\n')));
    const server = await startServer({
      dataDir: values['data-dir'],
      listen: values.listen,
      httpsPort: port(values['https-port'], 'https-port'),
      httpPort: port(values['http-port'], 'http-port'),
      kdcPort: port(values['kdc-port'], 'kdc-port'),
      kpasswdPort: port(values['kpasswd-port'], 'kpasswd-port'),
      ldapPort: port(values['ldap-port'], 'ldap-port'),
      ldapsPort: port(values['ldaps-port'], 'ldaps-port'),
      ...(values['idp-ca-file'] ? { idpCaFile: values['idp-ca-file'] } : {}),
      ...(values['allow-admin-password-file'] ? { allowAdminPasswordFile: true } : {}),
    });
    reload = () => void server.reload();
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      starters?.onGone((pid) => {
        process.stdout.write(`dirid-server: process ${pid} that started it is gone; stopping\n`);
        stop();
      });
    });
    await server.stop();
    return 0;
  }
  if (cmd === 'backup') {
    const parsed = options(rest, { options: COMMAND_OPTIONS.backup });
    if (!parsed) return 0;
    const values = parsed.values as { 'data-dir'?: string; out?: string; 'passphrase-file'?: string; 'pg-dump'?: boolean };
    for (const k of ['data-dir', 'out'] as const) if (!values[k]) throw new UsageError(`--${k} is required`);
    await backupRealm(
      {
        dataDir: values['data-dir']!,
        out: values.out!,
        ...(values['passphrase-file'] !== undefined ? { passphrase: readPassphraseFile(values['passphrase-file']) } : {}),
        ...(values['pg-dump'] ? { pgDump: true } : {}),
      },
      (line) => process.stdout.write(line + '\n'),
    );
    return 0;
  }
  if (cmd === 'restore') {
    const parsed = options(rest, { options: COMMAND_OPTIONS.restore });
    if (!parsed) return 0;
    const values = parsed.values as { in?: string; 'data-dir'?: string; 'passphrase-file'?: string; force?: boolean };
    for (const k of ['in', 'data-dir'] as const) if (!values[k]) throw new UsageError(`--${k} is required`);
    await restoreRealm(
      {
        in: values.in!,
        dataDir: values['data-dir']!,
        ...(values['passphrase-file'] !== undefined ? { passphrase: readPassphraseFile(values['passphrase-file']) } : {}),
        ...(values.force ? { force: true } : {}),
      },
      (line) => process.stdout.write(line + '\n'),
    );
    return 0;
  }
  if (cmd === 'check') {
    const parsed = options(rest, { options: COMMAND_OPTIONS.check });
    if (!parsed) return 0;
    const dir = (parsed.values as { 'data-dir'?: string })['data-dir'];
    if (!dir) throw new UsageError('--data-dir is required');
    const paths = dataPaths(dir);
    const config = readServerConfig(paths);
    if (config.database) throw new InitError(`the store is in PostgreSQL (${shownDatabase(config.database)}): check it there (pg_amcheck); check reads a SQLite store`);
    const r = checkSqliteStore(paths.store, readMasterKey(paths));
    for (const p of r.problems) process.stdout.write(`dirid-server: ${p}\n`);
    process.stdout.write(`dirid-server: ${paths.store}: ${r.entries} entries, ${r.secrets} sealed secrets; ${r.problems.length === 0 ? 'integrity check: ok' : `${r.problems.length} problem(s)`}\n`);
    return r.problems.length === 0 ? 0 : 1;
  }
  throw new UsageError(cmd === undefined ? 'no command given' : `unknown command '${cmd}'`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const msg = err instanceof Error ? err.message : String(err);
    process.stderr.write(`dirid-server: ERROR: ${msg}\n${err instanceof UsageError ? USAGE : ''}`);
    process.exit(1);
  },
);
