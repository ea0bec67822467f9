/**
 * Captures real MIT krb5 bytes for the ASN.1, ccache and keytab tests:
 *   node --import tsx scripts/capture-mit-krb5.ts
 * Starts a throwaway MIT realm (test/support/mit-realm.ts: its own kdc.conf,
 * krb5.conf and database in a temporary directory, never /etc), puts a UDP
 * and TCP relay between the MIT clients and krb5kdc that records every
 * message, runs kinit (plain, a forced SHA-2 etype, keytab, FAST with -T),
 * kvno and curl --negotiate, and writes the messages, the ccaches, the
 * keytabs (kadmin.local ktadd, ktutil, one with holes from ktremove), an
 * index.json and a README with every password to test/data/kerberos/mit/.
 */
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { freeUdpPort, startMitRealm } from '../test/support/mit-realm.js';

const out = new URL('../test/data/kerberos/mit/', import.meta.url).pathname;
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const PASSWORDS = { alice: 'alice-password', bob: 'bob-password', carol: 'carol-password' } as const;
const SERVICES = ['HTTP/server.example.test', 'host/server.example.test'];
const mit = await startMitRealm({ principals: [['alice', PASSWORDS.alice], ['bob', PASSWORDS.bob], ...SERVICES.map((s): [string, null] => [s, null])] });

// ---- the recording relay ---------------------------------------------------------
interface Captured {
  step: string;
  dir: 'req' | 'rep';
  transport: 'udp' | 'tcp';
  bytes: Buffer;
}
const captured: Captured[] = [];
let step = 'setup';
const record = (dir: Captured['dir'], transport: Captured['transport'], bytes: Buffer) => captured.push({ step, dir, transport, bytes: Buffer.from(bytes) });

const relayPort = await freeUdpPort();
const udpRelay = createSocket('udp4');
const udpUpstream = createSocket('udp4');
let udpClient: { port: number; address: string } | undefined;
udpUpstream.on('message', (m) => {
  record('rep', 'udp', m);
  if (udpClient) udpRelay.send(m, udpClient.port, udpClient.address);
});
udpRelay.on('message', (m, rinfo) => {
  udpClient = rinfo;
  record('req', 'udp', m);
  udpUpstream.send(m, mit.port, '127.0.0.1');
});
await new Promise<void>((r) => udpRelay.bind(relayPort, '127.0.0.1', () => r()));
await new Promise<void>((r) => udpUpstream.bind(0, '127.0.0.1', () => r()));

/** Splits a TCP byte stream into its 4-byte-length-prefixed messages. */
function framer(dir: Captured['dir']): (chunk: Buffer) => void {
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 4 && pending.length >= 4 + pending.readUInt32BE(0)) {
      const len = pending.readUInt32BE(0);
      record(dir, 'tcp', pending.subarray(4, 4 + len));
      pending = pending.subarray(4 + len);
    }
  };
}
const tcpRelay = createServer((client) => {
  const upstream = createConnection(mit.port, '127.0.0.1');
  const toKdc = framer('req');
  const toClient = framer('rep');
  client.on('data', (d) => {
    toKdc(d);
    upstream.write(d);
  });
  upstream.on('data', (d) => {
    toClient(d);
    client.write(d);
  });
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
});
await new Promise<void>((r) => tcpRelay.listen(relayPort, '127.0.0.1', () => r()));

const baseConf = readFileSync(mit.env.KRB5_CONFIG!, 'utf8')
  .replace(`127.0.0.1:${mit.port}`, `127.0.0.1:${relayPort}`)
  .replace('[libdefaults]\n', '[libdefaults]\n dns_canonicalize_hostname = false\n');
const relayConf = join(mit.dir, 'krb5-relay.conf');
writeFileSync(relayConf, baseConf);
const v3Conf = join(mit.dir, 'krb5-v3.conf');
writeFileSync(v3Conf, baseConf.replace('[libdefaults]\n', '[libdefaults]\n ccache_type = 3\n'));
const sha384Conf = join(mit.dir, 'krb5-sha384.conf');
writeFileSync(sha384Conf, baseConf.replace('[libdefaults]\n', '[libdefaults]\n default_tkt_enctypes = aes256-cts-hmac-sha384-192\n'));
const env = { ...mit.env, KRB5_CONFIG: relayConf };

