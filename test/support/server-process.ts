/**
 * `dirid-server start` as a process of its own, for the tests that stop,
 * kill and start it again: on ephemeral loopback ports, resolved once every
 * listener is up (the server's last start-up line names LDAP's), with its
 * HTTPS port and what it has written so far; rejected when it exits first
 * or has not started within 30 s.
 */
import { spawn, type ChildProcess } from 'node:child_process';

export const SERVER_BIN = new URL('../../bin/dirid-server.js', import.meta.url).pathname;
export const EPHEMERAL_PORT_ARGS = ['--listen', '127.0.0.1', '--https-port', '0', '--http-port', '0', '--kdc-port', '0', '--kpasswd-port', '0', '--ldap-port', '0', '--ldaps-port', '0'];

export interface ServerProcess {
  child: ChildProcess;
  /** the HTTPS API's port */
  port: number;
  /** standard output and error so far */
  out(): string;
}

export async function startServerProcess(dataDir: string, extraArgs: readonly string[] = []): Promise<ServerProcess> {
  const child = spawn(process.execPath, [SERVER_BIN, 'start', '--data-dir', dataDir, ...EPHEMERAL_PORT_ARGS, ...extraArgs], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 30_000);
    const early = (c: number | null) => {
      clearTimeout(t);
      reject(new Error(`server exited with ${c}: ${out}`));
    };
    child.once('exit', early);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const https = / service=https url=https:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (https && / server started /.test(out)) {
        clearTimeout(t);
        child.removeListener('exit', early);
        resolve(Number(https[1]));
      }
    });
  });
  return { child, port, out: () => out };
}
