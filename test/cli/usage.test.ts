/**
 * Help and usage as a new user meets them: `dirid` alone, `dirid --help`,
 * `ping --help`, `--` ending options, `kinit --help`, the local kinit subcommands the
 * README uses, articles and repeated phrases in the help of every command,
 * and name-validation messages that say the same limit whatever the input.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliClient, startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('dirid help and usage', () => {
  let realm: TestRealm;
  let env: NodeJS.ProcessEnv;
  let conf: string;
  const dirid = (args: string[], input?: string): Promise<ToolResult> => runTool(process.execPath, [DIRID, '-c', conf, ...args], env, input);

  before(async () => {
    realm = await startTestRealm();
    ({ conf, env } = cliClient(realm, { LANG: 'C' }));
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
  });
  after(async () => realm.stop());

  it('dirid alone prints the usage on standard error and exits non-zero', async () => {
    const r = await dirid([]);
    assert.notEqual(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^usage: dirid /);
  });

  it('dirid --version prints the version; an unknown global option is named as an option, not a command', async () => {
    const v = await dirid(['--version']);
    assert.equal(v.code, 0, v.stderr);
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(v.stdout, `dirid ${pkg.version}\n`);
    const x = await dirid(['-x', 'ping']);
    assert.equal(x.code, 1);
    assert.match(x.stderr, /unknown option '-x'/);
    assert.doesNotMatch(x.stderr, /unknown command/);
  });

  it('dirid --help lists the commands, and names the kinit forms the README uses', async () => {
    const r = await dirid(['--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^usage: dirid /);
    assert.match(r.stdout, /^  idp-add +Add a new IdP reference\.$/m);
    assert.match(r.stdout, /^  ping +/m);
    assert.match(r.stdout, /dirid kinit .*-k KEYTAB/);
    assert.match(r.stdout, /dirid kinit .*-T ARMOR_CCACHE/);
  });

  it('the local kinit and klist take -h and --help: their usage on standard output, exit 0; an unknown option gets the usage and exit 1', async () => {
    for (const flag of ['-h', '--help']) {
      const k = await dirid(['kinit', flag]);
      assert.equal(k.code, 0, `kinit ${flag}: ${k.stderr}`);
      assert.match(k.stdout, /^usage: dirid kinit \[-c CCACHE\] \[-T ARMOR_CCACHE \| -k KEYTAB\] PRINCIPAL$/m, k.stdout);
      assert.match(k.stdout, /^  -k KEYTAB +/m, k.stdout);
      const l = await dirid(['klist', flag]);
      assert.equal(l.code, 0, `klist ${flag}: ${l.stderr}`);
      assert.match(l.stdout, /^usage: dirid klist \[-c CCACHE\]$/m, l.stdout);
    }
    const bad = await dirid(['kinit', '-x', 'admin']);
    assert.equal(bad.code, 1, bad.stderr);
    assert.match(bad.stderr, /Unknown option '-x'/);
    assert.match(bad.stderr, /usage: dirid kinit /);
  });

  it('ping --help lists --server', async () => {
    const r = await dirid(['ping', '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^  --server=HOST\[:PORT\] +ping this server/m);
  });

  it('-- ends the options: idp-add -- -name takes -name as the name', async () => {
    const r = await dirid(['idp-add', '--client-id', 'c', '--secret', 's3cret-value', '--auth-uri', 'https://idp.example.test/a', '--token-uri', 'https://idp.example.test/t', '--', '-name']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^Added IdP reference "-name"$/m);
    const show = await dirid(['idp-show', '--', '-name']);
    assert.equal(show.code, 0, show.stderr);
  });

  it('articles are right in every generated text', async () => {
    const list = await dirid(['help']);
    const commands = [...(list.stdout.split('\nCommands:\n')[1] ?? '').matchAll(/^  ([a-z][a-z0-9-]*) /gm)].map((m) => m[1]!);
    assert.ok(commands.length > 20 && commands.includes('idp-add') && commands.includes('user-mod'), list.stdout);
    const texts = [list.stdout, (await dirid(['--help'])).stdout];
    for (const c of commands) {
      const h = await dirid([c, '--help']);
      assert.equal(h.code, 0, `${c} --help: ${h.stderr}`);
      texts.push(h.stdout);
    }
    const all = texts.join('\n');
    assert.doesNotMatch(all, /\ba (IdP|[aeio]\w*)\b/i, all.match(/.*\ba (IdP|[aeio]\w*)\b.*/gi)?.join('\n'));
    // and no "an" before a consonant sound (an acronym read letter by letter, "an HBAC rule", starts with a vowel sound)
    assert.doesNotMatch(all, /\ban (?!IdP|HTTP|HBAC|SRV|X\b|[aeiou])\w/i, all.match(/.*\ban (?!IdP|HTTP|HBAC|SRV|X\b|[aeiou])\w.*/gi)?.join('\n'));
  });

  it('no option help repeats a phrase', async () => {
    const list = await dirid(['help']);
    const commands = [...(list.stdout.split('\nCommands:\n')[1] ?? '').matchAll(/^  ([a-z][a-z0-9-]*) /gm)].map((m) => m[1]!);
    assert.ok(commands.includes('idp-add') && commands.includes('user-mod'), list.stdout);
    for (const c of commands) {
      const h = (await dirid([c, '--help'])).stdout;
      for (const line of h.split('\n').filter((l) => /^  --/.test(l))) {
        const words = line.replace(/^\s*--\S+\s+/, '').toLowerCase().split(/\W+/).filter((w) => w.length > 0);
        for (let n = 3; n <= 6; n++) {
          const seen = new Set<string>();
          for (let i = 0; i + n <= words.length; i++) {
            const phrase = words.slice(i, i + n).join(' ');
            assert.ok(!seen.has(phrase), `${c}: '${phrase}' twice in: ${line}`);
            seen.add(phrase);
          }
        }
      }
    }
  });

  it('name validation says the same limit whatever the length', async () => {
    for (const [command, limit] of [['idp-add', 64], ['user-add', 32], ['group-add', 255]] as const) {
      const msgs = new Set<string>();
      for (const name of ['a'.repeat(limit + 1), 'b'.repeat(300), 'c'.repeat(5000), 'bad name!']) {
        const r = await dirid([command, '--', name]);
        assert.equal(r.code, 1, r.stdout);
        msgs.add(r.stderr.replace(name, 'NAME'));
      }
      assert.equal(msgs.size, 1, `${command}: one message whatever the name:\n${[...msgs].join('')}`);
      assert.match([...msgs][0]!, new RegExp(`at most ${limit} characters`));
    }
  });
});
