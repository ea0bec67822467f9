/**
 * The keytab file `dirid keytab-get -k FILE` writes to. It is made ready
 * before the server is asked for new keys: an existing FILE is read (it must
 * be a keytab) and a temporary file is made beside it, so a FILE that cannot
 * be written (no such directory, no permission, not a keytab) fails the
 * command before any key changes. The new keys are then added to what FILE
 * held (kerberos/keytab.ts mergeKeytab: other principals' keys and the
 * previous key version stay), written to the temporary file with mode 0600
 * and renamed over FILE, so a reader sees the old keytab or the new one.
 */
import { accessSync, closeSync, constants, fchmodSync, fsyncSync, lstatSync, openSync, readFileSync, realpathSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { KeytabError, mergeKeytab, readKeytab, writeKeytab, type KeytabEntry } from '../kerberos/keytab.js';
import { CliError } from './errors.js';

export interface KeytabTarget {
  /** the file the keytab goes to (links followed) */
  readonly path: string;
  /** adds the keys of `keytab` (a keytab file's bytes) to the file; the temporary file is gone afterwards */
  commit(keytab: Buffer): void;
  /** removes the temporary file, leaving FILE as it was */
  abandon(): void;
}

/** Node's error code of `e`, if any. */
function codeOf(e: unknown): string | undefined {
  return (e as NodeJS.ErrnoException | undefined)?.code;
}

/** Why a file system call on `what` failed, in plain words. */
function reason(e: unknown, what: string): string {
  switch (codeOf(e)) {
    case 'ENOENT':
      return `${what} does not exist`;
    case 'EACCES':
    case 'EPERM':
      return `permission denied on ${what}`;
    case 'ENOTDIR':
      return `a part of the path ${what} is not a directory`;
    case 'EROFS':
      return `${what} is on a read-only file system`;
    case 'ENOSPC':
      return `no space left for ${what}`;
    case 'EISDIR':
      return `${what} is a directory`;
    default:
      return e instanceof Error ? e.message : String(e);
  }
}

function unwritable(file: string, why: string): CliError {
  return new CliError(`cannot write the keytab ${file}: ${why}; no keys were changed`);
}

/** The keytab at `file`, made ready to take new keys; throws a CliError saying why it cannot. */
export function openKeytabTarget(file: string): KeytabTarget {
  let path = resolve(file);
  let existing: KeytabEntry[] = [];
  let exists = false;
  try {
    lstatSync(path);
    exists = true;
  } catch (e) {
    if (codeOf(e) !== 'ENOENT') throw unwritable(file, reason(e, path));
  }
  if (exists) {
    try {
      // a link is followed: the keytab it points to is the one updated
      path = realpathSync(path);
      if (!statSync(path).isFile()) throw unwritable(file, `${path} is not a regular file`);
      accessSync(path, constants.R_OK | constants.W_OK);
      const bytes = readFileSync(path);
      // an empty file is an empty keytab, as MIT's ktadd takes it
      existing = bytes.length === 0 ? [] : readKeytab(bytes);
    } catch (e) {
      if (e instanceof CliError) throw e;
      if (e instanceof KeytabError) throw unwritable(file, `it is not a keytab file (${e.message})`);
      throw unwritable(file, reason(e, path));
    }
  }
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  let fd: number;
  try {
    fd = openSync(temp, 'wx', 0o600);
  } catch (e) {
    throw unwritable(file, codeOf(e) === 'ENOENT' ? `the directory ${dir} does not exist` : reason(e, `the directory ${dir}`));
  }
  let open = true;
  const abandon = () => {
    if (open) closeSync(fd);
    open = false;
    try {
      unlinkSync(temp);
    } catch {
      // already gone
    }
  };
  return {
    path,
    abandon,
    commit(keytab) {
      try {
        const bytes = writeKeytab(mergeKeytab(existing, readKeytab(keytab)));
        writeSync(fd, bytes);
        fchmodSync(fd, 0o600);
        fsyncSync(fd);
        closeSync(fd);
        open = false;
        renameSync(temp, path);
      } catch (e) {
        abandon();
        throw new CliError(`the server answered, but writing the keytab ${file} failed: ${e instanceof KeytabError ? e.message : reason(e, path)}`);
      }
    },
  };
}
