import sortedBtree from 'sorted-btree'
import { bulkLoad } from 'sorted-btree/extended/bulkLoad.js'
import { comparePrimitives } from './documentQuery.js'
import type { ReadDocument, Sort } from './readStore.js'
import { isKey, type Key } from './scalarKey.js'

type Tree<T> = sortedBtree.default<T, undefined>
export type SortKeys = ReadonlyArray<readonly [field: string, direction: 1 | -1]>

const nodeSize = 64

/**
 * The order of `sort` made total: one-step fields only, ending at `_id`
 * (added, ascending after the last key's direction, when the sort lacks it;
 * keys after it never decide). Null: a sort this index cannot keep.
 */
export const totalOrder = (sort: Sort): SortKeys | null => {
  const keys: Array<readonly [string, 1 | -1]> = []
  for (const [field, direction] of Object.entries(sort)) {
    if (field.includes('.')) return null
    keys.push([field, direction])
    if (field === '_id') return keys
  }
  const last = keys.at(-1)
  if (last === undefined) return null
  keys.push(['_id', last[1]])
  return keys
}

/** Whether `comparePrimitives` places a value exactly as MongoDB orders it: a key, null or nothing (not objects, arrays or non-finite numbers). */
const placeable = (value: unknown): boolean => value === undefined || value === null || isKey(value)

/**
 * The documents of a collection kept in one sort's order, by their value of
 * one field (or all in one group), so a page of a large group is read from its
 * start instead of sorting every match for every page. A group's tree (a B+
 * tree from sorted-btree) is built the first time a query reads that group,
 * from the group's documents the caller hands over, and kept with every write
 * to the group after; groups never read cost nothing. Keys are the documents
 * themselves: the store replaces a document by a new object and never edits a
 * stored one, so an old version still compares as it was stored.
 */
export class OrderedIndex<T extends ReadDocument> {
  private readonly groups = new Map<Key, Tree<T>>()
  private readonly compare: (a: T, b: T) => number
  /** False once a document held a value this order cannot place: queries then sort their matches. */
  usable = true

  constructor(readonly prefix: string | null, readonly keys: SortKeys) {
    this.compare = (a, b) => {
      for (const [field, direction] of keys) {
        const order = comparePrimitives(Reflect.get(a, field), Reflect.get(b, field))
        if (order !== 0) return order * direction
      }
      return 0
    }
  }

  /**
   * The group a document belongs to: null when it has no scalar at the prefix
   * (no equality on a scalar can match it), undefined when it holds something
   * this order cannot place (an array or object at the prefix, or at a sort key
   * a value `placeable` refuses).
   */
  private groupOf(doc: T): Key | null | undefined {
    for (const [field] of this.keys) if (!placeable(Reflect.get(doc, field))) return undefined
    if (this.prefix === null) return ''
    const value: unknown = Reflect.get(doc, this.prefix)
    if (value === undefined || value === null) return null
    return isKey(value) ? value : undefined
  }

  /** Keeps a stored (replaced) document in its group's order, when that group has been read. */
  store(doc: T, previous: T | null): void {
    if (!this.usable) return
    const group = this.groupOf(doc)
    if (group === undefined) {
      this.discard()
      return
    }
    if (previous !== null) {
      // Same group and same order: the entry is overwritten in place so the tree holds the current object.
      if (this.groupOf(previous) === group && this.compare(previous, doc) === 0) {
        if (group !== null) this.groups.get(group)?.set(doc, undefined, true)
        return
      }
      this.remove(previous)
    }
    if (group !== null) this.groups.get(group)?.set(doc, undefined)
  }

  remove(doc: T): void {
    const group = this.groupOf(doc)
    if (group === undefined || group === null) return
    const tree = this.groups.get(group)
    if (tree === undefined) return
    tree.delete(doc)
    // An emptied group is built again, from its documents then, when next read.
    if (tree.size === 0) this.groups.delete(group)
  }

  /**
   * The documents of the group holding `value` at the prefix (`undefined`:
   * the one group of an order without a prefix), in the sort's order; null
   * when one of them cannot be placed (the order is then given up).
   * `members` answers the group's documents (every one holding the value)
   * for the first read.
   */
  inOrder(value: Key | undefined, members: () => Iterable<T>): Iterable<T> | null {
    if (!this.usable) return null
    const group = this.prefix === null ? '' : value ?? ''
    let tree = this.groups.get(group)
    if (tree === undefined) {
      const docs = [...members()]
      if (docs.some((doc) => this.groupOf(doc) !== group)) {
        this.discard()
        return null
      }
      docs.sort(this.compare)
      tree = bulkLoad(docs, new Array<undefined>(docs.length), nodeSize, this.compare)
      this.groups.set(group, tree)
    }
    return tree.keys()
  }

  private discard(): void {
    this.usable = false
    this.groups.clear()
  }
}
