/**
 * Running an interactive command (MIT kinit, pamtester) on a pseudo-terminal
 * with util-linux `script`, so that it prompts as it would for a user; the
 * caller sees the output as it comes and may answer. And the device-flow
 * logins of MIT kinit and dirid kinit, approving at the test IdP.
 */
import { spawn } from 'node:child_process';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

export interface PtyRun {
  code: number | null;
  out: string;
}

/** Runs `cmd` on a pseudo-terminal; `onOutput` sees the output so far and may write answers. */
export function pty(cmd: string, env: NodeJS.ProcessEnv, onOutput: (out: string, write: (s: string) => void) => void, timeoutMs = 60_000): Promise<PtyRun> {
  return new Promise((resolve) => {
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], { env: { ...process.env, ...env } });
    let out = '';
    const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      onOutput(out, (s) => child.stdin.write(s));
    });
    child.on('exit', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
}

/** The device-flow prompts MIT kinit with SSSD's idp plugin printed so far, each with its user code. */
export function idpPrompts(out: string): string[] {
  const m = /Authenticate (?:at (\S+)|with PIN (\S+) at (\S+)) and press ENTER\.?:/g;
  return [...out.matchAll(m)].map((p) => p[2] ?? new URL(p[1]!).searchParams.get('user_code')!);
}

/** What `kinitViaIdp` needs: the IdP to approve at, the armor cache and the environment MIT kinit runs in. */
export interface IdpKinit {
  idp: { approveDevice(userCode: string, account: string): Promise<void> };
  armor: string;
  env: NodeJS.ProcessEnv;
}

/**
 * MIT `kinit -T` on a pseudo-terminal: approves at the IdP as `account` at
 * the first device-flow prompt, then presses ENTER (at once: the KDC holds
 * the answer and polls); with `pressEnterEarly`, presses ENTER at the first
 * prompt and approves at the next.
 */
export function kinitViaIdp(k: IdpKinit, principal: string, account: string, cc: string, pressEnterEarly = false): Promise<PtyRun> {
  let approved = false;
  let entered = 0;
  return pty(`kinit -T ${k.armor} -c ${cc} ${principal}`, k.env, (out, write) => {
    const codes = idpPrompts(out);
    if (codes.length <= entered) return;
    entered = codes.length;
    const code = codes[codes.length - 1]!;
    if (pressEnterEarly && entered === 1) write('\r');
    else if (!approved) {
      approved = true;
      void k.idp.approveDevice(code, account).then(() => write('\r'));
    } else write('\r');
  });
}

/** `dirid kinit ARGS` (no ENTER needed: it polls); approves at the IdP as `account` (when given) once it prints the code, `approveAfterMs` later (a slow user). */
export function diridKinitViaIdp(idp: IdpKinit['idp'], env: NodeJS.ProcessEnv, args: string[], account: string | undefined, approveAfterMs = 0): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [DIRID, 'kinit', ...args], { env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    let approving = false;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      // "(or open URL and enter the code CODE)", or "Authenticate at URL with the code CODE" from an IdP without a complete URI
      const m = /(?:enter|with) the code ([^\s)]+)/.exec(stdout);
      if (m && account !== undefined && !approving) {
        approving = true;
        const code = m[1]!;
        setTimeout(() => void idp.approveDevice(code, account), approveAfterMs);
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end();
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
