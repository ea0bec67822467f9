/**
 * Documentation that runs: every command README.md and docs/ show exists,
 * with the options it is shown with. Read from code (fenced blocks, their
 * `\` continuations joined, and inline code spans):
 * - `dirid [-c FILE] [-v] COMMAND ...` (also `node bin/dirid.js ...`):
 *   COMMAND is one of the client's local commands (cli/local-commands.ts)
 *   or of the API schema (api.json); each --option is the command's (the
 *   schema's, or one the client handles itself, cli/args.ts LOCAL_OPTIONS);
 * - `dirid-server COMMAND ...`: COMMAND and its options are
 *   server/usage.ts's, the table dirid-server parses with;
 * - an API command named alone (`user-mod LOGIN --idp=NAME`,
 *   `idp-add/mod/del`): each named command is in the schema, and so are
 *   the options shown with it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ApiContract } from '../../src/contract/api-contract.js';
import { LOCAL_COMMANDS, LOCAL_FLAGS } from '../../src/cli/local-commands.js';
import { LOCAL_OPTIONS } from '../../src/cli/args.js';
import { COMMAND_OPTIONS } from '../../src/server/usage.js';

const root = resolve(import.meta.dirname, '..', '..');
const api = JSON.parse(readFileSync(join(root, 'api.json'), 'utf8')) as ApiContract;
const apiCommands = new Map(api.commands.map((c) => [c.cli_name, c]));

/**
 * Code that starts like a command and is none: what ping prints
 * (docs/conventions.md) and the text an OID is derived from (docs/ldap.md).
 */
const NOT_COMMANDS = ['dirid server version', 'dirid attribute NAME', 'dirid class NAME'];

const docs = ['README.md', ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The code of a Markdown text: each line of its fenced blocks (continuations joined) and each inline code span. */
function codeOf(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)) out.push(...m[1]!.replace(/\\\n/g, ' ').split('\n'));
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  for (const m of prose.matchAll(/`([^`]+)`/g)) out.push(m[1]!.replace(/\n/g, ' '));
  return out.map((l) => l.replace(/(^|\s)#\s.*$/, '')).filter((l) => !NOT_COMMANDS.some((n) => l.includes(n)));
}

/** The words of a command line after the program, up to the end of its command (a pipe, a redirection, another command). */
function wordsAfter(line: string, at: number): string[] {
  const rest = line.slice(at).split(/\s(?:\||\|\||&&|;|<|>|2>)\s|[`)]/)[0]!;
  return rest.split(/\s+/).filter((w) => w !== '');
}

