/**
 * Both directions against a real peer: OpenLDAP's command-line clients
 * (ldapsearch, ldapwhoami, ldapcompare, ldappasswd, ldapmodify and
 * friends) talk to a scripted server (peer.ts) built on src/ldap. The
 * server asserts that our decoder reads exactly what each client sent
 * (filters, attributes, controls, extended values, SASL credentials), and
 * the clients' output and exit codes show that they read our encoded
 * responses: entries, references, paged-results cookies, SASL challenges,
 * extended responses, result codes and the Notice of Disconnection.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { ControlOid, ExtendedOid, ResultCode } from '../../src/ldap/codes.js';
import { decodePagedResultsValue, findControl, pagedResultsControl } from '../../src/ldap/controls.js';
import { checkWhoAmIRequest, decodePasswordModifyRequest, encodePasswordModifyResponse, noticeOfDisconnection, whoAmIResponse } from '../../src/ldap/extended.js';
import type { LdapRequest, SearchRequest } from '../../src/ldap/protocol-requests.js';
import { plain, runClient, type Handler } from './peer.js';
import { CAPTURED_SEARCH_REQUEST } from './vectors.js';

const BASE = 'dc=example,dc=test';
const ALICE = `uid=alice,cn=users,${BASE}`;
const URL = 'ldap://127.0.0.1:PORT';

const ok = { matchedDN: '', diagnosticMessage: '' };

/** Answers binds with success and hands other requests to `rest`. */
function withBind(rest: Handler): Handler {
  return (m, reply, socket) => {
    if (m.protocolOp.op === 'bindRequest') reply({ op: 'bindResponse', resultCode: ResultCode.success, ...ok });
    else rest(m, reply, socket);
  };
}

function only<K extends LdapRequest['op']>(req: LdapRequest, op: K): Extract<LdapRequest, { op: K }> {
  assert.equal(req.op, op);
  return req as Extract<LdapRequest, { op: K }>;
}

