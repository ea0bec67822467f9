/**
 * A Debian host for the tests, as the distribution leaves it, in a private
 * mount, UTS and PID namespace (`unshare`): its own host name, and /etc,
 * /var and /usr/share/pam-configs as overlays of the machine's, so that
 * whatever runs there (dirid join as root, pam-auth-update, SSSD, sshd)
 * writes only to this host's upper layers and the machine's own files are
 * never changed; /run, /tmp and /home are empty tmpfs. The files a join
 * touches start as the packages make them, whatever the machine did to
 * its own: the PAM stack is made again by `pam-auth-update --package` from
 * the installed profiles (as libpam-runtime's postinst does on a new
 * system), sshd_config is openssh-server's (/usr/share/openssh), its host
 * keys new, sshd_config.d, sssd.conf, the keytab and /etc/dirid absent;
 * the package-shipped PAM service files (sshd, login, su, sudo, other) must
 * be unmodified (dpkg's checksums) and every pam-auth-update profile a
 * package's, or the host refuses to start. Names the host resolves are
 * added to its /etc/hosts (standing in for DNS). Commands run in the
 * namespace through `nsenter`; the namespace ends with `stop()`.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import { pty, type PtyRun } from './pty.js';

/** This repository's root, which the host's namespace keeps visible at its own path (it may lie under /tmp). */
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

export interface DebianHostOptions {
  /** the host's fully qualified name */
  hostname: string;
  /** names the host resolves (its /etc/hosts) */
  hosts: Record<string, string>;
}

export interface ExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface DebianHost {
  /** a directory seen at the same path inside and outside the namespace */
  dir: string;
  /** runs `sh -c script` in the namespace as root */
  exec(script: string, o?: { input?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<ExecResult>;
  /** the same on a pseudo-terminal, for programs that prompt (su, login) */
  pty(script: string, onOutput: (out: string, write: (s: string) => void) => void, timeoutMs?: number): Promise<PtyRun>;
  /** path → sha256 of every file under /etc in the namespace (links as their targets' names) */
  etcDigest(): Promise<Map<string, string>>;
  /** the host's SSSD logs, concatenated */
  sssdLog(): Promise<string>;
  stop(): void;
}

/** The PAM service files the logins run, each checked against the package's checksum. */
const SHIPPED_PAM_FILES = ['/etc/pam.d/sshd', '/etc/pam.d/login', '/etc/pam.d/su', '/etc/pam.d/sudo', '/etc/pam.d/other'];

function sh(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr || r.error?.message}`);
  return r.stdout;
}

/** Throws unless the machine's copies of the package-shipped files the logins run are as the packages ship them. */
function checkShippedFiles(): void {
  const sums = new Map<string, string>();
  for (const line of sh('dpkg-query', ['-W', '-f=${Conffiles}\\n', 'openssh-server', 'login', 'util-linux', 'sudo', 'libpam-runtime']).split('\n')) {
    const m = /^\s*(\/\S+)\s+([0-9a-f]{32})/.exec(line);
    if (m) sums.set(m[1]!, m[2]!);
  }
  for (const f of SHIPPED_PAM_FILES) {
    const want = sums.get(f);
    if (!want) throw new Error(`no package ships ${f}: install the host packages (scripts/install-deps.sh)`);
    const have = sh('md5sum', [f]).split(' ')[0];
    if (have !== want) throw new Error(`the machine's ${f} is not as its package ships it; the host must start from stock files`);
  }
  for (const p of readdirSync('/usr/share/pam-configs')) {
    if (spawnSync('dpkg', ['-S', `/usr/share/pam-configs/${p}`]).status !== 0) throw new Error(`/usr/share/pam-configs/${p} belongs to no package`);
  }
}

