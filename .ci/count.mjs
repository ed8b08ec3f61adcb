// Reads tap's TAP output on stdin and prints the totals CI reads: named tests
// that have no subtests of their own (the behaviours), as `N passed, N failed`.
// A test file that fails outside any named test counts as one failure.
import { Parser } from 'tap-parser'

let passed = 0
let failed = 0
let skipped = 0

const watch = (parser, depth) => {
  parser.on('child', (child) => {
    let hasChildren = false
    let failuresBefore = failed
    child.on('child', () => { hasChildren = true })
    child.on('assert', (point) => {
      if (point.skip) skipped += 1
    })
    watch(child, depth + 1)
    child.on('complete', (results) => {
      if (depth >= 1 && !hasChildren) {
        if (results.ok) passed += 1
        else failed += 1
      } else if (depth === 0 && !results.ok && failed === failuresBefore) {
        failed += 1
      }
    })
  })
}

const root = new Parser((results) => {
  if (!results.ok && failed === 0) failed = 1
  if (skipped > 0) console.log(`${skipped} skipped`)
  console.log(`${passed} passed, ${failed} failed`)
})
watch(root, 0)
process.stdin.pipe(root)
