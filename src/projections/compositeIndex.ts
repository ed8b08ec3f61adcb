import type { ReadDocument } from './readStore.js'
import { isKey, type Key } from './scalarKey.js'

/**
 * How many documents hold each combination of values of several one-step
 * fields, so a count of equalities on all of them (a list's total under a
 * filter) is read instead of testing every document of the organization.
 * Only keys and missing values are counted: a document holding an array or
 * object at one of the fields (which MongoDB matches element by element)
 * makes the counts unusable, as an order is given up (orderedIndex.ts).
 */
export class CompositeCount<T extends ReadDocument> {
  private readonly counts = new Map<string, number>()
  /** False once a document held a value these counts cannot key: totals are then counted by testing. */
  usable = true

  /** Counts `docs`, the collection's documents when first asked. */
  constructor(readonly fields: readonly string[], docs: Iterable<T>) {
    for (const doc of docs) {
      this.add(doc)
      if (!this.usable) return
    }
  }

  /** The key of a filter's or document's values (null: a value that is not a key; missing counts as null). */
  private keyOf(values: (field: string) => unknown): string | null {
    const key: Array<Key | null> = []
    for (const field of this.fields) {
      const value = values(field)
      if (value === undefined || value === null) key.push(null)
      else if (isKey(value)) key.push(value)
      else return null
    }
    return JSON.stringify(key)
  }

  private add(doc: T): void {
    const key = this.keyOf((field) => Reflect.get(doc, field))
    if (key === null) {
      this.usable = false
      this.counts.clear()
      return
    }
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
  }

  /** Counts a stored (replaced) document. */
  store(doc: T, previous: T | null): void {
    if (!this.usable) return
    if (previous !== null) this.remove(previous)
    this.add(doc)
  }

  remove(doc: T): void {
    if (!this.usable) return
    const key = this.keyOf((field) => Reflect.get(doc, field))
    if (key === null) return
    const left = (this.counts.get(key) ?? 0) - 1
    if (left > 0) this.counts.set(key, left)
    else this.counts.delete(key)
  }

  /** How many documents hold exactly the filter's values (undefined: counted by testing). */
  count(filter: Record<string, unknown>): number | undefined {
    if (!this.usable) return undefined
    const key = this.keyOf((field) => filter[field])
    return key === null ? undefined : this.counts.get(key) ?? 0
  }
}
