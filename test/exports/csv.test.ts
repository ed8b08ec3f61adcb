import t from 'tap'
import { Decimal } from 'decimal.js'
import { CellError, csvStream, formatCell, recordBatches, RECORDS_PER_BATCH, type Column } from '../../src/exports/csv.js'

const column = (format: Column<unknown>['format'], scale?: number): Column<unknown> =>
  ({ name: 'c', format, description: 'c', value: (v) => v, ...(scale === undefined ? {} : { scale }) })

const read = async (stream: AsyncIterable<unknown>): Promise<Buffer> => {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(Buffer.from(String(chunk)))
  return Buffer.concat(chunks)
}

t.test('cells are written by their column format', async (t) => {
  t.equal(formatCell(column('decimal', 2), '1500000.5'), '1500000.50')
  t.equal(formatCell(column('decimal'), '0.00000001'), '0.00000001', 'never exponent notation')
  t.equal(formatCell(column('decimal', 0), new Decimal('2.5')), '3', 'half-up rounding')
  t.throws(() => formatCell(column('decimal'), 0.1), CellError, 'floats are refused')
  t.equal(formatCell(column('integer'), 42), '42')
  t.throws(() => formatCell(column('integer'), 4.2), CellError)
  t.equal(formatCell(column('date'), '2026-03-01'), '2026-03-01')
  t.equal(formatCell(column('date'), '2026-03-01T23:30:00-05:00'), '2026-03-02', 'dates are UTC')
  t.equal(formatCell(column('timestamp'), '2026-03-01T10:00:00Z'), '2026-03-01T10:00:00.000Z')
  t.throws(() => formatCell(column('timestamp'), 'yesterday'), CellError)
  t.equal(formatCell(column('boolean'), false), 'false')
  t.equal(formatCell(column('text'), null), '')
  t.equal(formatCell(column('text'), '=HYPERLINK("x")'), `'=HYPERLINK("x")`, 'a formula is neutralised')
  t.equal(formatCell(column('text'), '-5'), `'-5`)
})

t.test('files are RFC 4180 CSV in UTF-8 without BOM', async (t) => {
  async function* records() {
    yield [['plain', 'a,b', 'say "hi"', 'two\nlines', 'ñ €']]
  }
  const bytes = await read(csvStream(['h1', 'h2', 'h3', 'h4', 'h5'], records()))
  t.not(bytes[0], 0xef, 'no byte-order mark')
  t.equal(bytes.toString('utf8'), 'h1,h2,h3,h4,h5\r\nplain,"a,b","say ""hi""","two\nlines",ñ €\r\n')
})

t.test('records are pulled as the reader consumes them, never all at once', async (t) => {
  let produced = 0
  async function* many() {
    for (let i = 0; i < 1_000_000; i++) {
      produced += 1
      yield { n: i, payload: 'x'.repeat(100) }
    }
  }
  const columns: Column<{ n: number; payload: string }>[] = [
    { name: 'n', format: 'integer', description: 'n', value: (r) => r.n },
    { name: 'payload', format: 'text', description: 'payload', value: (r) => r.payload },
  ]
  const stream = csvStream(['n', 'payload'], recordBatches(columns, many()))
  for await (const _chunk of stream) break
  t.ok(produced < 10_000, `a reader that took one chunk made the source produce ${produced} of 1,000,000 records`)
})

t.test('batches write exactly what one record at a time would', async (t) => {
  const rows = Array.from({ length: RECORDS_PER_BATCH * 2 + 3 }, (_, i) => ({ i, note: i % 3 === 0 ? 'a "b", c' : `=${i}` }))
  async function* source() {
    yield* rows
  }
  const columns: Column<{ i: number; note: string }>[] = [
    { name: 'i', format: 'integer', description: 'i', value: (r) => r.i },
    { name: 'note', format: 'text', description: 'note', value: (r) => r.note },
  ]
  const text = (await read(csvStream(['i', 'note'], recordBatches(columns, source())))).toString('utf8')
  const expected = ['i,note', ...rows.map((r) => `${r.i},${r.i % 3 === 0 ? '"a ""b"", c"' : `'=${r.i}`}`)].map((line) => `${line}\r\n`).join('')
  t.equal(text, expected)
})
