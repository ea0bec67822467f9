/**
 * A throwaway MIT Kerberos realm (Debian's krb5-kdc) for interop tests,
 * captures and benchmarks: its own kdc.conf/krb5.conf in a temporary
 * directory (never /etc), a database with the given principals, and
 * krb5kdc in the foreground on a loopback port.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSocket } from 'node:dgram';

export const MIT_ENCTYPES = 'aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal aes256-cts-hmac-sha384-192:normal aes128-cts-hmac-sha256-128:normal';

export interface MitRealm {
  dir: string;
  realm: string;
  port: number;
  env: NodeJS.ProcessEnv;
  kdc: ChildProcess;
  kadmin(query: string): string;
  stop(): Promise<void>;
}

export async function freeUdpPort(): Promise<number> {
  const s = createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
  const port = s.address().port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export async function startMitRealm(opts: { realm?: string; principals?: Array<[string, string | null]>; kdcConf?: string } = {}): Promise<MitRealm> {
  const realm = opts.realm ?? 'EXAMPLE.TEST';
  const dir = mkdtempSync(join(tmpdir(), 'mit-realm-'));
  const port = await freeUdpPort();
  writeFileSync(
    join(dir, 'kdc.conf'),
    `[kdcdefaults]
 kdc_ports = ${port}
 kdc_tcp_ports = ${port}
[realms]
 ${realm} = {
  database_name = ${dir}/principal
  key_stash_file = ${dir}/stash
  acl_file = ${dir}/kadm5.acl
  supported_enctypes = ${MIT_ENCTYPES}
  max_life = 10h
  max_renewable_life = 7d
 }
[dbmodules]
 ${opts.kdcConf ?? ''}
[logging]
 kdc = FILE:${dir}/kdc.log
`,
  );
  writeFileSync(
    join(dir, 'krb5.conf'),
    `[libdefaults]
 default_realm = ${realm}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false
 udp_preference_limit = 1465
[realms]
 ${realm} = {
  kdc = 127.0.0.1:${port}
 }
`,
  );
  writeFileSync(join(dir, 'kadm5.acl'), '');
  const env = { ...process.env, KRB5_CONFIG: join(dir, 'krb5.conf'), KRB5_KDC_PROFILE: join(dir, 'kdc.conf'), KRB5CCNAME: `FILE:${join(dir, 'ccache')}` };
  const run = (cmd: string, args: string[]) => {
    const r = spawnSync(cmd, args, { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr}`);
    return r.stdout;
  };
  run('kdb5_util', ['create', '-s', '-r', realm, '-P', 'master-password-for-tests']);
  const kadmin = (query: string) => run('kadmin.local', ['-r', realm, '-q', query]);
  for (const [name, pw] of opts.principals ?? []) kadmin(pw === null ? `addprinc -randkey ${name}` : `addprinc +requires_preauth -pw ${pw} ${name}`);
  const kdc = spawn('krb5kdc', ['-n', '-r', realm], { env, stdio: 'ignore' });
  // wait until it answers on UDP
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const s = createSocket('udp4');
      const t = setTimeout(() => {
        s.close();
        resolve(false);
      }, 100);
      s.on('message', () => {
        clearTimeout(t);
        s.close();
        resolve(true);
      });
      s.send(Buffer.from([0x6a, 0x00]), port, '127.0.0.1');
    });
    if (ok) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    dir,
    realm,
    port,
    env,
    kdc,
    kadmin,
    async stop() {
      kdc.kill('SIGTERM');
      await new Promise((r) => kdc.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
