/**
 * `dirid-server start --exit-with-parent [--exit-with-pid N]`: a foreground
 * server (the quickstart) goes with the command that started it, even when
 * that is killed outright (SIGKILL of npm or of the shell), so no orphan
 * keeps the ports. Killing npm leaves npm's own `sh -c` alive, so the parent
 * alone is not enough: the quickstart script names npm with --exit-with-pid.
 * The process group's leader is not watched: a shell that runs
 * `npm run quickstart &` and exits has ended its own job, not the server.
 *
 * A watched process is gone when its /proc entry is, when it is a zombie,
 * or when its pid names a process younger than our parent (the starter
 * died and the pid was reused). Without /proc, only the parent is watched:
 * an orphan is adopted, and its parent id changes.
 */
import { procStat } from './proc-stat.js';

export interface StarterWatch {
  /** the pid of a watched process that is gone, or null while all remain */
  gone(): number | null;
  /** calls onGone once, when a watched process goes */
  onGone(onGone: (pid: number) => void, intervalMs?: number): void;
}

/**
 * Watches our parent and the given starters (which began before our
 * parent). Call it before anything slow, so a starter killed meanwhile is
 * noticed.
 */
export function watchStarters(starters: readonly number[] = []): StarterWatch {
  const parent = process.ppid;
  const parentStat = procStat(parent);
  const watched = parentStat ? [{ pid: parent, start: parentStat.start, younger: false }] : [];
  // a starter began before our parent; one that began later holds a reused pid
  for (const pid of starters) if (pid !== parent) watched.push({ pid, start: parentStat?.start ?? 0n, younger: true });
  const gone = (): number | null => {
    if (process.ppid !== parent) return parent;
    if (!parentStat) return null;
    for (const w of watched) {
      const now = procStat(w.pid);
      if (!now || now.state === 'Z' || now.state === 'X') return w.pid;
      if (w.younger ? now.start > w.start : now.start !== w.start) return w.pid;
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
