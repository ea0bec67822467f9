/**
 * The backup file as a file (docs/backup.md, "Format"): GNU tar reads it
 * (MANIFEST.json first, each member with its mode, the bytes the data
 * directory held, the SHA-256 the manifest says); the age CLI opens an
 * encrypted one with its passphrase; a size past ustar's 11
 * octal digits takes GNU's base-256 form and reads back; and a backup that
 * is damaged (a byte changed, or cut short), plain or encrypted, is refused
 * by restore, which then leaves no data directory behind.
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { backupRealm } from '../../src/server/backup.js';
import { restoreRealm } from '../../src/server/restore.js';
import { parseUstarHeader, ustarHeader, type Manifest } from '../../src/server/backup-archive.js';
import { ADMIN_PASSWORD } from '../support/realm.js';

describe('the backup file', () => {
  let tmp: string;
  const realm = () => join(tmp, 'realm');
  const plain = () => join(tmp, 'plain.backup');
  const sealed = () => join(tmp, 'sealed.backup');
  let manifest: Manifest;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-backup-file-'));
    await initRealm({ dataDir: realm(), realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'localhost', adminPassword: ADMIN_PASSWORD }, () => {});
    ({ manifest } = await backupRealm({ dataDir: realm(), out: plain() }, () => {}));
    await backupRealm({ dataDir: realm(), out: sealed(), passphrase: 'pass phrase' }, () => {});
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  it('is a gzip-compressed tar that GNU tar lists and extracts, the manifest first', () => {
    const list = spawnSync('tar', ['-tzvf', plain()], { encoding: 'utf8' });
    assert.equal(list.status, 0, list.stderr);
    const lines = list.stdout.trim().split('\n');
    assert.match(lines[0]!, /^-rw------- 0\/0 +\d+ .* MANIFEST\.json$/);
    assert.deepEqual(lines.slice(1).map((l) => l.split(/\s+/).pop()), manifest.files.map((f) => f.name));
    assert.match(lines.find((l) => l.endsWith(' master.key'))!, /^-rw------- /);
    assert.ok(manifest.files.some((f) => f.name === 'dirid.db'));
    const out = join(tmp, 'extracted');
    mkdirSync(out);
    const x = spawnSync('tar', ['-xzf', plain(), '-C', out], { encoding: 'utf8' });
    assert.equal(x.status, 0, x.stderr);
    assert.deepEqual(JSON.parse(readFileSync(join(out, 'MANIFEST.json'), 'utf8')), manifest);
    for (const f of manifest.files) {
      const bytes = readFileSync(join(out, f.name));
      assert.equal(createHash('sha256').update(bytes).digest('hex'), f.sha256, f.name);
      if (f.name !== 'dirid.db') assert.ok(bytes.equals(readFileSync(join(realm(), f.name))), f.name);
    }
  });

  it('opens, encrypted, with the age CLI (the passphrase typed at its prompt) on a machine without dirid, and GNU tar lists it', async () => {
    const opened = join(tmp, 'opened.tgz');
    // age reads a passphrase from its terminal only: script(1) gives it one, and the passphrase is typed once it asks
    const child = spawn('script', ['-qec', `age -d -o '${opened}' '${sealed()}'`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let typed = false;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      if (!typed && /Enter passphrase/.test(out)) {
        typed = true;
        child.stdin.write('pass phrase\n');
      }
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString('utf8')));
    const timer = setTimeout(() => child.kill(), 60_000);
    const [code] = (await once(child, 'exit')) as [number | null];
    clearTimeout(timer);
    assert.equal(code, 0, out);
    const list = spawnSync('tar', ['-tzf', opened], { encoding: 'utf8' });
    assert.equal(list.status, 0, list.stderr);
    assert.deepEqual(list.stdout.trim().split('\n'), ['MANIFEST.json', ...manifest.files.map((f) => f.name)]);
  });

  it('writes a size past 8 GiB in base-256 and reads it back', () => {
    const big = 9 * 1024 ** 3 + 5;
    const h = ustarHeader('dirid.db', 0o600, big, Date.now());
    assert.equal(h[124], 0x80);
    assert.deepEqual(parseUstarHeader(h), { name: 'dirid.db', mode: 0o600, size: big });
    assert.throws(() => ustarHeader('../etc/passwd', 0o600, 1, Date.now()), /cannot archive a file named/);
  });

  for (const [kind, file, passphrase] of [['plain', plain, undefined], ['encrypted', sealed, 'pass phrase']] as const) {
    it(`${kind === 'plain' ? 'a plain' : 'an encrypted'} backup changed or cut short is refused, and nothing is left`, async () => {
      const bytes = readFileSync(file());
      const changed = Buffer.from(bytes);
      changed[Math.floor(bytes.length / 2)]! ^= 0x01;
      const cut = bytes.subarray(0, Math.floor(bytes.length * 0.7));
      for (const [what, damaged] of [['changed', changed], ['cut', cut]] as const) {
        const f = join(tmp, `${kind}-${what}.backup`);
        writeFileSync(f, damaged);
        const target = join(tmp, `${kind}-${what}`);
        await assert.rejects(restoreRealm({ in: f, dataDir: target, ...(passphrase ? { passphrase } : {}) }, () => {}), (e: Error) => {
          assert.doesNotMatch(e.message, /^the passphrase/, `${kind} ${what}: ${e.message}`);
          return true;
        });
        assert.ok(!existsSync(target), `${kind} ${what}: the target is gone`);
      }
      // the file as written restores
      const target = join(tmp, `${kind}-whole`);
      await restoreRealm({ in: file(), dataDir: target, ...(passphrase ? { passphrase } : {}) }, () => {});
      assert.ok(readFileSync(join(target, 'master.key')).equals(readFileSync(join(realm(), 'master.key'))));
      // again over it: refused, then replaced with --force
      writeFileSync(join(target, 'master.key'), Buffer.alloc(32, 1));
      await assert.rejects(restoreRealm({ in: file(), dataDir: target, ...(passphrase ? { passphrase } : {}) }, () => {}), /holds a realm .* give --force/);
      await restoreRealm({ in: file(), dataDir: target, force: true, ...(passphrase ? { passphrase } : {}) }, () => {});
      assert.ok(readFileSync(join(target, 'master.key')).equals(readFileSync(join(realm(), 'master.key'))));
    });
  }

  it('refuses a plain backup changed past its last member: the gzip trailer, the end-of-archive blocks', async () => {
    const bytes = readFileSync(plain());
    // a changed CRC-32 in the gzip trailer: only reading the stream to its end finds it
    const trailer = Buffer.from(bytes);
    trailer[bytes.length - 6]! ^= 0x01;
    // a byte that is not zero in the second end-of-archive block, compressed again
    const tar = gunzipSync(bytes);
    tar[tar.length - 10] = 0x41;
    for (const [what, damaged] of [['trailer', trailer], ['end blocks', gzipSync(tar)]] as const) {
      const f = join(tmp, `plain-${what.replace(' ', '-')}.backup`);
      writeFileSync(f, damaged);
      const target = join(tmp, `plain-${what.replace(' ', '-')}`);
      await assert.rejects(restoreRealm({ in: f, dataDir: target }, () => {}), (e: Error) => /damaged|check|incorrect|unexpected/i.test(e.message), what);
      assert.ok(!existsSync(target), `${what}: the target is gone`);
    }
  });

  it('restores nothing beside another realm\'s master key: the store\'s sealed secrets do not open', async () => {
    // a backup whose master.key and store disagree: made by hand from the extracted plain backup
    const out = join(tmp, 'extracted');
    writeFileSync(join(out, 'master.key'), Buffer.alloc(32, 7));
    const m = JSON.parse(readFileSync(join(out, 'MANIFEST.json'), 'utf8')) as Manifest;
    m.files.find((f) => f.name === 'master.key')!.sha256 = createHash('sha256').update(Buffer.alloc(32, 7)).digest('hex');
    writeFileSync(join(out, 'MANIFEST.json'), JSON.stringify(m));
    const forged = join(tmp, 'forged.backup');
    const t = spawnSync('tar', ['--format=ustar', '--owner=0', '--group=0', '-czf', forged, '-C', out, 'MANIFEST.json', ...m.files.map((f) => f.name)], { encoding: 'utf8' });
    assert.equal(t.status, 0, t.stderr);
    const target = join(tmp, 'wrong-key');
    await assert.rejects(restoreRealm({ in: forged, dataDir: target }, () => {}), /the backup's store fails its check: .*does not open with this master key/);
    assert.ok(!existsSync(target));
  });
});
