/**
 * What `dirid join` changed, kept so that `dirid leave` can undo it: under
 * /var/lib/dirid/join, `state.json` (the realm, the host, and for each file
 * the join wrote or let pam-auth-update rewrite whether it existed and
 * where its saved copy is) and `saved/`, a copy of each file as it was
 * before, with its mode. The record is written before each change, so a
 * join that stops half way can still be undone. Writes are atomic
 * (a new file renamed over the old).
 */
import { chmodSync, chownSync, closeSync, copyFileSync, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CliError } from './errors.js';

export interface SavedFile {
  path: string;
  /** false: the join created it, leave removes it */
  existed: boolean;
  /** the saved copy (relative to the state directory) and its mode and owner */
  copy?: string;
  mode?: number;
  uid?: number;
  gid?: number;
}

export interface JoinState {
  version: 1;
  realm: string;
  domain: string;
  host: string;
  /** 'joining' until every step is done */
  status: 'joining' | 'joined';
  files: SavedFile[];
  /** directories the join made (removed by leave when empty) */
  dirs: string[];
  /** whether /etc/krb5.keytab existed before */
  keytabExisted: boolean;
}

export class StateDir {
  constructor(readonly dir: string) {}

  get file(): string {
    return join(this.dir, 'state.json');
  }

  read(): JoinState | null {
    let text: string;
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new CliError(`cannot read ${this.file}: ${(e as Error).message}`);
    }
    try {
      const s = JSON.parse(text) as JoinState;
      if (s.version !== 1 || !Array.isArray(s.files)) throw new Error('unknown format');
      return s;
    } catch (e) {
      throw new CliError(`${this.file} is not a record dirid join wrote (${(e as Error).message})`);
    }
  }

  write(state: JoinState): void {
    mkdirSync(join(this.dir, 'saved'), { recursive: true, mode: 0o700 });
    writeAtomic(this.file, JSON.stringify(state, null, 2) + '\n', 0o600);
  }

  /** Saves `path` as it is now (once: a file already saved keeps its first copy) and records it in `state`. */
  save(state: JoinState, path: string): void {
    if (state.files.some((f) => f.path === path)) return;
    let st;
    try {
      st = lstatSync(path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new CliError(`cannot read ${path}: ${(e as Error).message}`);
    }
    if (!st) {
      state.files.push({ path, existed: false });
    } else {
      if (!st.isFile()) throw new CliError(`${path} is not a regular file; dirid join changes nothing`);
      const copy = join('saved', `${state.files.length}-${path.replace(/[^A-Za-z0-9._-]/g, '_')}`);
      mkdirSync(join(this.dir, 'saved'), { recursive: true, mode: 0o700 });
      copyFileSync(path, join(this.dir, copy));
      chmodSync(join(this.dir, copy), 0o600);
      state.files.push({ path, existed: true, copy, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid });
    }
    this.write(state);
  }

  /** Puts every saved file back as it was (removing those the join created) and its directories; returns the paths. */
  restore(state: JoinState): string[] {
    const done: string[] = [];
    for (const f of [...state.files].reverse()) {
      if (f.existed) {
        const data = readFileSync(join(this.dir, f.copy!));
        writeAtomic(f.path, data, f.mode ?? 0o644);
        if (f.uid !== undefined && f.gid !== undefined) chownSync(f.path, f.uid, f.gid);
      } else rmSync(f.path, { force: true });
      done.push(f.path);
    }
    for (const d of [...state.dirs].reverse()) {
      try {
        rmdirSync(d);
      } catch {
        // not empty: something else lives there now
      }
    }
    return done;
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Makes the directories of `path` that are missing, recording them. */
export function makeParents(path: string, made: string[]): void {
  const missing: string[] = [];
  for (let d = dirname(path); d !== '/' && !existsSync(d); d = dirname(d)) missing.unshift(d);
  for (const d of missing) {
    mkdirSync(d, { mode: 0o755 });
    made.push(d);
  }
}

/** Writes `data` to `path` through a new file renamed over it, with `mode`. */
export function writeAtomic(path: string, data: string | Buffer, mode: number): void {
  const tmp = join(dirname(path), `.${path.split('/').pop()}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data) : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}

/** The file's content, or null when there is none (or it cannot be read: reported by the caller's later write). */
export function readOrNull(path: string): string | null {
  try {
    if (!statSync(path).isFile()) return null;
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
