/**
 * Command lines against a command's schema: `--opt=value` and `--opt value`,
 * flags, repeated multi-value options, prompted options, bool and int
 * values, positional arguments, errors, and the help text.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CommandSpec, ParamSpec } from '../../src/framework/api.js';
import { helpText, parseCommandLine } from '../../src/cli/args.js';
import { CliError } from '../../src/cli/errors.js';

const p = (name: string, extra: Partial<ParamSpec> = {}): ParamSpec => ({ name, cli_name: name.replace(/_/g, '-'), type: 'str', label: name, doc: `doc of ${name}`, required: false, multivalue: false, ...extra });

const idpAdd: CommandSpec = {
  name: 'idp_add',
  cli_name: 'idp-add',
  doc: 'Add a new IdP reference.',
  object: 'idp',
  output: 'entry',
  access: 'manage:idp',
  args: [p('name', { required: true, doc: 'IdP reference name' })],
  options: [
    p('client_id'),
    p('secret', { type: 'password', label: 'Secret', prompt: true }),
    p('setattr', { multivalue: true }),
    p('sizelimit', { type: 'int' }),
    p('disabled', { type: 'bool' }),
    p('user_auth_type', { type: 'enum', multivalue: true, values: ['password', 'idp', 'passkey'] }),
    p('all', { type: 'bool', flag: true }),
  ],
};

describe('parseCommandLine', () => {
  it('takes --opt=value and --opt value, flags, repeated multi-value options', () => {
    const r = parseCommandLine(idpAdd, ['kc', '--client-id=abc', '--setattr', 'a=1', '--setattr=b=2', '--all', '--user-auth-type', 'idp']);
    assert.deepEqual(r.args, ['kc']);
    assert.deepEqual({ ...r.options }, { client_id: 'abc', setattr: ['a=1', 'b=2'], all: true, user_auth_type: ['idp'] });
    assert.deepEqual(r.prompts, []);
    assert.equal(r.help, false);
  });
  it('--secret without a value asks for a prompt; with a value takes it', () => {
    assert.deepEqual(parseCommandLine(idpAdd, ['kc', '--secret']).prompts.map((x) => x.spec.name), ['secret']);
    assert.deepEqual(parseCommandLine(idpAdd, ['kc', '--secret', '--all']).prompts.map((x) => x.spec.name), ['secret']);
    const given = parseCommandLine(idpAdd, ['kc', '--secret=s3']);
    assert.equal(given.options.secret, 's3');
    assert.deepEqual(given.prompts, []);
  });
  it('bool options take True/False, int options numbers', () => {
    assert.equal(parseCommandLine(idpAdd, ['kc', '--disabled=True']).options.disabled, true);
    assert.equal(parseCommandLine(idpAdd, ['kc', '--disabled', 'false']).options.disabled, false);
    assert.equal(parseCommandLine(idpAdd, ['kc', '--sizelimit=5']).options.sizelimit, 5);
    assert.throws(() => parseCommandLine(idpAdd, ['kc', '--disabled=maybe']), (e: unknown) => e instanceof CliError && e.message === "invalid 'disabled': must be True or False");
  });
  it('rejects unknown options, values on flags, missing values and extra arguments', () => {
    const fails = (argv: string[], message: string) => assert.throws(() => parseCommandLine(idpAdd, argv), (e: unknown) => e instanceof CliError && e.exitCode === 1 && e.message === message);
    fails(['kc', '--nope=1'], 'no such option: --nope');
    fails(['kc', '--all=yes'], '--all does not take a value');
    fails(['kc', '--client-id'], '--client-id option requires an argument');
    fails(['kc', 'extra'], "command 'idp-add' takes at most 1 argument(s)");
  });
  it('a missing optional argument is sent as null; -- ends the options', () => {
    assert.deepEqual(parseCommandLine(idpAdd, []).args, []);
    assert.deepEqual(parseCommandLine(idpAdd, ['--', '--odd-name']).args, ['--odd-name']);
    assert.equal(parseCommandLine(idpAdd, ['kc', '--help']).help, true);
  });
});

describe('helpText', () => {
  it('lists usage, doc, arguments and options with their docs', () => {
    const text = helpText(idpAdd);
    const lines = text.split('\n');
    assert.equal(lines[0], 'Usage: dirid [global-options] idp-add NAME [options]');
    assert.equal(lines[2], 'Add a new IdP reference.');
    assert.ok(lines.includes('Arguments:'));
    assert.ok(lines.includes('  NAME                          IdP reference name'), text);
    assert.ok(lines.includes('  --client-id=CLIENT_ID         doc of client_id'), text);
    assert.ok(lines.includes('  --secret[=SECRET]             doc of secret (prompted for when given without a value)'), text);
    assert.ok(lines.includes('  --setattr=SETATTR             doc of setattr (repeatable)'), text);
    assert.ok(lines.includes('  --all                         doc of all'), text);
    assert.ok(lines.some((l) => l.startsWith('  --user-auth-type={password,idp,passkey}')), text);
  });
});
