/**
 * The LDAP service's tables: every public error and every directory failure
 * has an LDAP result code (errors.ts), internal failures reach the client as
 * `other` without detail; and the subschema (subschema.ts) gives every
 * non-secret attribute type and object class of the realm's schema one
 * distinct OID, the registered one for standard names and a stable 2.25
 * one for ours, and never names a secret.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { errorCodes, type ErrorName } from '../../src/contract/errors.js';
import { compileSchema } from '../../src/directory/schema.js';
import { DirectoryError } from '../../src/directory/types.js';
import { PublicError, publicError } from '../../src/framework/errors.js';
import { LdapDecodeError } from '../../src/ldap/ber.js';
import { ResultCode } from '../../src/ldap/codes.js';
import { ldapCodeOf, refuse, toLdapResult } from '../../src/ldap-server/errors.js';
import { derivedOid, subschemaAttributes } from '../../src/ldap-server/subschema.js';
import { AuthRefusal } from '../../src/objects/login.js';
import { realmSchema } from '../../src/server/store.js';
import { createLogger, silentLogger } from '../../src/log/logger.js';

describe('LDAP result codes of our errors', () => {
  it('gives every public error a code, authentication failures the LDAP ones', () => {
    const codes = new Set<number>(Object.values(ResultCode));
    for (const name of Object.keys(errorCodes) as ErrorName[]) assert.ok(codes.has(ldapCodeOf(new PublicError(name))), name);
    assert.equal(ldapCodeOf(publicError('InvalidCredentials')), ResultCode.invalidCredentials);
    assert.equal(ldapCodeOf(publicError('AccountLocked')), ResultCode.unwillingToPerform);
    assert.equal(ldapCodeOf(publicError('ACIError', { info: 'x' })), ResultCode.insufficientAccessRights);
    assert.equal(ldapCodeOf(publicError('ValidationError', { name: 'password', error: 'short' })), ResultCode.constraintViolation);
  });

  it('keeps a public message, hides a directory message and an internal failure', () => {
    const log: string[] = [];
    const logger = createLogger({ write: (l) => log.push(l), component: 'ldap' });
    const refusal = toLdapResult(new AuthRefusal(publicError('AccountDisabled'), 'nsAccountLock is TRUE'), logger);
    assert.deepEqual([refusal.resultCode, refusal.diagnosticMessage], [ResultCode.unwillingToPerform, 'Insufficient access: account disabled']);
    const dirErr = toLdapResult(new DirectoryError('noSuchObject', 'no entry cn=secret-name,cn=kerberos,dc=x'), logger);
    assert.deepEqual([dirErr.resultCode, dirErr.diagnosticMessage], [ResultCode.noSuchObject, 'no such entry']);
    const down = toLdapResult(new DirectoryError('unavailable', 'the directory database is unavailable (ECONNREFUSED)'), logger);
    assert.deepEqual([down.resultCode, down.diagnosticMessage], [ResultCode.unavailable, 'the directory database cannot be reached: try again shortly']);
    const internal = toLdapResult(new TypeError('boom at line 7'), logger);
    assert.deepEqual([internal.resultCode, internal.diagnosticMessage], [ResultCode.other, 'an internal error has occurred']);
    assert.ok(log.some((l) => / ldap internal_error level=error error="boom at line 7" stack=/.test(l)), log.join('\n'));
    const decode = toLdapResult(new LdapDecodeError('bad filter', { resultCode: ResultCode.adminLimitExceeded }), silentLogger);
    assert.equal(decode.resultCode, ResultCode.adminLimitExceeded);
    const own = toLdapResult(refuse('confidentialityRequired', 'use TLS'), silentLogger);
    assert.deepEqual([own.resultCode, own.diagnosticMessage], [ResultCode.confidentialityRequired, 'use TLS']);
  });
});

describe('the subschema entry', () => {
  const schema = compileSchema(realmSchema);
  const attrs = subschemaAttributes(schema);
  const oidOf = (desc: string) => /^\( ([\d.]+) /.exec(desc)![1]!;

  it('describes every non-secret attribute type and every class, each under its own OID', () => {
    const secrets = realmSchema.attributeTypes.filter((a) => a.syntax === 'secret').map((a) => a.name);
    assert.deepEqual(secrets.sort(), ['dirEnrolmentPassword', 'dirIdpClientKey', 'dirIdpClientSecret', 'krbPrincipalKey', 'passwordHistory', 'userPassword']);
    assert.equal(attrs.attributeTypes!.length, realmSchema.attributeTypes.length - secrets.length);
    assert.equal(attrs.objectClasses!.length, realmSchema.objectClasses.length);
    const oids = [...attrs.attributeTypes!, ...attrs.objectClasses!].map(oidOf);
    assert.equal(new Set(oids).size, oids.length);
    for (const d of [...attrs.attributeTypes!, ...attrs.objectClasses!]) for (const s of secrets) assert.ok(!d.includes(`'${s}'`) && !d.includes(` ${s} `), d);
  });

  it('uses registered OIDs for standard names and stable 2.25 OIDs for ours', () => {
    const byName = (name: string) => attrs.attributeTypes!.find((d) => d.includes(`NAME '${name}'`) || d.includes(`NAME ( '${name}'`))!;
    assert.equal(oidOf(byName('uidNumber')), '1.3.6.1.1.1.1.0');
    assert.equal(oidOf(byName('cn')), '2.5.4.3');
    const own = oidOf(byName('dirIdpSub'));
    assert.equal(own, derivedOid('attribute', 'dirIdpSub'));
    assert.equal(own, derivedOid('attribute', 'DIRIDPSUB'));
    assert.match(own, /^2\.25\.\d{30,39}$/);
    // a version 8 UUID: the 13th hex digit is 8, the 17th one of 8, 9, a, b
    const hex = BigInt(own.slice(5)).toString(16).padStart(32, '0');
    assert.equal(hex[12], '8');
    assert.match(hex[16]!, /[89ab]/);
    assert.notEqual(derivedOid('class', 'dirIdpSub'), own);
  });
});
