import t from 'tap'
import { compileTemplate } from '../../src/templates/compile.js'
import { emptyTemplateContext } from '../../src/templates/context.js'
import { TemplateExecutionError } from '../../src/templates/errors.js'

const env = { now: new Date('2026-01-15T12:34:56.789Z'), fromWebhook: () => null }

const render = (source: string) => compileTemplate(source).render(emptyTemplateContext(), env)

t.test('a time given as text is a date (midnight UTC) or a timestamp, UTC when it has no offset, read the same whatever the host\'s zone', async (t) => {
  const zone = process.env['TZ']
  // Node reads TZ again when it is set: JavaScript's own reading of text without an offset follows it.
  process.env['TZ'] = 'America/Bogota'
  t.teardown(() => {
    if (zone === undefined) delete process.env['TZ']
    else process.env['TZ'] = zone
  })
  const cases: Array<[string, string]> = [
    ['2026-03-07', '2026-03-07 00:00:00.000 UTC'],
    ['2024-02-29', '2024-02-29 00:00:00.000 UTC'],
    ['2026-03-07T10:00:00Z', '2026-03-07 10:00:00.000 UTC'],
    ['2026-03-07T10:00:00.250-05:00', '2026-03-07 15:00:00.250 UTC'],
    ['2026-01-10T15:00:00.000Z', '2026-01-10 15:00:00.000 UTC'],
    ['2026-03-07T10:00:00', '2026-03-07 10:00:00.000 UTC'],
    ['2026-03-07t10:00:00.5', '2026-03-07 10:00:00.500 UTC'],
    ['2026-03-07T10:00', '2026-03-07 10:00:00.000 UTC'],
  ]
  for (const [text, expected] of cases) t.equal(render(`{{ date "2006-01-02 15:04:05.000 MST" "${text}" }}`), expected, text)
  t.equal(render('{{ unixEpoch "1970-01-02" }}'), '86400')
  t.equal(render('{{ dateInZone "2006-01-02 15:04" "2026-03-07T10:00:00Z" "America/Bogota" }}'), '2026-03-07 05:00')
})

t.test('impossible dates and text that is not ISO 8601 fail the render, naming the forms a time takes', async (t) => {
  for (const text of ['2026-02-30', '2026-02-31T10:00:00Z', '2026-04-31', '2025-02-29', '2026-03-07T24:00:00Z', '7/3/2026', '1', 'March 7, 2026',
    '2026-02-30T10:00:00', '2026-03-07T10:00:00 ', '2026-03-07 10:00:00', ' 2026-03-07', 'not a date']) {
    for (const call of [`date "2006-01-02" "${text}"`, `unixEpoch "${text}"`, `dateInZone "2006" "${text}" "UTC"`]) {
      const name = call.split(' ')[0] ?? ''
      t.throws(() => render(`{{ ${call} }}`), TemplateExecutionError, call)
      t.throws(() => render(`{{ ${call} }}`), {
        message: `${name}: cannot read string ${JSON.stringify(text)} as a time (a date such as 2026-03-07, or a timestamp such as 2026-03-07T10:00:00Z, or 2026-03-07T10:00:00 read as UTC)`,
      }, call)
    }
  }
})