describe('ldapsearch', () => {
  it('reads a paged search exactly and pages through our entries and cookies', async () => {
    const searches: SearchRequest[] = [];
    const cookies: string[] = [];
    const run = await runClient(
      'ldapsearch',
      ['-x', '-H', URL, '-b', BASE, '-E', 'pr=2/noprompt', '(&(uid=al*)(objectClass=person)(!(cn=x)))', 'cn', 'mail'],
      withBind((m, reply) => {
        const s = only(m.protocolOp, 'searchRequest');
        searches.push(s);
        const paged = findControl(m.controls, ControlOid.pagedResults);
        assert.ok(paged, 'paged results control');
        assert.equal(paged.criticality, false);
        const { size, cookie } = decodePagedResultsValue(paged.value);
        assert.equal(size, 2);
        cookies.push(cookie.toString());
        if (cookie.length === 0) {
          reply({ op: 'searchResEntry', objectName: ALICE, attributes: [{ type: 'cn', values: ['Alice Liddell'] }, { type: 'mail', values: ['alice@example.test'] }] });
          reply({ op: 'searchResEntry', objectName: `uid=alan,cn=users,${BASE}`, attributes: [{ type: 'cn', values: ['Alan', 'Ålan Turing'] }] });
          reply({ op: 'searchResDone', resultCode: ResultCode.success, ...ok }, [pagedResultsControl({ size: 3, cookie: Buffer.from('page-2') })]);
        } else {
          reply({ op: 'searchResEntry', objectName: `uid=alma,cn=users,${BASE}`, attributes: [{ type: 'mail', values: ['alma@example.test'] }] });
          reply({ op: 'searchResRef', uris: ['ldap://other.example.test/dc=other,dc=test??sub'] });
          reply({ op: 'searchResDone', resultCode: ResultCode.success, ...ok }, [pagedResultsControl({ size: 0, cookie: Buffer.alloc(0) })]);
        }
      }),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(cookies, ['', 'page-2']);
    for (const s of searches) {
      assert.deepEqual(s, { ...CAPTURED_SEARCH_REQUEST, baseObject: BASE });

    }
    assert.deepEqual(
      run.requests.map((m) => [m.messageId, m.protocolOp.op]),
      [
        [1, 'bindRequest'],
        [2, 'searchRequest'],
        [3, 'searchRequest'],
        [4, 'unbindRequest'],
      ],
    );
    const bind = only(run.requests[0]!.protocolOp, 'bindRequest');
    assert.deepEqual(bind, { op: 'bindRequest', version: 3, name: '', authentication: { method: 'simple', password: Buffer.alloc(0) } });
    // our entries, values (non-ASCII shown base64 by ldapsearch) and the reference came through
    assert.match(run.stdout, /^dn: uid=alice,cn=users,dc=example,dc=test\ncn: Alice Liddell\nmail: alice@example\.test$/m);
    assert.match(run.stdout, new RegExp(`^cn: Alan\\ncn:: ${Buffer.from('Ålan Turing').toString('base64')}$`, 'm'));
    assert.match(run.stdout, /^dn: uid=alma,cn=users,dc=example,dc=test\nmail: alma@example\.test$/m);
    assert.match(run.stdout, /^ref: ldap:\/\/other\.example\.test\/dc=other,dc=test\?\?sub$/m);
    assert.match(run.stdout, /^pagedresults: estimate=3 cookie=cGFnZS0y$/m);
  });

  it('reads scope, deref, limits, typesOnly and every filter item kind; answers typesOnly entries', async () => {
    let search: SearchRequest | undefined;
    const run = await runClient(
      'ldapsearch',
      ['-x', '-H', URL, '-b', `cn=users,${BASE}`, '-s', 'one', '-a', 'always', '-z', '5', '-l', '7', '-A', '(|(cn~=bob)(uidNumber>=1000)(uidNumber<=2000)(mail=*)(cn=*a*b\\2a*c)(cn:=Exact)(&)(|))', '1.1', '*', '+'],
      withBind((m, reply) => {
        search = only(m.protocolOp, 'searchRequest');
        reply({ op: 'searchResEntry', objectName: ALICE, attributes: [{ type: 'cn', values: [] }, { type: 'mail', values: [] }] });
        reply({ op: 'searchResDone', resultCode: ResultCode.success, ...ok });
      }),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(search, {
      op: 'searchRequest',
      baseObject: `cn=users,${BASE}`,
      scope: 'singleLevel',
      derefAliases: 'derefAlways',
      sizeLimit: 5,
      timeLimit: 7,
      typesOnly: true,
      filter: {
        kind: 'or',
        items: [
          { kind: 'eq', attr: 'cn', value: 'bob' },
          { kind: 'ge', attr: 'uidNumber', value: '1000' },
          { kind: 'le', attr: 'uidNumber', value: '2000' },
          { kind: 'present', attr: 'mail' },
          { kind: 'sub', attr: 'cn', any: ['a', 'b*'], final: 'c' },
          { kind: 'eq', attr: 'cn', value: 'Exact' },
          { kind: 'and', items: [] },
          { kind: 'or', items: [] },
        ],
      },
      attributes: ['1.1', '*', '+'],
    });
    assert.match(run.stdout, /^dn: uid=alice,cn=users,dc=example,dc=test\ncn:\nmail:$/m);
  });

  it('an extensible match with a matching rule is answered unwillingToPerform on its own message', async () => {
    const run = await runClient('ldapsearch', ['-x', '-H', URL, '-b', BASE, '(cn:caseExactMatch:=Alice)'], withBind(() => assert.fail('the search should not reach the handler')));
    assert.equal(run.code, ResultCode.unwillingToPerform, run.stderr);
    assert.equal(run.refused.length, 1);
    const e = run.refused[0]!;
    assert.equal(e.messageId, 2);
    assert.equal(e.op, 'searchRequest');
    assert.equal(e.resultCode, ResultCode.unwillingToPerform);
    assert.match(run.stdout, /^result: 53 Server is unwilling to perform\ntext: extensible match \(cn:caseExactMatch:=\) is not supported/m);
  });

  it('reads our Notice of Disconnection', async () => {
    const run = await runClient(
      'ldapsearch',
      ['-x', '-H', URL, '-b', BASE, '(uid=alice)'],
      withBind((_m, _reply, socket) => socket.end(noticeOfDisconnection(ResultCode.unavailable, 'the server is stopping'))),
    );
    assert.equal(run.code, ResultCode.unavailable, run.stderr);
    assert.match(run.stderr, /Server is unavailable \(52\)/);
  });
});

describe('ldapwhoami', () => {
  it('simple bind with a DN and password, then Who am I?', async () => {
    const run = await runClient(
      'ldapwhoami',
      ['-x', '-H', URL, '-D', ALICE, '-w', 'S3cret pass'],
      withBind((m, reply) => {
        const ext = only(m.protocolOp, 'extendedReq');
        checkWhoAmIRequest(ext);
        reply(whoAmIResponse(`dn:${ALICE}`, ResultCode.success));
      }),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.requests[0]!.protocolOp, { op: 'bindRequest', version: 3, name: ALICE, authentication: { method: 'simple', password: Buffer.from('S3cret pass') } });
    assert.deepEqual(run.requests[1]!.protocolOp, { op: 'extendedReq', requestName: ExtendedOid.whoAmI });
    assert.equal(run.stdout.trim(), `dn:${ALICE}`);
  });

  it('SASL PLAIN: mechanism and credentials', async () => {
    const run = await runClient(
      'ldapwhoami',
      ['-H', URL, '-Y', 'PLAIN', '-O', 'none', '-U', 'alice', '-w', 'pw'],
      withBind((_m, reply) => reply(whoAmIResponse('u:alice', ResultCode.success))),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(run.requests[0]!.protocolOp, { op: 'bindRequest', version: 3, name: '', authentication: { method: 'sasl', mechanism: 'PLAIN', credentials: Buffer.from('\0alice\0pw') } });
    assert.equal(run.stdout.trim(), 'u:alice');
  });

  it('SASL CRAM-MD5: our challenge in serverSaslCreds reaches the client, its answer comes back', async () => {
    const challenge = '<4711.1700000000@ldap.example.test>';
    let answer = '';
    const run = await runClient('ldapwhoami', ['-H', URL, '-Y', 'CRAM-MD5', '-O', 'none', '-U', 'alice', '-w', 'pw'], (m, reply) => {
      if (m.protocolOp.op === 'bindRequest') {
        const auth = m.protocolOp.authentication;
        assert.ok(auth.method === 'sasl' && auth.mechanism === 'CRAM-MD5');
        if (auth.credentials === undefined) {
          reply({ op: 'bindResponse', resultCode: ResultCode.saslBindInProgress, ...ok, serverSaslCreds: Buffer.from(challenge) });
        } else {
          answer = auth.credentials.toString();
          reply({ op: 'bindResponse', resultCode: ResultCode.success, ...ok });
        }
      } else reply(whoAmIResponse('u:alice', ResultCode.success));
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(answer, `alice ${createHmac('md5', 'pw').update(challenge).digest('hex')}`);
  });
});

describe('ldapcompare', () => {
  for (const [code, word, exit] of [
    [ResultCode.compareTrue, 'TRUE', 6],
    [ResultCode.compareFalse, 'FALSE', 5],
  ] as const) {
    it(`answers ${word}; a base64 assertion value arrives as its bytes`, async () => {
      const run = await runClient(
        'ldapcompare',
        ['-x', '-H', URL, ALICE, 'photo::/wAB'],
        withBind((_m, reply) => reply(plain('compareResponse', code))),
      );
      assert.equal(run.code, exit, run.stderr);
      assert.equal(run.stdout.trim(), word);
      assert.deepEqual(run.requests[1]!.protocolOp, { op: 'compareRequest', entry: ALICE, attributeDesc: 'photo', assertionValue: Buffer.from([0xff, 0x00, 0x01]) });
    });
  }
});

describe('ldappasswd', () => {
  it('Password Modify with identity, old and new password', async () => {
    const run = await runClient(
      'ldappasswd',
      ['-x', '-H', URL, '-D', ALICE, '-w', 'old-pw', '-a', 'old-pw', '-s', 'new-pw', ALICE],
      withBind((m, reply) => {
        const ext = only(m.protocolOp, 'extendedReq');
        assert.equal(ext.requestName, ExtendedOid.passwordModify);
        assert.deepEqual(decodePasswordModifyRequest(ext.requestValue), { userIdentity: ALICE, oldPasswd: Buffer.from('old-pw'), newPasswd: Buffer.from('new-pw') });
        reply({ op: 'extendedResp', resultCode: ResultCode.success, ...ok });
      }),
    );
    assert.equal(run.code, 0, run.stderr);
  });

  it('without a new password, prints the one we generated', async () => {
    const run = await runClient(
      'ldappasswd',
      ['-x', '-H', URL, '-D', ALICE, '-w', 'old-pw'],
      withBind((m, reply) => {
        const ext = only(m.protocolOp, 'extendedReq');
        assert.deepEqual(decodePasswordModifyRequest(ext.requestValue), {});
        reply({ op: 'extendedResp', resultCode: ResultCode.success, ...ok, responseValue: encodePasswordModifyResponse(Buffer.from('Gen-7Fq2')) });
      }),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^New password: Gen-7Fq2$/m);
  });

  it('a refusal reaches the client with its diagnostic message', async () => {
    const run = await runClient(
      'ldappasswd',
      ['-x', '-H', URL, '-D', ALICE, '-w', 'old-pw', '-s', 'short'],
      withBind((_m, reply) => reply({ op: 'extendedResp', resultCode: ResultCode.constraintViolation, matchedDN: '', diagnosticMessage: 'password too short' })),
    );
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stdout, /^Result: Constraint violation \(19\)\nAdditional info: password too short$/m);
  });
});

describe('write operations are read far enough to refuse them', () => {
  const cases = [
    { tool: 'ldapmodify', ldif: `dn: ${ALICE}\nchangetype: modify\nreplace: mail\nmail: a@b.test\n`, op: 'modifyRequest', response: 'modifyResponse', verb: 'ldap_modify' },
    { tool: 'ldapadd', ldif: `dn: uid=bob,cn=users,${BASE}\nobjectClass: person\ncn: Bob\nsn: B\n`, op: 'addRequest', response: 'addResponse', verb: 'ldap_add' },
    { tool: 'ldapmodify', ldif: `dn: ${ALICE}\nchangetype: modrdn\nnewrdn: uid=alicia\ndeleteoldrdn: 1\nnewsuperior: cn=people,${BASE}\n`, op: 'modDNRequest', response: 'modDNResponse', verb: 'ldap_rename' },
    { tool: 'ldapdelete', ldif: `${ALICE}\n`, op: 'delRequest', response: 'delResponse', verb: 'ldap_delete' },
  ] as const;
  for (const c of cases) {
    it(`${c.op} → unwillingToPerform`, async () => {
      const run = await runClient(
        c.tool,
        ['-x', '-H', URL],
        withBind((m, reply) => {
          assert.deepEqual(m.protocolOp, { op: c.op, entry: c.op === 'addRequest' ? `uid=bob,cn=users,${BASE}` : ALICE });
          reply(plain(c.response, ResultCode.unwillingToPerform, 'writes go through the dirid API'));
        }),
        { stdin: c.ldif },
      );
      assert.equal(run.code, ResultCode.unwillingToPerform, run.stderr);
      assert.match(run.stderr, new RegExp(`${c.verb}: Server is unwilling to perform \\(53\\)`));
      assert.match(run.stderr, /additional info: writes go through the dirid API/);
    });
  }
});
