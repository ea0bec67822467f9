/**
 * cli/errors.ts: a server's error becomes the CLI's error in one place, with
 * the server's message and the exit code its number has in the registry
 * (contract/errors.ts): 2 for NotFound, 1 for every other error, 1 for a
 * number this client does not know.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CliError, serverError } from '../../src/cli/errors.js';

describe('CLI errors from server errors', () => {
  it('takes the message and the exit code of the number', () => {
    const cases: Array<[number, string, number]> = [
      [4001, 'NotFound', 2],
      [4002, 'DuplicateEntry', 1],
      [903, 'InternalError', 1],
      [1004, 'AccountDisabled', 1],
      [4999, 'SomethingNewer', 1],
    ];
    for (const [code, name, exit] of cases) {
      const e = serverError({ code, name, message: `${name} happened`, data: {} });
      assert.ok(e instanceof CliError);
      assert.equal(e.message, `${name} happened`);
      assert.equal(e.exitCode, exit, name);
    }
  });

  it('a CLI error of its own exits 1 unless told otherwise', () => {
    assert.equal(new CliError('x').exitCode, 1);
  });
});