export async function freeTcpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startDebianHost(o: DebianHostOptions): Promise<DebianHost> {
  checkShippedFiles();
  const dir = mkdtempSync(join(tmpdir(), 'dirid-host-'));
  for (const d of ['etc-upper/ssh', 'etc-work', 'var-upper', 'var-work', 'pc-upper', 'pc-work']) mkdirSync(join(dir, d), { recursive: true });
  // what openssh-server's postinst makes: sshd_config from its template, new host keys
  copyFileSync('/usr/share/openssh/sshd_config', join(dir, 'etc-upper/ssh/sshd_config'));
  for (const t of ['rsa', 'ecdsa', 'ed25519']) sh('ssh-keygen', ['-q', '-t', t, '-N', '', '-C', `root@${o.hostname}`, '-f', join(dir, `etc-upper/ssh/ssh_host_${t}_key`)]);
  writeFileSync(join(dir, 'etc-upper/hostname'), `${o.hostname.split('.')[0]}\n`);
  writeFileSync(join(dir, 'etc-upper/hosts'), readFileSync('/etc/hosts', 'utf8'));
  appendFileSync(join(dir, 'etc-upper/hosts'), Object.entries(o.hosts).map(([name, ip]) => `${ip} ${name} ${name.split('.')[0]}\n`).join(''));
  const script = join(dir, 'host.sh');
  writeFileSync(
    script,
    `#!/bin/sh
# PID 1 of the host's namespaces: its mounts, its stock PAM stack, then it waits
set -e
D=${dir}
hostname ${o.hostname}
mount -t overlay overlay -o lowerdir=/etc,upperdir=$D/etc-upper,workdir=$D/etc-work /etc
mount -t overlay overlay -o lowerdir=/var,upperdir=$D/var-upper,workdir=$D/var-work /var
mount -t overlay overlay -o lowerdir=/usr/share/pam-configs,upperdir=$D/pc-upper,workdir=$D/pc-work /usr/share/pam-configs
mount -t tmpfs -o mode=755 tmpfs /run
mkdir -p /run/sshd /run/host /run/repo
# this repository (the dirid client the host runs) stays where it is, also in a clone under /tmp or /home
mount --bind ${repoRoot} /run/repo
mount -t tmpfs -o mode=755 tmpfs /home
mount --bind $D /run/host
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p $D ${repoRoot}
mount --bind /run/host $D
mount --bind /run/repo ${repoRoot}
rm -rf /etc/ssh/sshd_config.d/* /etc/sssd/sssd.conf /etc/sssd/conf.d/* /etc/krb5.keytab /etc/dirid /var/lib/dirid
rm -rf /var/lib/sss/db/* /var/lib/sss/mc/* /var/lib/sss/pipes/nss /var/lib/sss/pipes/pam /var/lib/sss/pipes/ssh /var/lib/sss/pipes/sudo /var/lib/sss/pubconf/* /var/log/sssd/*
rm -rf /var/lib/pam/* /etc/pam.d/common-*
# the PAM stack as libpam-runtime's postinst makes it on a new system, from the installed profiles
DEBIAN_FRONTEND=noninteractive pam-auth-update --package --force
rm -f /etc/pam.d/*.pam-old
echo ready > $D/ready
exec sleep infinity
`,
    { mode: 0o755 },
  );
  const child: ChildProcess = spawn('unshare', ['--mount', '--uts', '--pid', '--fork', '--kill-child', '--mount-proc', '--propagation', 'private', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
  const deadline = Date.now() + 30_000;
  while (!existsSync(join(dir, 'ready'))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`the host's namespace did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  // the namespace's PID 1 is unshare's child
  const pid = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
  const enter = ['-t', String(pid), '-m', '-u', '-p'];
  const exec: DebianHost['exec'] = (text, x = {}) =>
    new Promise((resolve) => {
      const p = spawn('nsenter', [...enter, '/bin/sh', '-c', text], { env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', HOME: '/root', LANG: 'C.UTF-8', ...x.env }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const t = setTimeout(() => p.kill('SIGKILL'), x.timeoutMs ?? 60_000);
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      p.stdin.end(x.input ?? '');
      p.on('close', (code) => {
        clearTimeout(t);
        resolve({ code, stdout, stderr });
      });
    });
  return {
    dir,
    exec,
    pty: (text, onOutput, timeoutMs = 60_000) => pty(`nsenter ${enter.join(' ')} /bin/sh -c '${text.replace(/'/g, `'\\''`)}'`, { LANG: 'C.UTF-8' }, onOutput, timeoutMs),
    async etcDigest() {
      const r = await exec("cd /etc && find . -xdev \\( -type f -o -type l \\) -print0 | sort -z | xargs -0 sh -c 'for f; do if [ -L \"$f\" ]; then echo \"$f link:$(readlink \"$f\")\"; else echo \"$f $(sha256sum < \"$f\" | cut -c1-64) $(stat -c %a \"$f\")\"; fi; done' sh");
      const out = new Map<string, string>();
      for (const line of r.stdout.split('\n')) {
        const i = line.indexOf(' ');
        if (i > 0) out.set(line.slice(1, i), line.slice(i + 1));
      }
      return out;
    },
    async sssdLog() {
      return (await exec('for f in /var/log/sssd/*.log; do echo "==> $f"; cat "$f"; done 2>/dev/null')).stdout;
    },
    stop() {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
