import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { describeSettings } from '../src/shared/config.js'
import { permissionCatalogue } from '../src/shared/permissions.js'

const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../README.md'), 'utf8')

t.test('the README documents every environment variable the service reads', async (t) => {
  for (const setting of describeSettings()) t.match(readme, `| \`${setting.env}\` |`, setting.env)
})

t.test('the README opens with exactly the two set-up commands', async (t) => {
  const firstBlock = /```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? ''
  const commands = firstBlock.split('\n').filter((line) => line.trim() !== '').map((line) => line.split('#')[0]?.trim())
  t.same(commands, ['npm install && npm start', 'npm test'])
})

t.test('the permission document lists the whole catalogue', async (t) => {
  const doc = fs.readFileSync(path.resolve(import.meta.dirname, '../docs/permissions.md'), 'utf8')
  for (const name of Object.keys(permissionCatalogue)) t.match(doc, `\`${name}\``, name)
})
