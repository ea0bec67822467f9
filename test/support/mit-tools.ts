/**
 * Runs MIT's client tools (kinit, klist, kvno) against a realm's generated
 * krb5.conf, asynchronously so an in-process KDC keeps answering; and the
 * host's FAST armor cache that MIT kinit -T logins use (hostArmor).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface ToolResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runTool(cmd: string, args: string[], env: NodeJS.ProcessEnv, input?: string, timeoutMs = 20_000): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const t = setTimeout(() => {
      c.kill('SIGKILL');
      reject(new Error(`${cmd} timed out: ${stderr}`));
    }, timeoutMs);
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('error', reject);
    c.on('exit', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
    c.stdin.on('error', () => {});
    c.stdin.end(input ?? '');
  });
}

/**
 * The armor for `kinit -T`: the host's ticket (host/localhost, from the
 * realm's host.keytab) got by MIT kinit into `armor.cc` beside the realm;
 * its FILE: name. Asserts that kinit succeeded.
 */
export async function hostArmor(realm: { dataDir: string }, env: NodeJS.ProcessEnv): Promise<string> {
  const armor = `FILE:${join(realm.dataDir, 'armor.cc')}`;
  const a = await runTool('kinit', ['-k', '-t', join(realm.dataDir, 'realm', 'host.keytab'), '-c', armor, 'host/localhost'], env);
  assert.equal(a.code, 0, a.stderr);
  return armor;
}
