/**
 * `dirid-server start --exit-with-parent`: a foreground server (the
 * quickstart) goes with whatever started it, even when that is killed
 * outright (SIGKILL of npm or of the shell), so no orphan keeps the ports.
 * Killing npm leaves npm's own `sh -c` alive, so the parent alone is not
 * enough: the server watches its parent and the leader of its process group
 * (npm run, or the job a shell started; POSIX process groups), as they were
 * when it began. A watched process is gone when its /proc entry is, when it
 * is a zombie, or when its pid now names a process started later. Without
 * /proc, only the parent is watched: an orphan is adopted, and its parent id
 * changes.
 */
import { readFileSync } from 'node:fs';

interface ProcStat {
  state: string;
  pgrp: number;
  /** start time in clock ticks since boot: tells a reused pid apart */
  start: string;
}

function procStat(pid: number | 'self'): ProcStat | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the fields after "(comm)": state ppid pgrp session ... starttime (the 20th)
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { state: f[0]!, pgrp: Number(f[2]), start: f[19]! };
  } catch {
    return null;
  }
}

export interface StarterWatch {
  /** the pid of a watched process that is gone, or null while all remain */
  gone(): number | null;
  /** calls onGone once, when a watched process goes */
  onGone(onGone: (pid: number) => void, intervalMs?: number): void;
}

/** Records the starters now: call it before anything slow, so a starter killed meanwhile is noticed. */
export function watchStarters(): StarterWatch {
  const parent = process.ppid;
  const self = procStat('self');
  const pids = [parent];
  if (self && self.pgrp > 1 && self.pgrp !== process.pid && self.pgrp !== parent) pids.push(self.pgrp);
  const watched = pids.map((pid) => ({ pid, start: self ? (procStat(pid)?.start ?? null) : null }));
  const gone = (): number | null => {
    if (process.ppid !== parent) return parent;
    if (!self) return null;
    for (const w of watched) {
      const now = w.start === null ? null : procStat(w.pid);
      if (!now || now.state === 'Z' || now.state === 'X' || now.start !== w.start) return w.pid;
    }
    return null;
  };
  return {
    gone,
    onGone(onGone, intervalMs = 500) {
      const timer = setInterval(() => {
        const pid = gone();
        if (pid !== null) {
          clearInterval(timer);
          onGone(pid);
        }
      }, intervalMs);
      timer.unref();
    },
  };
}
