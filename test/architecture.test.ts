import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'

const src = path.resolve(import.meta.dirname, '../src')

interface Import { from: string; to: string }

const sourceFiles = (dir: string): string[] =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(full)
    return /\.(ts|mjs)$/.test(entry.name) ? [full] : []
  })

const specifiers = /(?:^|\n)\s*(?:import|export)\b[^'"]*?\bfrom\s+'([^']+)'|\bimport\(\s*'([^']+)'\s*\)/g

/** Every import of one of our own modules, as paths relative to src (`projections/credits.ts`). */
const ourImports = (): Import[] =>
  sourceFiles(src).flatMap((file) => {
    const text = fs.readFileSync(file, 'utf8')
    return [...text.matchAll(specifiers)].flatMap((match) => {
      const specifier = match[1] ?? match[2] ?? ''
      if (!specifier.startsWith('.')) return []
      const target = path.resolve(path.dirname(file), specifier).replace(/\.js$/, '.ts')
      return [{ from: path.relative(src, file), to: path.relative(src, target) }]
    })
  })

const folderOf = (relative: string): string => relative.includes(path.sep) ? relative.split(path.sep)[0] ?? '' : relative

/** The folders ../shared/ARCHITECTURE.md names and what each may import besides itself. */
const mayImport: Record<string, readonly string[]> = {
  shared: [],
  events: ['shared'],
  commands: ['events', 'shared'],
  projections: ['events', 'shared'],
}

/** The adapters behind the ports: the HTTP layer reaches them only through commands, queries and services. */
const adapters = /^(events\/(sqlite|eventstoredb)|projections\/(memoryStore|mongoStore|sqlite)|files\/(filesystem|gridfs))/

const imports = ourImports()

t.test('the scan sees the imports it checks', async (t) => {
  t.ok(imports.length > 500, `${imports.length} imports of our own modules`)
  t.ok(imports.some((i) => i.from === path.join('commands', 'credit.ts') && i.to === path.join('events', 'creditState.ts')))
})

t.test('events, commands, projections and shared import only the folders the architecture allows them', async (t) => {
  const violations = imports
    .filter(({ from, to }) => {
      const allowed = mayImport[folderOf(from)]
      return allowed !== undefined && folderOf(to) !== folderOf(from) && !allowed.includes(folderOf(to))
    })
    .map(({ from, to }) => `${from} → ${to}`)
  t.same(violations, [])
})

t.test('only the server entry imports the HTTP layer, and nothing in it imports an adapter', async (t) => {
  const intoHttp = imports.filter(({ from, to }) => folderOf(to) === 'http' && folderOf(from) !== 'http' && from !== 'server.ts')
  t.same(intoHttp.map(({ from, to }) => `${from} → ${to}`), [])
  const httpToAdapter = imports.filter(({ from, to }) => folderOf(from) === 'http' && adapters.test(to.split(path.sep).join('/')))
  t.same(httpToAdapter.map(({ from, to }) => `${from} → ${to}`), [])
})
