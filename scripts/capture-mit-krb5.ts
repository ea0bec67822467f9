/**
 * Captures real MIT krb5 messages for the ASN.1 round-trip tests:
 *   node --import tsx scripts/capture-mit-krb5.ts
 * Starts a throwaway MIT realm (test/support/mit-realm.ts), puts a UDP relay
 * between MIT kinit/kvno and krb5kdc that records every datagram, and writes
 * them with the ccache, the keytabs and the passwords used to
 * test/data/kerberos/mit/ (see the README written there).
 */
import { createSocket } from 'node:dgram';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freeUdpPort, startMitRealm } from '../test/support/mit-realm.js';

const out = new URL('../test/data/kerberos/mit/', import.meta.url).pathname;
mkdirSync(out, { recursive: true });
const mit = await startMitRealm({ principals: [['alice', 'alice-password'], ['HTTP/server.example.test', null], ['host/server.example.test', null]] });
const relayPort = await freeUdpPort();
const relay = createSocket('udp4');
const packets: Array<{ dir: 'req' | 'rep'; bytes: Buffer }> = [];
let client: { port: number; address: string } | undefined;
const upstream = createSocket('udp4');
upstream.on('message', (m) => {
  packets.push({ dir: 'rep', bytes: m });
  if (client) relay.send(m, client.port, client.address);
});
relay.on('message', (m, rinfo) => {
  client = rinfo;
  packets.push({ dir: 'req', bytes: m });
  upstream.send(m, mit.port, '127.0.0.1');
});
await new Promise<void>((r) => relay.bind(relayPort, '127.0.0.1', () => r()));
await new Promise<void>((r) => upstream.bind(0, '127.0.0.1', () => r()));
const conf = readFileSync(mit.env.KRB5_CONFIG!, 'utf8').replace(`127.0.0.1:${mit.port}`, `127.0.0.1:${relayPort}`);
const relayConf = join(mit.dir, 'krb5-relay.conf');
writeFileSync(relayConf, conf);
const env = { ...mit.env, KRB5_CONFIG: relayConf };
const run = async (cmd: string, args: string[], input?: string) => {
  const r = await new Promise<ReturnType<typeof spawnSync>>((resolve) => {
    // spawnSync would block the relay's event loop: run it in the background
    import('node:child_process').then(({ spawn }) => {
      const c = spawn(cmd, args, { env });
      let stdout = '';
      let stderr = '';
      c.stdout.on('data', (d: Buffer) => (stdout += d));
      c.stderr.on('data', (d: Buffer) => (stderr += d));
      c.on('exit', (status) => resolve({ status, stdout, stderr } as never));
      if (input !== undefined) c.stdin.end(input);
    });
  });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${String(r.stderr)}`);
};
const mark = (name: string) => packets.push({ dir: 'req', bytes: Buffer.from(`#${name}`) });
mark('kinit');
await run('kinit', ['-c', `FILE:${join(mit.dir, 'alice.cc')}`, 'alice'], 'alice-password\n');
mark('kvno');
await run('kvno', ['-c', `FILE:${join(mit.dir, 'alice.cc')}`, 'HTTP/server.example.test']);
mit.kadmin(`ktadd -k ${join(mit.dir, 'krbtgt.keytab')} -norandkey krbtgt/EXAMPLE.TEST`);
mit.kadmin(`ktadd -k ${join(mit.dir, 'http.keytab')} -norandkey HTTP/server.example.test`);
copyFileSync(join(mit.dir, 'alice.cc'), join(out, 'alice.ccache'));
copyFileSync(join(mit.dir, 'krbtgt.keytab'), join(out, 'krbtgt.keytab'));
copyFileSync(join(mit.dir, 'http.keytab'), join(out, 'http.keytab'));
let step = '';
let n = 0;
const index: string[] = [];
for (const p of packets) {
  if (p.bytes[0] === 0x23) {
    step = p.bytes.subarray(1).toString();
    n = 0;
    continue;
  }
  const name = `${step}-${String(++n).padStart(2, '0')}-${p.dir}.der`;
  writeFileSync(join(out, name), p.bytes);
  index.push(name);
}
writeFileSync(
  join(out, 'README.md'),
  `# MIT krb5 captures

Made by \`scripts/capture-mit-krb5.ts\` with Debian's MIT krb5 (kinit, kvno,
krb5kdc, kadmin.local) on ${new Date().toISOString().slice(0, 10)}, realm EXAMPLE.TEST (throwaway).

- password of alice: \`alice-password\` (default salt EXAMPLE.TESTalice)
- HTTP/server.example.test and host/server.example.test: random keys, see http.keytab
- krbtgt/EXAMPLE.TEST keys: krbtgt.keytab (all four AES enctypes)
- alice.ccache: the credential cache kinit wrote, then kvno added the HTTP ticket

Datagrams in order (kinit: AS-REQ, PREAUTH_REQUIRED error, AS-REQ with
encrypted timestamp, AS-REP; kvno: TGS-REQ, TGS-REP):

${index.map((i) => `- ${i}`).join('\n')}
`,
);
relay.close();
upstream.close();
await mit.stop();
console.log(`captured ${index.length} messages into ${out}`);
