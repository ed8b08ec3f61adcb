import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'

export const scratchDir = (name: string): string => fs.mkdtempSync(path.join(os.tmpdir(), `credit-bench-${name}-`))