/** Runs an MIT tool without blocking the relay's event loop. */
function run(cmd: string, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { env: opts.env ?? env });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d));
    c.stderr.on('data', (d: Buffer) => (stderr += d));
    c.on('exit', (status) => (status === 0 ? resolve(stdout) : reject(new Error(`${cmd} ${args.join(' ')}: ${stderr}`))));
    c.stdin.end(opts.input ?? '');
  });
}
const tmp = (name: string) => join(mit.dir, name);

// ---- the exchanges -----------------------------------------------------------------
step = 'kinit';
await run('kinit', ['-c', `FILE:${tmp('alice.cc')}`, 'alice'], { input: `${PASSWORDS.alice}\n` });
step = 'kvno';
await run('kvno', ['-c', `FILE:${tmp('alice.cc')}`, 'HTTP/server.example.test']);

step = 'kinit-sha384';
await run('kinit', ['-c', `FILE:${tmp('bob.cc')}`, 'bob'], { input: `${PASSWORDS.bob}\n`, env: { ...env, KRB5_CONFIG: sha384Conf } });

step = 'setup';
mit.kadmin(`ktadd -k ${tmp('host.keytab')} -norandkey host/server.example.test`);
step = 'kinit-keytab';
await run('kinit', ['-k', '-t', tmp('host.keytab'), '-c', `FILE:${tmp('armor.cc')}`, 'host/server.example.test']);

step = 'kinit-fast';
await run('kinit', ['-T', `FILE:${tmp('armor.cc')}`, '-c', `FILE:${tmp('alice-fast.cc')}`, 'alice'], { input: `${PASSWORDS.alice}\n` });

step = 'kinit-v3';
await run('kinit', ['-c', `FILE:${tmp('alice-v3.cc')}`, 'alice'], { input: `${PASSWORDS.alice}\n`, env: { ...env, KRB5_CONFIG: v3Conf } });

// curl --negotiate against a local HTTP server that records the SPNEGO token
step = 'curl';
let negotiateToken = '';
const http = createHttpServer((req, res) => {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Negotiate ')) {
    negotiateToken = auth.slice('Negotiate '.length);
    res.writeHead(200).end('ok');
  } else res.writeHead(401, { 'WWW-Authenticate': 'Negotiate' }).end();
});
await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()));
const httpPort = (http.address() as AddressInfo).port;
await run('curl', ['-sf', '--negotiate', '-u', ':', '--resolve', `server.example.test:${httpPort}:127.0.0.1`, `http://server.example.test:${httpPort}/`], {
  env: { ...env, KRB5CCNAME: `FILE:${tmp('alice-fast.cc')}` },
});
http.close();
if (!negotiateToken) throw new Error('curl sent no Negotiate token');
step = 'done';

// ---- keytabs -----------------------------------------------------------------------
mit.kadmin(`ktadd -k ${tmp('krbtgt.keytab')} -norandkey krbtgt/EXAMPLE.TEST`);
mit.kadmin(`ktadd -k ${tmp('http.keytab')} -norandkey HTTP/server.example.test`);
mit.kadmin(`ktadd -k ${tmp('holes.keytab')} -norandkey host/server.example.test`);
mit.kadmin(`ktadd -k ${tmp('holes.keytab')} -norandkey HTTP/server.example.test`);
mit.kadmin(`ktremove -k ${tmp('holes.keytab')} host/server.example.test all`);
await run('ktutil', [], {
  input: [
    'addent -password -p carol@EXAMPLE.TEST -k 3 -e aes256-cts-hmac-sha1-96',
    PASSWORDS.carol,
    'addent -password -p carol@EXAMPLE.TEST -k 3 -e aes128-cts-hmac-sha256-128',
    PASSWORDS.carol,
    `wkt ${tmp('ktutil.keytab')}`,
    'quit',
    '',
  ].join('\n'),
});

