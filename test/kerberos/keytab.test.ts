/**
 * Keytabs: MIT-written files (kadmin.local ktadd, ktutil, one with holes
 * from ktremove) parse and round-trip byte for byte; ktutil's password keys
 * match string-to-key; a keytab we write is listed by MIT klist -k; the
 * 0x0501 layout and damaged files; new keys merged into a keytab (mergeKeytab).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeKeytabFile, encodeKeytabFile, KeytabError, mergeKeytab, readKeytab, writeKeytab, type KeytabEntry } from '../../src/kerberos/keytab.js';
import { profile } from '../../src/kerberos/crypto/index.js';

const mit = (name: string) => readFileSync(new URL(`../data/kerberos/mit/${name}`, import.meta.url));

describe('MIT-written keytabs', () => {
  for (const file of ['krbtgt.keytab', 'http.keytab', 'host.keytab', 'holes.keytab', 'ktutil.keytab']) {
    it(`${file} round-trips byte for byte`, () => {
      const raw = mit(file);
      assert.deepEqual(encodeKeytabFile(decodeKeytabFile(raw)), raw);
    });
  }

  it('ktadd: four AES keys, kvno 1, 32-bit kvno field; writeKeytab reproduces the file', () => {
    const entries = readKeytab(mit('krbtgt.keytab'));
    assert.deepEqual(entries.map((e) => e.etype).sort(), [17, 18, 19, 20]);
    assert.ok(entries.every((e) => e.kvno === 1 && e.nameType === 2 && e.realm === 'EXAMPLE.TEST'));
    assert.deepEqual(entries[0]!.components, ['krbtgt', 'EXAMPLE.TEST']);
    assert.deepEqual(writeKeytab(entries), mit('krbtgt.keytab'));
  });

  it('ktremove leaves holes, which are skipped', () => {
    const kt = decodeKeytabFile(mit('holes.keytab'));
    assert.equal(kt.slots.filter((s) => 'hole' in s).length, 4);
    const entries = readKeytab(mit('holes.keytab'));
    assert.equal(entries.length, 4);
    assert.ok(entries.every((e) => e.components[0] === 'HTTP'));
    assert.deepEqual(entries, readKeytab(mit('http.keytab')));
  });

  it('ktutil addent -password: keys are string-to-key of the password, kvno 3, no 32-bit kvno', () => {
    const kt = decodeKeytabFile(mit('ktutil.keytab'));
    const records = kt.slots.flatMap((s) => ('entry' in s ? [s] : []));
    assert.deepEqual(records.map((r) => r.entry.etype), [18, 19]);
    for (const r of records) {
      assert.equal(r.entry.kvno, 3);
      assert.deepEqual(r.entry.key, profile(r.entry.etype).stringToKey('carol-password', 'EXAMPLE.TESTcarol').value);
    }
  });

  it('damaged keytabs raise KeytabError', () => {
    const raw = mit('http.keytab');
    for (let len = 0; len < raw.length; len++) {
      try {
        // only a cut at a record boundary is a valid (shorter) keytab
        const kt = decodeKeytabFile(raw.subarray(0, len));
        assert.deepEqual(encodeKeytabFile(kt), raw.subarray(0, len), `cut at ${len}`);
      } catch (e) {
        assert.ok(e instanceof KeytabError, String(e));
      }
    }
    assert.throws(() => readKeytab(Buffer.from('0503', 'hex')), KeytabError);
    assert.throws(() => readKeytab(Buffer.from('05027fffffff', 'hex')), KeytabError);
  });
});

describe('keytabs we write', () => {
  const entries: KeytabEntry[] = [
    { realm: 'EXAMPLE.TEST', components: ['HTTP', 'web.example.test'], nameType: 3, timestamp: 1795000000, kvno: 300, etype: 18, key: Buffer.alloc(32, 0xab) },
    { realm: 'EXAMPLE.TEST', components: ['dave'], nameType: 1, timestamp: 1795000000, kvno: 2, etype: 17, key: Buffer.alloc(16, 0xcd) },
  ];

  it('MIT klist -k -K -e -t lists them, the 32-bit kvno included', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keytab-test-'));
    try {
      const path = join(dir, 'kt');
      writeFileSync(path, writeKeytab(entries));
      const out = spawnSync('klist', ['-k', '-K', '-e', '-t', path], { encoding: 'utf8', env: { ...process.env, KRB5_CONFIG: '/dev/null' } });
      assert.equal(out.status, 0, out.stderr);
      const lines = out.stdout.split('\n').filter((l) => /@EXAMPLE\.TEST/.test(l));
      assert.equal(lines.length, 2);
      assert.match(lines[0]!, /^\s*300 .*HTTP\/web\.example\.test@EXAMPLE\.TEST \(aes256-cts-hmac-sha1-96\)\s+\(0x(ab){32}\)/);
      assert.match(lines[1]!, /^\s*2 .*dave@EXAMPLE\.TEST \(aes128-cts-hmac-sha1-96\)\s+\(0x(cd){16}\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('version 0x0501 (host byte order, realm counted as a component) round-trips', () => {
    const v1 = encodeKeytabFile({ version: 1, slots: [{ entry: { ...entries[1]!, nameType: 1 }, kvno32: false, padding: Buffer.alloc(0) }] });
    assert.deepEqual(v1.subarray(0, 2), Buffer.from([5, 1]));
    assert.equal(v1.readUInt16LE(6), 2, 'count includes the realm');
    assert.deepEqual(readKeytab(v1), [{ ...entries[1]!, nameType: 1 }]);
    assert.deepEqual(encodeKeytabFile(decodeKeytabFile(v1)), v1);
  });
});

describe('mergeKeytab', () => {
  const key = (components: string[], kvno: number, etype = 18, realm = 'EXAMPLE.TEST'): KeytabEntry => ({ realm, components, nameType: 1, timestamp: 0, kvno, etype, key: Buffer.alloc(32, kvno) });
  const names = (entries: KeytabEntry[]) => entries.map((e) => `${e.components.join('/')}@${e.realm}:${e.kvno}:${e.etype}`);

  it("keeps other principals' keys and the previous kvno of the principal, drops older ones, and adds the new keys last", () => {
    const existing = [key(['host', 'web.example.test'], 4), key(['nfs', 'web.example.test'], 1), key(['nfs', 'web.example.test'], 2), key(['nfs', 'web.example.test'], 2, 17), key(['nfs', 'web.example.test'], 3, 17), key(['nfs', 'web.example.test'], 3), key(['nfs', 'web.example.test'], 9, 18, 'OTHER.TEST')];
    const merged = mergeKeytab(existing, [key(['nfs', 'web.example.test'], 4), key(['nfs', 'web.example.test'], 4, 17)]);
    assert.deepEqual(names(merged), ['host/web.example.test@EXAMPLE.TEST:4:18', 'nfs/web.example.test@EXAMPLE.TEST:3:17', 'nfs/web.example.test@EXAMPLE.TEST:3:18', 'nfs/web.example.test@OTHER.TEST:9:18', 'nfs/web.example.test@EXAMPLE.TEST:4:18', 'nfs/web.example.test@EXAMPLE.TEST:4:17']);
  });

  it('replaces keys of the same kvno (--retrieve twice) and drops higher kvnos of a principal made again', () => {
    const existing = [key(['HTTP', 'a.example.test'], 1), key(['HTTP', 'a.example.test'], 2), key(['HTTP', 'a.example.test'], 7)];
    assert.deepEqual(names(mergeKeytab(existing, [key(['HTTP', 'a.example.test'], 2)])), ['HTTP/a.example.test@EXAMPLE.TEST:1:18', 'HTTP/a.example.test@EXAMPLE.TEST:2:18']);
    assert.deepEqual(names(mergeKeytab(existing, [key(['HTTP', 'a.example.test'], 1)])), ['HTTP/a.example.test@EXAMPLE.TEST:1:18']);
  });

  it('into an empty keytab gives the new keys', () => {
    assert.deepEqual(names(mergeKeytab([], [key(['HTTP', 'a.example.test'], 1)])), ['HTTP/a.example.test@EXAMPLE.TEST:1:18']);
  });
});
