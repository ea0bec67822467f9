/**
 * dirid-server's usage as a new administrator meets it: --help and -h, at
 * the top and after a command, print the usage on standard output and exit
 * 0; no command, an unknown command or an unknown option is a usage error
 * (the reason and the usage on standard error, exit 1 as every error).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

const SERVER = new URL('../../bin/dirid-server.js', import.meta.url).pathname;
const run = (args: string[]) => spawnSync(process.execPath, [SERVER, ...args], { encoding: 'utf8', timeout: 20_000 });

describe('dirid-server usage', () => {
  it('--help and -h, alone or after a command, print the usage on standard output and exit 0', () => {
    for (const args of [['--help'], ['-h'], ['help'], ['init', '--help'], ['start', '-h'], ['replica-prepare', '--help']]) {
      const r = run(args);
      assert.equal(r.status, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /^usage:\n  dirid-server init --data-dir DIR/, args.join(' '));
      assert.match(r.stdout, /^  dirid-server start --data-dir DIR/m, args.join(' '));
      assert.equal(r.stderr, '', args.join(' '));
    }
  });

  it('no command, an unknown command or an unknown option: the reason and the usage on standard error, exit 1', () => {
    for (const [args, reason] of [
      [[], 'no command given'],
      [['serve'], "unknown command 'serve'"],
      [['init', '--bogus'], "Unknown option '--bogus'"],
      [['start', '--data-dir'], "Option '--data-dir <value>' argument missing"],
    ] as const) {
      const r = run([...args]);
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '', args.join(' '));
      assert.ok(r.stderr.startsWith(`dirid-server: ERROR: ${reason}\nusage:\n`), `${args.join(' ')}: ${r.stderr}`);
    }
  });
});
