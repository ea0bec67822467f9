/**
 * How the KDC answers a failure that is not a Kerberos refusal: a directory
 * database out of reach is KDC_ERR_SVC_UNAVAILABLE (MIT clients then try
 * another KDC of the realm), anything else KRB_ERR_GENERIC with no detail.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DirectoryError } from '../../src/directory/types.js';
import { CookieJar } from '../../src/kdc/cookie-jar.js';
import { krbErrorReply } from '../../src/kdc/kdc-error.js';
import { decodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import { ErrorCode } from '../../src/kerberos/iana.js';
import { createLogger } from '../../src/log/logger.js';

describe('KDC answers to failures of its own', () => {
  const scene = (log: string[]) => ({ realm: 'EXAMPLE.TEST', now: Date.now(), cookies: new CookieJar(randomBytes(32)), log: createLogger({ write: (l) => log.push(l), component: 'kdc' }) });

  it('a directory out of reach is KDC_ERR_SVC_UNAVAILABLE, anything else a generic error', () => {
    const log: string[] = [];
    const down = krbErrorReply(new DirectoryError('unavailable', 'the directory database is unavailable (ECONNREFUSED)'), scene(log));
    assert.equal(down.code, ErrorCode.KDC_ERR_SVC_UNAVAILABLE);
    assert.equal(decodeKrbError(down.reply).eText, 'the directory database cannot be reached');
    assert.ok(log.some((l) => / kdc directory_unavailable level=error error="the directory database is unavailable \(ECONNREFUSED\)"$/.test(l)), log.join('\n'));
    const other = krbErrorReply(new TypeError('boom'), scene(log));
    assert.equal(other.code, ErrorCode.KRB_ERR_GENERIC);
    assert.equal(decodeKrbError(other.reply).eText, 'internal error');
    assert.ok(log.some((l) => / kdc internal_error level=error error=boom stack="TypeError: boom\\n\s+at /.test(l)), log.join('\n'));
  });
});
