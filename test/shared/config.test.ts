import t from 'tap'
import { REVOKED_SIGN_IN_RETENTION_MS } from '../../src/projections/principals.js'
import { loadConfig, MAX_ACCESS_TOKEN_TTL_SECONDS } from '../../src/shared/config.js'

t.test('ACCESS_TOKEN_TTL is at most one day, and a revoked sign-in is remembered as long as an access token can live', async (t) => {
  t.equal(loadConfig({ ACCESS_TOKEN_TTL: '86400' }).accessTokenTtl, 86_400)
  t.equal(loadConfig({}).accessTokenTtl, 3600, 'one hour by default')
  t.throws(() => loadConfig({ ACCESS_TOKEN_TTL: '86401' }), { name: 'ConfigError', message: 'ACCESS_TOKEN_TTL must be an integer from 1 to 86400, got "86401"' })
  t.throws(() => loadConfig({ ACCESS_TOKEN_TTL: '0' }), { message: 'ACCESS_TOKEN_TTL must be an integer from 1 to 86400, got "0"' })
  t.equal(REVOKED_SIGN_IN_RETENTION_MS, MAX_ACCESS_TOKEN_TTL_SECONDS * 1000)
})

t.test('a setting without an upper bound still names only its lower one', async (t) => {
  t.throws(() => loadConfig({ PORT: '-1' }), { message: 'PORT must be an integer >= 0, got "-1"' })
})