// ---- write everything ----------------------------------------------------------------
const files: Array<[string, string]> = [
  ['alice.cc', 'alice.ccache'],
  ['bob.cc', 'bob-sha384.ccache'],
  ['armor.cc', 'armor.ccache'],
  ['alice-fast.cc', 'alice-fast.ccache'],
  ['alice-v3.cc', 'alice-v3.ccache'],
  ['krbtgt.keytab', 'krbtgt.keytab'],
  ['http.keytab', 'http.keytab'],
  ['host.keytab', 'host.keytab'],
  ['holes.keytab', 'holes.keytab'],
  ['ktutil.keytab', 'ktutil.keytab'],
];
for (const [from, to] of files) copyFileSync(tmp(from), join(out, to));
writeFileSync(join(out, 'curl-negotiate.b64'), negotiateToken + '\n');

const index: Array<{ file: string; step: string; dir: string; transport: string }> = [];
const counters = new Map<string, number>();
for (const c of captured) {
  if (c.step === 'setup' || c.step === 'done' || c.bytes.length < 4) continue; // the realm's readiness probes
  const n = (counters.get(c.step) ?? 0) + 1;
  counters.set(c.step, n);
  const file = `${c.step}-${String(n).padStart(2, '0')}-${c.dir}.der`;
  writeFileSync(join(out, file), c.bytes);
  index.push({ file, step: c.step, dir: c.dir, transport: c.transport });
}
writeFileSync(join(out, 'index.json'), JSON.stringify(index, null, 1) + '\n');

const total = readdirSync(out).reduce((n, f) => n + readFileSync(join(out, f)).length, 0);
writeFileSync(
  join(out, 'README.md'),
  `# MIT krb5 captures

Made by \`node --import tsx scripts/capture-mit-krb5.ts\` with Debian's MIT
krb5 1.20 (krb5kdc, kinit, kvno, ktutil, kadmin.local) and curl on
${new Date().toISOString().slice(0, 10)}. Realm EXAMPLE.TEST is throwaway: every secret is listed here
so that tests can decrypt what was captured.

## Secrets
- alice: password \`${PASSWORDS.alice}\`, bob: \`${PASSWORDS.bob}\` (requires_preauth, default salts
  \`EXAMPLE.TESTalice\`, \`EXAMPLE.TESTbob\`).
- carol: \`${PASSWORDS.carol}\`, only in ktutil.keytab (\`addent -password\`, kvno 3, etypes 18 and 19).
- krbtgt/EXAMPLE.TEST, HTTP/server.example.test, host/server.example.test: random keys,
  exported with \`kadmin.local ktadd -norandkey\` into krbtgt.keytab, http.keytab, host.keytab.
- holes.keytab: ktadd of host/ then HTTP/, then \`ktremove host/server.example.test all\`
  (MIT leaves holes: records with negative lengths).

## Steps (index.json lists every message with step, direction and transport)
- kinit: \`kinit alice\` (AS-REQ, PREAUTH_REQUIRED, AS-REQ with PA-ENC-TIMESTAMP, AS-REP) -> alice.ccache
- kvno: \`kvno HTTP/server.example.test\` with alice.ccache (TGS-REQ, TGS-REP; alice.ccache includes the result)
- kinit-sha384: \`kinit bob\` with \`default_tkt_enctypes = aes256-cts-hmac-sha384-192\` (MIT kinit has no -e) -> bob-sha384.ccache
- kinit-keytab: \`kinit -k -t host.keytab host/server.example.test\` -> armor.ccache
- kinit-fast: \`kinit -T armor.ccache alice\` (FAST, encrypted challenge) -> alice-fast.ccache
- kinit-v3: \`kinit alice\` with \`ccache_type = 3\` -> alice-v3.ccache
- curl: \`curl --negotiate\` for HTTP/server.example.test with alice-fast.ccache: the TGS
  exchange, and the Authorization header's token in curl-negotiate.b64

Total size: ${Math.round(total / 1024)} KB.
`,
);
udpRelay.close();
udpUpstream.close();
tcpRelay.close();
await mit.stop();
console.log(`captured ${index.length} messages into ${out}`);
