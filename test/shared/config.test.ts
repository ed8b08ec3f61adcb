import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { REVOKED_SIGN_IN_RETENTION_MS } from '../../src/projections/principals.js'
import { loadConfig, MAX_ACCESS_TOKEN_TTL_SECONDS } from '../../src/shared/config.js'
import { tempDir } from '../helpers/config.js'

t.test('ACCESS_TOKEN_TTL is at most one day, and a revoked sign-in is remembered as long as an access token can live', async (t) => {
  t.equal(loadConfig({ ACCESS_TOKEN_TTL: '86400' }).accessTokenTtl, 86_400)
  t.equal(loadConfig({}).accessTokenTtl, 3600, 'one hour by default')
  t.throws(() => loadConfig({ ACCESS_TOKEN_TTL: '86401' }), { name: 'ConfigError', message: 'ACCESS_TOKEN_TTL must be an integer from 1 to 86400, got "86401"' })
  t.throws(() => loadConfig({ ACCESS_TOKEN_TTL: '0' }), { message: 'ACCESS_TOKEN_TTL must be an integer from 1 to 86400, got "0"' })
  t.equal(REVOKED_SIGN_IN_RETENTION_MS, MAX_ACCESS_TOKEN_TTL_SECONDS * 1000)
})

t.test('a setting without an upper bound still names only its lower one', async (t) => {
  t.throws(() => loadConfig({ SHUTDOWN_TIMEOUT_MS: '-1' }), { message: 'SHUTDOWN_TIMEOUT_MS must be an integer >= 0, got "-1"' })
})

t.test('an integer setting takes digits only, and a port at most 65535', async (t) => {
  for (const raw of [' ', '0x50', '1e3', '80.0', '8080abc', '9007199254740993']) {
    t.throws(() => loadConfig({ PORT: raw }), { name: 'ConfigError', message: `PORT must be an integer from 0 to 65535, got "${raw}"` }, JSON.stringify(raw))
  }
  t.throws(() => loadConfig({ PORT: '70000' }), { message: 'PORT must be an integer from 0 to 65535, got "70000"' })
  t.equal(loadConfig({ PORT: ' 8081 ' }).port, 8081, 'surrounding spaces are not part of it')
})

t.test('a sunset is a day of the calendar or a real time with its offset, the same instant on any host', async (t) => {
  for (const raw of [
    '2026-02-30', '2026-02-30T00:00:00Z', '2026-08-01T24:00:00Z', '2026-08-01T23:60:00Z', '2026-08-01T23:59:60Z', '2026-08-01T00:00:00', '2026-08-01T00:00',
    '2026-08-01T00:00:00+24:00', '2026-08-01T00:00:00+05:60', 'August 1, 2026', '2026-8-1', '2026-08-01 00:00:00Z',
  ]) {
    t.throws(() => loadConfig({ EXPORTS_LEGACY_SUNSET: raw }), {
      name: 'ConfigError', message: `EXPORTS_LEGACY_SUNSET must be a date (2026-08-01, midnight UTC) or a timestamp with its offset (2026-08-01T00:00:00Z), got "${raw}"`,
    }, raw)
  }
  t.equal(loadConfig({ EXPORTS_LEGACY_SUNSET: '2026-02-28' }).exportsLegacySunset.toISOString(), '2026-02-28T00:00:00.000Z')
  t.equal(loadConfig({ EXPORTS_LEGACY_REPORTS_SUNSET: '2026-08-01T00:00:00-05:00' }).exportsLegacyReportsSunset.toISOString(), '2026-08-01T05:00:00.000Z')
  t.equal(loadConfig({ EXPORTS_LEGACY_SUNSET: '2026-07-31T23:59:59.5Z' }).exportsLegacySunset.toISOString(), '2026-07-31T23:59:59.500Z')
  for (const [raw, instant] of [
    ['2026-08-01t00:00:00z', '2026-08-01T00:00:00.000Z'], ['2026-08-01T00:00Z', '2026-08-01T00:00:00.000Z'],
    ['2026-08-01T00:00:00.000+0000', '2026-08-01T00:00:00.000Z'], ['2026-07-31T19:00:00-0500', '2026-08-01T00:00:00.000Z'],
    ['2026-08-01T05:30:00.123456789+05:30', '2026-08-01T00:00:00.123Z'], ['0099-01-01', '0099-01-01T00:00:00.000Z'],
  ]) t.equal(loadConfig({ EXPORTS_LEGACY_SUNSET: raw }).exportsLegacySunset.toISOString(), instant, raw)
  t.equal(loadConfig({}).exportsLegacySunset.toISOString(), '2026-08-01T00:00:00.000Z', 'the default')
})

t.test('settings a start would take but their use would refuse fail at start, naming the setting', async (t) => {
  for (const [env, raw, message] of [
    ['PUBLIC_URL', 'not-a-url', 'PUBLIC_URL must be a URL starting http:// or https://, got "not-a-url"'],
    ['PUBLIC_URL', 'ftp://credits.example.com', 'PUBLIC_URL must be a URL starting http:// or https://, got "ftp://credits.example.com"'],
    ['SMTP_URL', 'not-a-url', 'SMTP_URL must be a URL starting smtp:// or smtps://, got "not-a-url"'],
    ['SANDBOX_FAIL_AMOUNT', 'abc', 'SANDBOX_FAIL_AMOUNT must be a decimal amount such as 13.13, got "abc"'],
    ['UPLOAD_ALLOWED_TYPES', ',,', 'UPLOAD_ALLOWED_TYPES must list content types such as image/png, got ",,"'],
    ['UPLOAD_ALLOWED_TYPES', 'pdf', 'UPLOAD_ALLOWED_TYPES must list content types such as image/png, got "pdf"'],
  ] as const) {
    t.throws(() => loadConfig({ [env]: raw }), { name: 'ConfigError', message }, `${env}=${raw}`)
  }
  const config = loadConfig({ PUBLIC_URL: 'https://credits.example.com', SMTP_URL: 'smtps://u:p@mail.example.com:465', SANDBOX_FAIL_AMOUNT: '99.5', UPLOAD_ALLOWED_TYPES: 'image/png, Application/PDF' })
  t.equal(config.publicUrl, 'https://credits.example.com')
  t.equal(config.sandboxFailAmount, '99.5')
  t.same(config.uploadAllowedTypes, ['image/png', 'application/pdf'])
  t.equal(loadConfig({}).publicUrl, '', 'unset: the default applies')
  const file = path.join(tempDir(), 'a-file')
  fs.writeFileSync(file, '')
  t.throws(() => loadConfig({ DATA_DIR: file }), { name: 'ConfigError', message: `DATA_DIR must name a directory (it names a file), got "${file}"` })
})
