/**
 * The systemd unit in the repository (contrib/systemd/dirid-server.service,
 * docs/operations.md): systemd's own `systemd-analyze verify` accepts it
 * (with ExecStart pointed at this checkout's dirid-server, which verify
 * wants to find), it runs as a dedicated user owning the data directory,
 * with CAP_NET_BIND_SERVICE and no other capability, the usual sandboxing,
 * SIGHUP for reload, and `systemd-analyze security` rates it OK.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const UNIT = new URL('../../contrib/systemd/dirid-server.service', import.meta.url).pathname;
const SYSUSERS = new URL('../../contrib/systemd/dirid.sysusers', import.meta.url).pathname;
const BIN = new URL('../../bin/dirid-server.js', import.meta.url).pathname;

/** The unit's [Service] settings: name → values in order. */
function serviceSettings(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const s = /^\[(.+)\]$/.exec(line);
    if (s) section = s[1]!;
    else if (section === 'Service') {
      const eq = line.indexOf('=');
      const k = line.slice(0, eq);
      out.set(k, [...(out.get(k) ?? []), line.slice(eq + 1)]);
    }
  }
  return out;
}

/** A copy of the unit whose ExecStart names this checkout's dirid-server, in a directory of its own. */
function unitCopy(): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dirid-unit-'));
  const path = join(dir, 'dirid-server.service');
  writeFileSync(path, readFileSync(UNIT, 'utf8').replace(/^ExecStart=\S+/m, `ExecStart=${BIN}`));
  return { dir, path };
}

describe('the systemd unit', () => {
  const s = serviceSettings(readFileSync(UNIT, 'utf8'));
  const one = (k: string) => {
    const v = s.get(k);
    assert.ok(v && v.length === 1, `${k} set once`);
    return v[0]!;
  };

  it('systemd-analyze verify accepts it', () => {
    const { dir, path } = unitCopy();
    try {
      const r = spawnSync('systemd-analyze', ['verify', path], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr.trim(), '', r.stderr);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs dirid-server start on the data directory of a dedicated user, reloads with SIGHUP, logs to the journal', () => {
    assert.ok(['exec', 'simple', 'notify'].includes(one('Type')));
    assert.match(one('ExecStart'), /^\/\S+\/dirid-server start --data-dir \/var\/lib\/dirid$/);
    assert.equal(one('ExecReload'), '/bin/kill -HUP $MAINPID');
    assert.equal(one('User'), 'dirid');
    assert.equal(one('StateDirectory'), 'dirid');
    assert.equal(one('StateDirectoryMode'), '0700');
    assert.equal(one('StandardOutput'), 'journal');
    assert.match(readFileSync(SYSUSERS, 'utf8'), /^u dirid - ".*" \/var\/lib\/dirid$/m);
  });

  it('may bind ports below 1024 and nothing else, sandboxed', () => {
    assert.equal(one('CapabilityBoundingSet'), 'CAP_NET_BIND_SERVICE');
    assert.equal(one('AmbientCapabilities'), 'CAP_NET_BIND_SERVICE');
    assert.equal(one('NoNewPrivileges'), 'yes');
    assert.equal(one('ProtectSystem'), 'strict');
    assert.equal(one('PrivateTmp'), 'yes');
    assert.equal(one('ProtectHome'), 'yes');
    assert.ok(!s.has('MemoryDenyWriteExecute'), 'V8 needs to write code it runs');
    const { dir, path } = unitCopy();
    try {
      const r = spawnSync('systemd-analyze', ['security', '--offline=yes', path], { encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 0, r.stderr);
      const m = /Overall exposure level for dirid-server\.service: (\d+\.\d+) (\w+)/.exec(r.stdout);
      assert.ok(m, r.stdout.slice(-500));
      assert.ok(Number(m[1]) <= 2, `exposure ${m[1]} ${m[2]}`);
      assert.match(r.stdout, /✓ CapabilityBoundingSet=~CAP_SYS_ADMIN/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
