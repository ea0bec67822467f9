/**
 * The lock a running server holds on its data directory: `server.lock`,
 * created exclusively (a hard link to a file written whole), holding the
 * server's process id, on Linux the boot and the process's start time
 * (which tell a live server from another process that got the same id
 * after a crash or a reboot), the machine's name, and the data directory's
 * device and inode. A second start on the directory is refused, naming the
 * running server's process id; the lock of a server that is gone (killed,
 * crashed) is taken over, and so is a lock that is not this directory's: one
 * copied with the directory (a restored backup, a copy made while the
 * original ran: another inode) or written on another machine (another boot
 * or name), whose process id means nothing here. A clean stop removes it.
 */
import { linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { procStat } from './proc-stat.js';

export const LOCK_FILE = 'server.lock';

export class DataDirInUse extends Error {
  constructor(
    message: string,
    readonly pid: number,
  ) {
    super(message);
    this.name = 'DataDirInUse';
  }
}

export interface DataDirLock {
  path: string;
  /** removes the lock file, when it is still this server's */
  release(): void;
}

/** Data directories locked by this process (a second server in the same process is refused too). */
const heldHere = new Set<string>();

/** How often a lock found stale is taken over before giving up (another starter racing for it). */
const ATTEMPTS = 5;

/** This machine's boot (Linux), '' where the system does not tell. */
function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

/** `boot-id start-time` of process `pid` (Linux), or '' where the system does not tell. */
function processIdentity(pid: number): string {
  const boot = bootId();
  const started = procStat(pid)?.start;
  return boot && started !== undefined ? `${boot} ${started}` : '';
}

/** `device:inode` of the data directory: a copy, or a directory restored in its place, has another. */
function directoryIdentity(dataDir: string): string {
  const st = statSync(dataDir, { bigint: true });
  return `${st.dev}:${st.ino}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    // EPERM: there is such a process, another user's
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  // a killed server its parent has not reaped yet is gone too
  return procStat(pid)?.state !== 'Z';
}

/**
 * The process id a lock file's text names, when that process still runs the
 * server that wrote it on this directory; else null (a stale lock, or one
 * that is not this directory's: copied with it, or written on another
 * machine). A lock of an older server, without the last two lines, is
 * judged by its process alone.
 */
function holder(text: string, here: { directory: string; host: string }): number | null {
  const [pidLine = '', identity = '', host, directory] = text.split('\n');
  if (!/^[1-9]\d{0,9}$/.test(pidLine)) return null;
  if (directory !== undefined && directory !== '' && directory !== here.directory) return null;
  if (host !== undefined && host !== '' && host !== here.host) return null;
  const boot = bootId();
  if (identity && boot && identity.split(' ')[0] !== boot) return null;
  const pid = Number(pidLine);
  if (!alive(pid)) return null;
  if (identity) {
    const now = processIdentity(pid);
    if (now && now !== identity) return null;
  }
  return pid;
}

function readLock(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** Takes the lock on `dataDir`, or throws DataDirInUse naming the server that holds it. */
export function lockDataDir(dataDir: string): DataDirLock {
  const path = join(dataDir, LOCK_FILE);
  if (heldHere.has(path)) throw new DataDirInUse(`${dataDir} is in use by a server already started in this process (${process.pid})`, process.pid);
  let here;
  try {
    here = { directory: directoryIdentity(dataDir), host: hostname() };
  } catch (e) {
    throw new Error(`cannot lock the data directory ${dataDir} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  // host and directory after the older format's two lines, which an older server reads alone
  const mine = `${process.pid}\n${processIdentity(process.pid)}\n${here.host}\n${here.directory}\n`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    try {
      // written whole beside it, then linked in: the lock never appears empty or half written
      const tmp = `${path}.${process.pid}`;
      writeFileSync(tmp, mine, { mode: 0o644 });
      try {
        linkSync(tmp, path);
      } catch (e) {
        // a file system without hard links: created exclusively in place
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw e;
        writeFileSync(path, mine, { mode: 0o644, flag: 'wx' });
      } finally {
        unlinkSync(tmp);
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw new Error(`cannot lock the data directory ${dataDir} (${LOCK_FILE}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
      }
      const text = readLock(path);
      if (text === null) continue;
      const pid = text === mine ? null : holder(text, here);
      if (pid !== null) {
        throw new DataDirInUse(`${dataDir} is in use by another dirid-server (process ${pid}); stop it first, or give each server a data directory of its own`, pid);
      }
      // stale: removed only while it still says what was read, then created again exclusively
      if (readLock(path) === text) unlinkSync(path);
      continue;
    }
    heldHere.add(path);
    let released = false;
    return {
      path,
      release() {
        if (released) return;
        released = true;
        heldHere.delete(path);
        try {
          if (readLock(path) === mine) unlinkSync(path);
        } catch {
          // already gone, or the directory with it
        }
      },
    };
  }
  throw new Error(`cannot lock the data directory ${dataDir}: ${LOCK_FILE} keeps changing (another server starting?)`);
}
