import t from 'tap'
import { compareText, illFormedText } from '../../src/shared/text.js'

const units = [0x41, 0x61, 0xe9, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xf900, 0xff21, 0xfffd, 0xffff]
const astral = [0x10000, 0x1f600, 0x20000, 0x10ffff]

const randomText = (next: () => number): string => {
  let text = ''
  for (let length = Math.floor(next() * 4); length > 0; length--) {
    const pool = next() < 0.3 ? astral : units
    text += String.fromCodePoint(pool[Math.floor(next() * pool.length)] ?? 0x41)
  }
  return text
}

t.test('text compares in code-point order, the order of UTF-8 bytes that MongoDB and SQLite compare', async (t) => {
  let seed = 7
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
    return seed / 2_147_483_648
  }
  let disagreements = 0
  let nativeWouldDiffer = 0
  for (let round = 0; round < 5_000; round++) {
    const a = randomText(next)
    const b = randomText(next)
    const bytes = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)))
    if (Math.sign(compareText(a, b)) !== bytes) disagreements += 1
    if ((a < b ? -1 : a > b ? 1 : 0) !== bytes) nativeWouldDiffer += 1
  }
  t.equal(disagreements, 0)
  t.ok(nativeWouldDiffer > 100, `the sample holds pairs JavaScript's < orders otherwise (${nativeWouldDiffer})`)
  t.ok(compareText('\uFF21', '\u{1F600}') < 0 && compareText('\u{1F600}', '\uFF21') > 0, 'U+FF21 before U+1F600')
  t.equal(compareText('Álvaro', 'Álvaro'), 0)
  t.ok(compareText('abc', 'abd') < 0 && compareText('ab', 'abc') < 0, 'Latin text as before')
})

t.test('ill-formed text is found in values and keys at any depth; whole pairs are not', async (t) => {
  t.equal(illFormedText({ a: ['x', { b: 'ok \u{1F600}' }], c: 1, d: null, e: true }), null)
  t.equal(illFormedText({ a: [1, { b: 'lone \ud800 high' }] }), 'lone \ud800 high')
  t.equal(illFormedText(['\udc00']), '\udc00')
  t.equal(illFormedText({ '\ud83d': 1 }), '\ud83d')
  t.equal(illFormedText('\ude00\ud83d'), '\ude00\ud83d', 'a pair in the wrong order is two halves')
  t.equal(illFormedText('\ud83d\ude00'), null)
})
