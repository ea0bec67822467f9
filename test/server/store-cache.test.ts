/**
 * The SQLite store's cache size (server.conf `store_cache_mb`): `auto`
 * (what init writes) is a tenth of the machine's memory within 64 MiB and
 * 1 GiB; a number is taken as it is; anything else is refused by name.
 * With it, the rest of server.conf's reading: unknown settings and a
 * device-flow hold past what MIT's clients wait are refused;
 * idp_anonymous_armor is deny (what init writes, and what a realm without
 * the setting gets) or allow.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autoCacheMb, dataPaths, readServerConfig } from '../../src/server/config.js';
import { initRealm } from '../../src/server/init.js';

describe('store_cache_mb', () => {
  it('auto is a tenth of the memory, from 64 MiB to 1 GiB', () => {
    const gib = 1024 ** 3;
    assert.equal(autoCacheMb(0.25 * gib), 64);
    assert.equal(autoCacheMb(4 * gib), 409);
    assert.equal(autoCacheMb(24 * gib), 1024);
  });

  it('init writes auto; a number is read as it is and nonsense is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dirid-cache-'));
    try {
      await initRealm({ dataDir: join(dir, 'realm'), realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'localhost', adminPassword: 'Admin-pass-1' });
      const paths = dataPaths(join(dir, 'realm'));
      const conf = readFileSync(paths.serverConf, 'utf8');
      assert.match(conf, /^store_cache_mb = auto$/m);
      assert.equal(readServerConfig(paths).storeCacheMb, undefined);
      writeFileSync(paths.serverConf, conf.replace(/^store_cache_mb = auto$/m, 'store_cache_mb = 300'));
      assert.equal(readServerConfig(paths).storeCacheMb, 300);
      writeFileSync(paths.serverConf, conf.replace(/^store_cache_mb = auto$/m, 'store_cache_mb = lots'));
      assert.throws(() => readServerConfig(paths), /store_cache_mb must be auto or a number of MiB \(at least 1\)/);
      // a setting whose name is wrong, and a hold MIT's clients would not wait for, are refused rather than ignored
      writeFileSync(paths.serverConf, `${conf}store_cache = 300\n`);
      assert.throws(() => readServerConfig(paths), /unknown setting 'store_cache' in \[server\]/);
      writeFileSync(paths.serverConf, conf.replace(/^idp_hold_seconds = .*$/m, 'idp_hold_seconds = 60'));
      assert.throws(() => readServerConfig(paths), /idp_hold_seconds must be at most 15: MIT's Kerberos clients give up on a reply after about 17 s/);
      writeFileSync(paths.serverConf, conf.replace(/^idp_hold_seconds = .*$/m, 'idp_hold_seconds = 15'));
      assert.equal(readServerConfig(paths).idpHoldSeconds, 15);
      // what anonymous armor may do for IdP logins: deny unless the realm says allow (docs/device-flow.md)
      assert.match(conf, /^idp_anonymous_armor = deny$/m);
      assert.equal(readServerConfig(paths).idpAnonymousArmor, 'deny');
      writeFileSync(paths.serverConf, conf.replace(/^idp_anonymous_armor = .*\n/m, ''));
      assert.equal(readServerConfig(paths).idpAnonymousArmor, 'deny', 'a realm made before the setting');
      writeFileSync(paths.serverConf, conf.replace(/^idp_anonymous_armor = .*$/m, 'idp_anonymous_armor = allow'));
      assert.equal(readServerConfig(paths).idpAnonymousArmor, 'allow');
      writeFileSync(paths.serverConf, conf.replace(/^idp_anonymous_armor = .*$/m, 'idp_anonymous_armor = yes'));
      assert.throws(() => readServerConfig(paths), /idp_anonymous_armor must be deny or allow/);
      // the log's format (docs/logging.md): text unless server.conf says json
      writeFileSync(paths.serverConf, conf);
      assert.equal(readServerConfig(paths).logFormat, undefined);
      writeFileSync(paths.serverConf, `${conf}log_format = json\n`);
      assert.equal(readServerConfig(paths).logFormat, 'json');
      writeFileSync(paths.serverConf, `${conf}log_format = logfmt\n`);
      assert.throws(() => readServerConfig(paths), /log_format must be text or json/);
      // the IdP logins pending at once per user, armor ticket and address
      assert.match(conf, /^idp_pending_per_user = 3\nidp_pending_per_armor = 20\nidp_pending_per_address = 20$/m);
      writeFileSync(paths.serverConf, conf);
      assert.deepEqual(readServerConfig(paths).idpPending, { perUser: 3, perTicket: 20, perAddress: 20 });
      writeFileSync(paths.serverConf, conf.replace(/^idp_pending_per_address = .*$/m, 'idp_pending_per_address = 200'));
      assert.equal(readServerConfig(paths).idpPending.perAddress, 200);
      writeFileSync(paths.serverConf, conf.replace(/^idp_pending_per_user = .*$/m, 'idp_pending_per_user = 0'));
      assert.throws(() => readServerConfig(paths), /idp_pending_per_user must be at least 1/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