/** An option's name as written: `--name=value`, `[--name`, `--name]...` and `-k` become `--name`, `-k`. */
function optionName(word: string): string | null {
  const m = /^\[?(--?[A-Za-z][\w-]*)/.exec(word);
  return m ? m[1]! : null;
}

interface Found {
  where: string;
  problem: string;
}

function checkApiCommand(name: string, options: string[], where: string, found: Found[]): void {
  const spec = apiCommands.get(name);
  if (!spec) {
    found.push({ where, problem: `no command '${name}' (not in api.json)` });
    return;
  }
  const local = LOCAL_OPTIONS[spec.name] ?? [];
  for (const o of options) {
    if (o === '-h' || o === '--help') continue;
    if (local.some((l) => l.long === o || l.short === o)) continue;
    if (o.startsWith('--') && spec.options.some((s) => s.cli_name === o.slice(2))) continue;
    found.push({ where, problem: `${name} has no option ${o}` });
  }
}

/** The problems of every `dirid`, `dirid-server` and bare API command line in `text`. */
function problems(file: string, text: string): Found[] {
  const found: Found[] = [];
  for (const line of codeOf(text)) {
    const where = `${file}: ${line.trim().slice(0, 100)}`;
    let matched = false;
    // the program where a command starts: the line's start, or after ; | & ( (and a prompt, sudo, VAR=value, node)
    for (const m of line.matchAll(/(?:^|[;|&(])\s*(?:\$\s+)?(?:sudo\s+)?(?:\w+=\S*\s+)*(?:node\s+)?(?:\S*\/)?(dirid-server|dirid)(?:\.js)?(?=\s)/g)) {
      matched = true;
      const words = wordsAfter(line, m.index! + m[0].length);
      if (m[1] === 'dirid-server') {
        const [cmd, ...rest] = words;
        if (cmd === undefined || !/^[a-z][a-z-]*$/.test(cmd)) continue;
        const table = (COMMAND_OPTIONS as Record<string, Record<string, unknown>>)[cmd];
        if (!table) {
          found.push({ where, problem: `dirid-server has no command '${cmd}'` });
          continue;
        }
        for (const o of rest.map(optionName)) {
          if (o === null || o === '-h' || o === '--help') continue;
          if (!o.startsWith('--') || !Object.hasOwn(table, o.slice(2))) found.push({ where, problem: `dirid-server ${cmd} has no option ${o}` });
        }
        continue;
      }
      // dirid: its global options, then the command
      let i = 0;
      for (; i < words.length && words[i]!.startsWith('-'); i++) {
        const w = words[i]!;
        if (w === '-c') i++;
        else if (!['-v', '--verbose', '-h', '--help', '--version'].includes(w) && !w.startsWith('--config=')) found.push({ where, problem: `dirid has no global option ${w}` });
      }
      const cmd = words[i];
      if (cmd === undefined || !/^[a-z][a-z0-9-]*$/.test(cmd)) continue;
      const options = words.slice(i + 1).map(optionName).filter((o): o is string => o !== null);
      if (Object.hasOwn(LOCAL_COMMANDS, cmd)) {
        const names: readonly string[] = [...LOCAL_COMMANDS[cmd as keyof typeof LOCAL_COMMANDS], ...((LOCAL_FLAGS as Record<string, readonly string[]>)[cmd] ?? [])];
        for (const o of options) if (o !== '-h' && o !== '--help' && !names.some((l) => o === (l.length === 1 ? `-${l}` : `--${l}`))) found.push({ where, problem: `dirid ${cmd} has no option ${o}` });
      } else checkApiCommand(cmd, options, where, found);
    }
    if (matched) continue;
    // an API command named alone: OBJECT-VERB, or OBJECT-VERB/VERB/... for several
    const bare = /^\s*([a-z]+)-([a-z-]+(?:\/[a-z-]+)*)(?=\s|$)/.exec(line);
    if (!bare || !prefixes.has(bare[1]!)) continue;
    const names = bare[2]!.split('/').map((verb) => `${bare[1]}-${verb}`);
    const options = wordsAfter(line, bare[0].length).map(optionName).filter((o): o is string => o !== null);
    for (const name of names) checkApiCommand(name, names.length === 1 ? options : [], where, found);
  }
  return found;
}

/** The objects commands are named after (`user` of user-add), from the schema. */
const prefixes = new Set(api.commands.map((c) => c.cli_name.split('-')[0]!).filter((p, _i, all) => all.filter((x) => x === p).length > 1));

describe('commands the documentation shows', () => {
  it('finds the commands it checks (the reading of the docs is not empty)', () => {
    const text = readFileSync(join(root, 'README.md'), 'utf8');
    const lines = codeOf(text);
    assert.ok(lines.some((l) => /dirid-server start --data-dir/.test(l)));
    assert.ok(lines.some((l) => /bin\/dirid\.js -c demo-data\/default\.conf user-add alice/.test(l)));
    // a word dirid that is no program is not read as one
    assert.deepEqual(problems('x.md', '```\nidp-add k --client-id dirid --secret\nls /var/lib/dirid --x\n```\n'), []);
    // and it does tell a wrong one
    assert.deepEqual(
      problems('x.md', '`dirid user-frobnicate alice`, `dirid user-mod alice --no-such`, `dirid-server start --no-such`, `dirid kinit -x admin`, `idp-add/frob`').map((f) => f.problem),
      ["no command 'user-frobnicate' (not in api.json)", 'user-mod has no option --no-such', 'dirid-server start has no option --no-such', 'dirid kinit has no option -x', "no command 'idp-frob' (not in api.json)"],
    );
  });

  it('every NOT_COMMANDS text is still in the docs (the list does not hide commands)', () => {
    const all = docs.map((f) => readFileSync(join(root, f), 'utf8')).join('\n');
    assert.deepEqual(NOT_COMMANDS.filter((n) => !all.includes(n)), []);
  });

  it('every dirid, dirid-server and API command shown exists, with the options shown', () => {
    const found = docs.flatMap((f) => problems(f, readFileSync(join(root, f), 'utf8')));
    assert.deepEqual(found.map((f) => `${f.where}\n    ${f.problem}`), []);
  });
});
