/**
 * Reading secrets: on a terminal, a prompt with echo off (twice when a new
 * value must be confirmed); otherwise one line from standard input.
 */
import { createRequire } from 'node:module';

function readLineFromStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    // loaded here, not at start-up: only commands that read a secret need it
    const { createInterface } = createRequire(import.meta.url)('node:readline') as typeof import('node:readline');
    const rl = createInterface({ input: process.stdin, terminal: false });
    let done = false;
    rl.once('line', (line) => {
      done = true;
      rl.close();
      resolve(line);
    });
    rl.once('close', () => {
      if (!done) reject(new Error('no input on standard input'));
    });
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
