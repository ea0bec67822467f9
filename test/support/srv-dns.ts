/**
 * A DNS server for the tests that find dirid servers through SRV records:
 * dnsmasq on a free loopback UDP port, answering only the records given
 * (no upstream, no /etc/hosts). `startSrvDns` returns once dnsmasq answers
 * the first record's query: a fixed pause was not enough on a loaded
 * machine, where the client's look-up then failed and it tried only its
 * configured server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { freeUdpPort } from './mit-realm.js';

export interface SrvRecord {
  /** e.g. `_dirid._tcp.example.test` */
  name: string;
  target: string;
  port: number;
  priority?: number;
  weight?: number;
}

export interface SrvDns {
  /** `127.0.0.1:PORT`, as DIRID_DNS_SERVER takes it */
  server: string;
  stop(): void;
}

const READY_MS = 10_000;

/** `txt`: TXT records too (such as `_kerberos.DOMAIN`, naming the realm). */
export async function startSrvDns(records: SrvRecord[], txt: Array<{ name: string; text: string }> = []): Promise<SrvDns> {
  if (records.length === 0) throw new Error('startSrvDns: no record');
  const deadline = Date.now() + READY_MS;
  let last = '';
  while (Date.now() < deadline) {
    const port = await freeUdpPort();
    const proc: ChildProcess = spawn('/usr/sbin/dnsmasq', [
      '--no-daemon',
      `--port=${port}`,
      '--listen-address=127.0.0.1',
      '--bind-interfaces',
      '--no-resolv',
      '--no-hosts',
      ...records.map((r) => `--srv-host=${r.name},${r.target},${r.port},${r.priority ?? 0},${r.weight ?? 100}`),
      ...txt.map((t) => `--txt-record=${t.name},${t.text}`),
      '--user=root',
    ]);
    let stderr = '';
    proc.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    let exited = false;
    proc.on('exit', () => (exited = true));
    const resolver = new Resolver({ timeout: 200, tries: 1 });
    resolver.setServers([`127.0.0.1:${port}`]);
    while (!exited && Date.now() < deadline) {
      try {
        const answer = await resolver.resolveSrv(records[0]!.name);
        if (answer.some((a) => a.port === records[0]!.port)) return { server: `127.0.0.1:${port}`, stop: () => proc.kill('SIGTERM') };
        last = `answered ${JSON.stringify(answer)}`;
      } catch (e) {
        last = String(e);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    proc.kill('SIGTERM');
    // dnsmasq exits when another process took the port between freeUdpPort and its bind: another port then
    last = `${last}; dnsmasq: ${stderr.trim()}`;
  }
  throw new Error(`dnsmasq did not answer the SRV query for ${records[0]!.name} within ${READY_MS} ms: ${last}`);
}
