/**
 * Our GSS-API acceptor (src/kerberos/gss-context.ts, gss-tokens.ts) with
 * MIT's own initiator: Debian's `gss-client` (krb5-gss-samples) holding a
 * ticket from our KDC for a service added through the API, against a server
 * in this test that speaks the sample protocol (test/support/gss-sample.ts).
 * MIT wraps a message, we unwrap it; we answer a MIC of it, MIT verifies it:
 * with and without encryption (-nx), without wrapping (-nw) or MIC (-nm),
 * without mutual authentication (-nomutual, where both sides count from the
 * initiator's sequence number), with sequencing and several messages, with
 * delegation, for each enctype, with and without an acceptor subkey. A MIC we
 * spoil is refused by MIT; MIT's AP-REQ and Wrap tokens replayed are refused
 * by us.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { runTool } from '../support/mit-tools.js';
import { listenSample, sendSample, SampleFlag, type SampleReader } from '../support/gss-sample.js';
import { acceptSecContext, type AcceptedContext } from '../../src/kerberos/gss-context.js';
import { GssError } from '../../src/kerberos/gss-tokens.js';
import { ReplayCache } from '../../src/kerberos/replay-cache.js';
import { readKeytab, type KeytabEntry } from '../../src/kerberos/keytab.js';
import { GssFlag } from '../../src/kerberos/asn1/gss.js';
import { ErrorCode } from '../../src/kerberos/iana.js';
import type { EncryptionKey } from '../../src/kerberos/crypto/index.js';

const SERVICE = 'gssdemo/localhost@EXAMPLE.TEST';

interface Received {
  message: Buffer;
  wrapped: boolean;
  conf: boolean;
  replayRefused?: string;
}

interface Session {
  accepted?: AcceptedContext;
  apReq?: Buffer;
  received: Received[];
  error?: unknown;
}

describe('GSS-API acceptor with MIT gss-client', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;
  let keys: KeytabEntry[];
  let sampleServer: Awaited<ReturnType<typeof listenSample>>;
  const replay = new ReplayCache(600_000);
  let sessions: Session[] = [];
  let opts: { acceptorSubkey: boolean; spoilMic: boolean } = { acceptorSubkey: true, spoilMic: false };

  const keyFor = async (server: string, etype: number, kvno: number | undefined): Promise<EncryptionKey | null> => {
    if (server !== SERVICE) return null;
    const k = keys.find((e) => e.etype === etype && (kvno === undefined || e.kvno === kvno));
    return k ? { etype, value: k.key } : null;
  };

  async function serve(socket: Socket, reader: SampleReader): Promise<void> {
    const s: Session = { received: [] };
    sessions.push(s);
    try {
      const first = await reader.next();
      assert.ok(first.flags & SampleFlag.NOOP && first.flags & SampleFlag.CONTEXT_NEXT, 'the client asks for a context first');
      const ctxToken = await reader.next();
      assert.equal(ctxToken.flags, SampleFlag.CONTEXT);
      s.apReq = ctxToken.body;
      const a = await acceptSecContext(ctxToken.body, { keyFor, replay, acceptorSubkey: opts.acceptorSubkey });
      s.accepted = a;
      if (a.outputToken) sendSample(socket, SampleFlag.CONTEXT, a.outputToken);
      for (;;) {
        const t = await reader.next();
        if (t.flags & SampleFlag.NOOP) return;
        const r: Received = { message: t.body, wrapped: false, conf: false };
        if (t.flags & SampleFlag.WRAPPED) {
          const u = a.context.unwrap(t.body);
          Object.assign(r, { message: u.message, wrapped: true, conf: u.conf });
          try {
            a.context.unwrap(t.body);
          } catch (e) {
            r.replayRefused = e instanceof GssError ? e.code : String(e);
          }
        }
        s.received.push(r);
        if (t.flags & SampleFlag.SEND_MIC) {
          const mic = a.context.getMic(r.message);
          if (opts.spoilMic) mic[mic.length - 1]! ^= 1;
          sendSample(socket, SampleFlag.MIC, mic);
        } else sendSample(socket, SampleFlag.NOOP, Buffer.alloc(0));
      }
    } catch (e) {
      s.error = e;
    }
  }

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    await admin.call('service_add', ['gssdemo/localhost']);
    const kt = await admin.call('keytab_get', ['gssdemo/localhost']);
    keys = readKeytab(kt.result.keytab as Buffer);
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'cc')}`, KRB5_TRACE: '' };
    const k = await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`);
    assert.equal(k.code, 0, k.stderr);
    sampleServer = await listenSample(serve);
  });
  after(async () => {
    await sampleServer?.close();
    await realm?.stop();
  });

  const gssClient = async (args: string[], message: string, e: NodeJS.ProcessEnv = env) => {
    sessions = [];
    // the server records each message before it answers, so all are there when the client exits
    const r = await runTool('gss-client', ['-port', String(sampleServer.port), ...args, 'localhost', 'gssdemo@localhost', message], e);
    return { ...r, sessions };
  };

  it('wraps with encryption, we unwrap, MIT verifies our MIC; mutual authentication with an acceptor subkey', async () => {
    const r = await gssClient([], 'hello from MIT');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Signature verified\./);
    assert.match(r.stdout, /context flag: GSS_C_MUTUAL_FLAG/);
    const [s] = r.sessions;
    assert.equal(s!.error, undefined);
    assert.equal(s!.accepted!.client, 'admin@EXAMPLE.TEST');
    assert.equal(s!.accepted!.server, SERVICE);
    assert.ok(s!.accepted!.mutual && s!.accepted!.outputToken);
    assert.ok(s!.accepted!.context.keys.acceptorSubkey, 'we sent an acceptor subkey');
    assert.ok(s!.accepted!.flags & GssFlag.MUTUAL && s!.accepted!.flags & GssFlag.REPLAY);
    assert.equal(s!.accepted!.flags & GssFlag.SEQUENCE, 0);
    assert.deepEqual(s!.received.map((x) => [x.message.toString(), x.wrapped, x.conf]), [['hello from MIT', true, true]]);
    assert.equal(s!.received[0]!.replayRefused, 'SEQUENCE', 'the same Wrap token twice is refused');
  });

  it('-nx: a Wrap token with integrity only', async () => {
    const r = await gssClient(['-nx'], 'integrity only');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Signature verified\./);
    assert.deepEqual(r.sessions[0]!.received.map((x) => [x.message.toString(), x.wrapped, x.conf]), [['integrity only', true, false]]);
  });

  it('-nw and -nm: the message in clear, and no MIC asked for', async () => {
    const nw = await gssClient(['-nw'], 'in clear');
    assert.equal(nw.code, 0, nw.stdout + nw.stderr);
    assert.match(nw.stdout, /Signature verified\./);
    assert.deepEqual(nw.sessions[0]!.received.map((x) => [x.message.toString(), x.wrapped]), [['in clear', false]]);
    const nm = await gssClient(['-nm'], 'no mic');
    assert.equal(nm.code, 0, nm.stdout + nm.stderr);
    assert.match(nm.stdout, /Response received\./);
    assert.deepEqual(nm.sessions[0]!.received.map((x) => [x.message.toString(), x.conf]), [['no mic', true]]);
  });

  it('-nomutual -seq: no AP-REP; both directions count from the initiator\'s number (MIT checks ours)', async () => {
    const r = await gssClient(['-nomutual', '-seq', '-mcount', '2'], 'no mutual');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Signature verified\./);
    assert.doesNotMatch(r.stdout, /GSS_C_MUTUAL_FLAG/);
    const a = r.sessions[0]!.accepted!;
    assert.equal(a.mutual, false);
    assert.equal(a.outputToken, undefined);
    assert.equal(a.context.keys.acceptorSubkey, undefined);
    assert.ok(a.flags & GssFlag.SEQUENCE);
    assert.deepEqual(r.sessions[0]!.received.map((x) => x.message.toString()), ['no mutual', 'no mutual']);
  });

  it('-seq -mcount 4: sequencing asked for, four messages in order each way', async () => {
    const r = await gssClient(['-seq', '-mcount', '4'], 'again and again');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal(r.stdout.match(/Signature verified\./g)?.length, 4);
    const s = r.sessions[0]!;
    assert.ok(s.accepted!.flags & GssFlag.SEQUENCE);
    assert.equal(s.received.length, 4);
    assert.ok(s.received.every((x) => x.message.toString() === 'again and again' && x.conf && x.replayRefused === 'SEQUENCE'));
  });

  it('-d: the delegated credentials arrive in the GSS checksum', async () => {
    const r = await gssClient(['-d'], 'delegate');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /GSS_C_DELEG_FLAG/);
    const a = r.sessions[0]!.accepted!;
    assert.ok(a.flags & GssFlag.DELEG);
    assert.ok(a.delegation && a.delegation[0] === 0x76, 'a KRB-CRED (APPLICATION 22)');
  });

  it('without an acceptor subkey MIT and we protect tokens with the initiator\'s subkey', async () => {
    opts = { acceptorSubkey: false, spoilMic: false };
    try {
      const r = await gssClient([], 'initiator subkey');
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /Signature verified\./);
      assert.equal(r.sessions[0]!.accepted!.context.keys.acceptorSubkey, undefined);
      assert.equal(r.sessions[0]!.received[0]!.message.toString(), 'initiator subkey');
    } finally {
      opts = { acceptorSubkey: true, spoilMic: false };
    }
  });

  it('MIT refuses a MIC we spoil', async () => {
    opts = { acceptorSubkey: true, spoilMic: true };
    try {
      const r = await gssClient([], 'spoiled');
      assert.notEqual(r.code, 0);
      assert.match(r.stdout + r.stderr, /verifying signature/);
    } finally {
      opts = { acceptorSubkey: true, spoilMic: false };
    }
  });

  it('MIT\'s AP-REQ sent again is refused as a replay', async () => {
    const r = await gssClient(['-nm'], 'once');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const apReq = r.sessions[0]!.apReq!;
    await assert.rejects(acceptSecContext(apReq, { keyFor, replay }), (e) => e instanceof GssError && e.code === 'REJECTED' && e.krbCode === ErrorCode.KRB_AP_ERR_REPEAT);
    await assert.rejects(acceptSecContext(apReq, { keyFor: async () => null, replay: new ReplayCache(600_000) }), (e) => e instanceof GssError && e.krbCode === ErrorCode.KRB_AP_ERR_NOT_US);
  });

  for (const [etype, number] of [['aes256-cts-hmac-sha1-96', 18], ['aes128-cts-hmac-sha1-96', 17], ['aes256-cts-hmac-sha384-192', 20], ['aes128-cts-hmac-sha256-128', 19]] as const) {
    it(`session key and subkeys of ${etype}: wrap with and without encryption, MIC`, async () => {
      const conf = join(realm.dataDir, `krb5-${etype}.conf`);
      writeFileSync(conf, readFileSync(join(realm.dataDir, 'realm', 'krb5.conf'), 'utf8').replace('[libdefaults]', `[libdefaults]\n default_tkt_enctypes = ${etype}\n default_tgs_enctypes = ${etype}\n permitted_enctypes = ${etype}`));
      const e = { ...env, KRB5_CONFIG: conf, KRB5CCNAME: `FILE:${join(realm.dataDir, `cc-${etype}`)}` };
      assert.equal((await runTool('kinit', ['admin'], e, `${realm.adminPassword}\n`)).code, 0);
      for (const args of [[], ['-nx']]) {
        const r = await gssClient(args, `over ${etype}`, e);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        assert.match(r.stdout, /Signature verified\./);
        const s = r.sessions[0]!;
        assert.equal(s.accepted!.context.keys.initiatorKey.etype, number);
        assert.equal(s.accepted!.context.keys.acceptorSubkey!.etype, number);
        assert.equal(s.received[0]!.message.toString(), `over ${etype}`);
        assert.equal(s.received[0]!.conf, args.length === 0);
      }
    });
  }
});
