/**
 * Reading secrets: on a terminal, a prompt with echo off (twice when a new
 * value must be confirmed); otherwise one line from standard input per
 * secret, in the order they are asked for.
 */
import { createRequire } from 'node:module';

/**
 * Lines of standard input, one per secret asked for, in order. One reader
 * serves every call: a chunk often holds several lines (the current
 * password, then the new one), and those after the one asked for wait in
 * `lines` for the next call instead of going with a closed reader.
 */
interface StdinLines {
  lines: string[];
  waiting: Array<{ resolve: (line: string) => void; reject: (e: Error) => void }>;
  closed: boolean;
  pause(): void;
  resume(): void;
}

let stdinLines: StdinLines | undefined;

function openStdinLines(): StdinLines {
  // loaded here, not at start-up: only commands that read a secret need it
  const { createInterface } = createRequire(import.meta.url)('node:readline') as typeof import('node:readline');
  const rl = createInterface({ input: process.stdin, terminal: false });
  const out: StdinLines = { lines: [], waiting: [], closed: false, pause: () => rl.pause(), resume: () => rl.resume() };
  rl.on('line', (line) => {
    const w = out.waiting.shift();
    if (w) w.resolve(line);
    else out.lines.push(line);
    if (out.waiting.length === 0) rl.pause();
  });
  rl.once('close', () => {
    out.closed = true;
    for (const w of out.waiting.splice(0)) w.reject(new Error('no input on standard input'));
  });
  return out;
}

function readLineFromStdin(): Promise<string> {
  const r = (stdinLines ??= openStdinLines());
  const ready = r.lines.shift();
  if (ready !== undefined) return Promise.resolve(ready);
  if (r.closed) return Promise.reject(new Error('no input on standard input'));
  return new Promise((resolve, reject) => {
    r.waiting.push({ resolve, reject });
    r.resume();
  });
}

function promptHidden(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    // echo goes off before the prompt shows, so nothing typed after it is echoed
    stdin.setRawMode(true);
    stdin.resume();
    process.stderr.write(question);
    let value = '';
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString('utf8')) {
        if (ch === '\r' || ch === '\n') {
          cleanup();
          process.stderr.write('\n');
          resolve(value);
          return;
        }
        if (ch === '\u0003' || ch === '\u0004') {
          cleanup();
          process.stderr.write('\n');
          reject(new Error('cancelled'));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    const cleanup = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
    };
    stdin.on('data', onData);
  });
}

/** A secret from the terminal (confirmed when `confirmLabel` is given) or from stdin. */
export async function readSecret(label: string, confirmLabel?: string): Promise<string> {
  if (!process.stdin.isTTY) return readLineFromStdin();
  const first = await promptHidden(`${label}: `);
  if (confirmLabel) {
    const second = await promptHidden(`${confirmLabel}: `);
    if (first !== second) throw new Error('Passwords do not match!');
  }
  return first;
}
