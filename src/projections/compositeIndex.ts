import type { ReadDocument } from './readStore.js'

type Key = string | number | boolean

/** Values JSON keeps apart exactly as MongoDB's equality does (not NaN or the infinities, which JSON writes as null). */
const isKey = (value: unknown): value is Key =>
  typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))

/**
 * How many documents hold each combination of values of several one-step
 * fields, so a count of equalities on all of them (a list's total under a
 * filter) is read instead of testing every document of the organization.
 * Only scalars and missing values are counted: a document holding an array
 * or object at one of the fields (which MongoDB matches element by element)
 * makes the index unusable.
 */
export class CompositeCount<T extends ReadDocument> {
  private readonly counts = new Map<string, number>()

  private constructor(readonly fields: readonly string[]) {}

  /** The index over `docs`, or null when one of them holds a value it cannot count. */
  static build<T extends ReadDocument>(fields: readonly string[], docs: Iterable<T>): CompositeCount<T> | null {
    const index = new CompositeCount<T>(fields)
    for (const doc of docs) if (!index.add(doc)) return null
    return index
  }

  /** The key of a filter's or document's values (null: a value that is not a scalar; missing counts as null). */
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

  private add(doc: T): boolean {
    const key = this.keyOf((field) => Reflect.get(doc, field))
    if (key === null) return false
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
    return true
  }

  private remove(doc: T): void {
    const key = this.keyOf((field) => Reflect.get(doc, field))
    if (key === null) return
    const left = (this.counts.get(key) ?? 0) - 1
    if (left > 0) this.counts.set(key, left)
    else this.counts.delete(key)
  }

  /** Counts a stored (replaced) document; false when it cannot be counted and the index must go. */
  store(doc: T, previous: T | null): boolean {
    if (previous !== null) this.remove(previous)
    return this.add(doc)
  }

  delete(doc: T): void {
    this.remove(doc)
  }

  /** How many documents hold exactly the filter's values (undefined: a value this index does not key, to be counted by testing). */
  count(filter: Record<string, unknown>): number | undefined {
    const key = this.keyOf((field) => filter[field])
    return key === null ? undefined : this.counts.get(key) ?? 0
  }
}
