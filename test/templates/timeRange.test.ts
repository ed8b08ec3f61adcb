import t from 'tap'
import { compileTemplate } from '../../src/templates/compile.js'
import { emptyTemplateContext } from '../../src/templates/context.js'
import { TemplateExecutionError } from '../../src/templates/errors.js'

const env = { now: new Date('2026-01-15T12:34:56.789Z'), fromWebhook: () => null }

const render = (source: string) => compileTemplate(source).render(emptyTemplateContext(), env)

/** The error a render fails with (null when it renders). */
const renderError = (source: string): unknown => {
  try {
    render(source)
    return null
  } catch (error) {
    return error
  }
}

t.test('a number of seconds outside JavaScript\'s dates fails the render naming the value, never prints NaN', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['{{ date "2006-01-02" 1e20 }}', /date: cannot read int "100000000000000000000" as a time/],
    ['{{ unixEpoch 1e300 }}', /unixEpoch: cannot read int "1e\+300" as a time/],
    ['{{ unixEpoch -8640000000001 }}', /unixEpoch: cannot read int "-8640000000001" as a time/],
    ['{{ dateInZone "2006-01-02" 1e20 "America/Bogota" }}', /dateInZone: cannot read int "100000000000000000000" as a time/],
    ['{{ dateInZone "2006-01-02" 1e20 "Mars/Olympus" }}', /dateInZone: cannot read int "100000000000000000000" as a time/],
  ]
  for (const [source, message] of cases) {
    const error = renderError(source)
    t.type(error, TemplateExecutionError, source)
    t.match(error, { message }, source)
  }
})

t.test('the ends of JavaScript\'s dates still print in UTC; in a zone whose wall clock falls beyond them the render fails', async (t) => {
  t.equal(render('{{ date "2006-01-02 15:04" 8640000000000 }}'), '275760-09-13 00:00')
  t.equal(render('{{ unixEpoch 8640000000000 }}'), '8640000000000')
  t.equal(render('{{ dateInZone "2006-01-02 15:04 MST" 8640000000000 "America/Bogota" }}'), '275760-09-12 19:00 -05')
  t.throws(() => render('{{ dateInZone "2006-01-02" 8640000000000 "Asia/Tokyo" }}'), { message: /dateInZone: cannot read int "8640000000000" as a time in Asia\/Tokyo/ })
})

t.test('dateInZone reports an unknown time zone only when the zone is unknown', async (t) => {
  t.throws(() => render('{{ dateInZone "2006" now "Mars/Olympus" }}'), { message: /unknown time zone Mars\/Olympus/ })
  t.throws(() => render('{{ dateInZone "2006" now "" }}'), { message: /unknown time zone/ })
  const outOfRange = renderError('{{ dateInZone "2006" 1e20 "America/Bogota" }}')
  t.match(outOfRange, { message: /dateInZone: cannot read/ })
  t.notMatch(outOfRange, { message: /unknown time zone/ })
  t.equal(render('{{ dateInZone "2006-01-02T15:04:05Z07:00" now "America/Bogota" }}'), '2026-01-15T07:34:56-05:00')
})

t.test('years before 1 and below 100 print as Go prints them, in UTC and in a zone', async (t) => {
  t.equal(render('{{ date "2006-01-02 15:04 06" -62200000000 }}'), '-0002-12-17 14:13 -02', 'a sign before the padding, as Go\'s appendInt writes it')
  t.equal(render('{{ dateInZone "2006-01-02 15:04 -07:00" -62200000000 "America/Bogota" }}'), '-0002-12-17 09:17 -04:56', 'the zone\'s local mean time then, in the right year')
  t.equal(render('{{ dateInZone "2006-01-02 15:04" -61000000000 "America/Bogota" }}'), '0036-12-26 06:37', 'a year below 100 is not taken for 1936')
  t.equal(render('{{ dateInZone "2006-01-02 15:04 06" -62135596800 "America/Bogota" }}'), '0000-12-31 19:04 00', 'the year before 1 is 0')
  t.equal(render('{{ date "2006-01-02 15:04" -8640000000000 }}'), '-271821-04-20 00:00', 'the earliest JavaScript date')
  t.throws(() => render('{{ dateInZone "2006-01-02" -8640000000000 "America/Bogota" }}'), { message: /cannot read int "-8640000000000" as a time in America\/Bogota/ },
    'west of UTC its wall clock falls before it: the render fails')
})
