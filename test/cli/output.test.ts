/**
 * The client's printed output (docs/conventions.md "Output") on literal
 * expected text: summaries, entries in field order, find, --all, --raw,
 * --rights, membership results, ping, checks, and exit codes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiContract } from '../../src/framework/api.js';
import { formatEntry, formatResult, showValue, summaryBlock } from '../../src/cli/output.js';

const contract: ApiContract = {
  api_version: '1.1',
  commands: [],
  objects: [
    {
      name: 'idp',
      label: 'IdP references',
      label_singular: 'IdP reference',
      pkey: 'name',
      fields: [
        { key: 'cn', label: 'IdP reference name', param: 'name' },
        { key: 'diridpprovider', label: 'Provider', param: 'provider' },
        { key: 'diridpclientid', label: 'Client identifier', param: 'client_id' },
        { key: 'diridpscope', label: 'Scope', param: 'scope' },
      ],
    },
    {
      name: 'group',
      label: 'groups',
      label_singular: 'group',
      pkey: 'name',
      fields: [
        { key: 'cn', label: 'Group name', param: 'name' },
        { key: 'member_user', label: 'Member users', param: null },
      ],
    },
  ],
};
const plain = { all: false, raw: false };
const kc = { cn: ['keycloak'], diridpprovider: ['keycloak'], diridpclientid: ['dirid'], diridpscope: ['openid email'] };

describe('summary lines', () => {
  it('stand between dash lines as long as the text', () => {
    assert.equal(summaryBlock('Added IdP reference "keycloak"'), '------------------------------\nAdded IdP reference "keycloak"\n------------------------------\n');
    assert.equal(summaryBlock('é'), '-\né\n-\n');
  });
  it('ping prints its summary line', () => {
    const out = formatResult('summary', null, { result: null, value: null, summary: 'dirid server version 0.1.0. API version 1.1.' }, contract, plain);
    assert.deepEqual(out, {
      text: '--------------------------------------------\ndirid server version 0.1.0. API version 1.1.\n--------------------------------------------\n',
      exitCode: 0,
    });
  });
  it('deleted: the summary only, several names joined by commas', () => {
    const out = formatResult('deleted', 'idp', { result: { failed: [] }, value: ['a', 'b'], summary: 'Deleted IdP reference "a,b"' }, contract, plain);
    assert.equal(out.text, '---------------------------\nDeleted IdP reference "a,b"\n---------------------------\n');
    assert.equal(out.exitCode, 0);
  });
  it('deleted with --continue: names that failed, exit 1', () => {
    const out = formatResult('deleted', 'idp', { result: { failed: ['b', 'c'] }, value: ['a'], summary: 'Deleted IdP reference "a"' }, contract, plain);
    assert.deepEqual(out, { text: '-------------------------\nDeleted IdP reference "a"\n-------------------------\n  Failed to remove: b, c\n', exitCode: 1 });
  });
});

describe('entries', () => {
  it('add: summary, then labels in field order with two-space indent', () => {
    const out = formatResult('entry', 'idp', { result: { diridpscope: ['openid', 'email'], cn: ['keycloak'], diridpclientid: ['dirid'] }, value: 'keycloak', summary: 'Added IdP reference "keycloak"' }, contract, plain);
    assert.equal(
      out.text,
      '------------------------------\nAdded IdP reference "keycloak"\n------------------------------\n  IdP reference name: keycloak\n  Client identifier: dirid\n  Scope: openid, email\n',
    );
  });
  it('show: no summary; unlabelled attributes only with --all, after dn and the labels, sorted', () => {
    const entry = { dn: 'cn=keycloak,cn=idp,dc=example,dc=test', ...kc, objectclass: ['top', 'dirIdp'], aaa: ['1'] };
    assert.equal(formatResult('entry', 'idp', { result: entry, value: 'keycloak', summary: null }, contract, plain).text, '  dn: cn=keycloak,cn=idp,dc=example,dc=test\n  IdP reference name: keycloak\n  Provider: keycloak\n  Client identifier: dirid\n  Scope: openid email\n');
    assert.equal(
      formatEntry(entry, contract.objects[0], { all: true, raw: false }),
      '  dn: cn=keycloak,cn=idp,dc=example,dc=test\n  IdP reference name: keycloak\n  Provider: keycloak\n  Client identifier: dirid\n  Scope: openid email\n  aaa: 1\n  objectclass: top, dirIdp\n',
    );
  });
  it('--raw: attribute names and one value per line', () => {
    const entry = { dn: 'cn=k,cn=idp,dc=t', cn: ['k'], objectclass: ['top', 'dirIdp'] };
    assert.equal(formatEntry(entry, contract.objects[0], { all: true, raw: true }), '  dn: cn=k,cn=idp,dc=t\n  cn: k\n  objectclass: top\n  objectclass: dirIdp\n');
  });
  it('--rights: one attributelevelrights line', () => {
    const entry = { cn: ['k'], attributelevelrights: { cn: 'rscwo', diridpclientid: 'rsc' } };
    assert.equal(formatEntry(entry, contract.objects[0], { all: true, raw: false }), '  IdP reference name: k\n  attributelevelrights: cn: rscwo, diridpclientid: rsc\n');
  });
  it('values: booleans, binary, dates; control characters never reach the terminal', () => {
    assert.equal(showValue(true), 'True');
    assert.equal(showValue(false), 'False');
    assert.equal(showValue(Buffer.from([1, 2, 3])), 'AQID');
    assert.equal(showValue(new Date(Date.UTC(2026, 0, 2, 3, 4, 5))), '20260102030405Z');
    assert.equal(showValue('a\u001b[2Jb\n'), 'a\\x1b[2Jb\\x0a');
  });
});

describe('find', () => {
  it('count summary, entries separated by blank lines, then the number returned', () => {
    const out = formatResult('entries', 'idp', { result: [kc, { cn: ['gh'], diridpprovider: ['github'] }], count: 2, truncated: false, summary: '2 IdP references matched' }, contract, plain);
    assert.equal(
      out.text,
      [
        '------------------------',
        '2 IdP references matched',
        '------------------------',
        '  IdP reference name: keycloak',
        '  Provider: keycloak',
        '  Client identifier: dirid',
        '  Scope: openid email',
        '',
        '  IdP reference name: gh',
        '  Provider: github',
        '----------------------------',
        'Number of entries returned 2',
        '----------------------------',
        '',
      ].join('\n'),
    );
    assert.equal(out.exitCode, 0);
  });
  it('zero matches exit 1', () => {
    const out = formatResult('entries', 'idp', { result: [], count: 0, truncated: false, summary: '0 IdP references matched' }, contract, plain);
    assert.equal(out.text, '------------------------\n0 IdP references matched\n------------------------\n----------------------------\nNumber of entries returned 0\n----------------------------\n');
    assert.equal(out.exitCode, 1);
  });
  it('says when the result was truncated', () => {
    const out = formatResult('entries', 'idp', { result: [{ cn: ['a'] }], count: 1, truncated: true, summary: '1 IdP reference matched' }, contract, plain);
    assert.match(out.text, /Number of entries returned 1\n-+\nSearch result has been truncated: the size or time limit was reached\n$/);
  });
});

describe('membership', () => {
  it('the entry, the failures, then the count; failures exit 1', () => {
    const out = formatResult(
      'entry',
      'group',
      { result: { cn: ['editors'], member_user: ['alice'] }, value: 'editors', completed: 1, failed: { member: { user: [['bob', 'no such entry']], group: [] } }, summary: 'Number of members added 1' },
      contract,
      plain,
    );
    assert.equal(
      out.text,
      '  Group name: editors\n  Member users: alice\n  Failed members:\n    member user: bob: no such entry\n-------------------------\nNumber of members added 1\n-------------------------\n',
    );
    assert.equal(out.exitCode, 1);
  });
  it('without failures exits 0 and prints no failure block', () => {
    const out = formatResult('entry', 'group', { result: { cn: ['g'] }, value: 'g', completed: 2, failed: { member: { user: [], group: [] } }, summary: 'Number of members added 2' }, contract, plain);
    assert.equal(out.text, '  Group name: g\n-------------------------\nNumber of members added 2\n-------------------------\n');
    assert.equal(out.exitCode, 0);
  });
});

describe('checks (idp-check)', () => {
  const lines = [
    { check: 'Discovery', status: 'SKIP', message: 'no issuer URL set' },
    { check: 'Token URI', status: 'PASS', message: 'https://idp.example/token answered (HTTP 400)' },
  ];
  it('one line per check, then the summary; all passed or skipped exits 0', () => {
    const out = formatResult('checks', 'idp', { result: lines, value: 'kc', summary: 'Checked IdP reference "kc": 1 passed, 0 failed, 1 skipped' }, contract, plain);
    assert.equal(
      out.text,
      'SKIP Discovery: no issuer URL set\nPASS Token URI: https://idp.example/token answered (HTTP 400)\n' +
        '---------------------------------------------------------\nChecked IdP reference "kc": 1 passed, 0 failed, 1 skipped\n---------------------------------------------------------\n',
    );
    assert.equal(out.exitCode, 0);
  });
  it('a failed check exits 1, and so does a result that holds no checks', () => {
    const failed = [...lines, { check: 'Device authorization', status: 'FAIL', message: 'invalid_client: the IdP does not accept client "c"\u001b[2J' }];
    const out = formatResult('checks', 'idp', { result: failed, value: 'kc', summary: 's' }, contract, plain);
    assert.match(out.text, /\nFAIL Device authorization: invalid_client: the IdP does not accept client "c"\\x1b\[2J\n/);
    assert.equal(out.exitCode, 1);
    assert.equal(formatResult('checks', 'idp', { result: [], value: 'kc', summary: 's' }, contract, plain).exitCode, 1);
    assert.equal(formatResult('checks', 'idp', { result: { check: 'x' }, value: 'kc', summary: 's' }, contract, plain).exitCode, 1);
  });
});
