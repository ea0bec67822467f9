/**
 * Where the server's lines go: gathered and written together once per turn
 * of the event loop. One write per line cost a system call each, about as
 * much as a KDC request's own work.
 */
export interface LineSink {
  /** takes one line (without its newline) */
  write(line: string): void;
  /** writes what is gathered now (on exit) */
  flush(): void;
}

export function lineSink(out: (text: string) => void): LineSink {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const text = pending.join('\n') + '\n';
    pending = [];
    out(text);
  };
  return {
    write(line) {
      if (pending.push(line) === 1) setImmediate(flush);
    },
    flush,
  };
}
