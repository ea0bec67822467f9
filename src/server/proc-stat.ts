/**
 * A process as Linux's /proc/PID/stat describes it, for the server's
 * watches on other processes: its state (a zombie is 'Z') and its start
 * time, which tells a reused process id apart. starter-watch.ts (the
 * processes a foreground server goes with) and data-lock.ts (whether a
 * lock's server still runs) read it; null where there is no such process or
 * no /proc.
 */
import { readFileSync } from 'node:fs';

export interface ProcStat {
  state: string;
  /** start time in clock ticks since boot: tells a reused pid apart */
  start: bigint;
}

export function procStat(pid: number | 'self'): ProcStat | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the fields after "(comm)", which may hold anything: state ppid pgrp session ... starttime (the 20th)
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { state: f[0]!, start: BigInt(f[19]!) };
  } catch {
    return null;
  }
}
