import sortedBtree from 'sorted-btree'
import { bulkLoad } from 'sorted-btree/extended/bulkLoad.js'
import { comparePrimitives } from './documentQuery.js'
import type { ReadDocument, Sort } from './readStore.js'

type Key = string | number | boolean
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

/** Whether a value can be placed by `comparePrimitives` exactly as MongoDB orders it (objects and arrays cannot). */
const placeable = (value: unknown): boolean => value === null || typeof value !== 'object'

/**
 * The documents of a collection kept in one sort's order, grouped by their
 * value of one field (or in one group), so a page of a large collection is
 * read from its start instead of sorting every match for every page. Keys are
 * the documents themselves: the store replaces a document by a new object and
 * never edits a stored one, so an old version still compares as it was stored.
 */
export class OrderedIndex<T extends ReadDocument> {
  private readonly groups = new Map<Key, Tree<T>>()
  private readonly compare: (a: T, b: T) => number

  private constructor(readonly prefix: string | null, readonly keys: SortKeys) {
    this.compare = (a, b) => {
      for (const [field, direction] of keys) {
        const order = comparePrimitives(Reflect.get(a, field), Reflect.get(b, field))
        if (order !== 0) return order * direction
      }
      return 0
    }
  }

  /** The index over `docs`, or null when one of them holds a value it cannot place. */
  static build<T extends ReadDocument>(prefix: string | null, keys: SortKeys, docs: Iterable<T>): OrderedIndex<T> | null {
    const index = new OrderedIndex<T>(prefix, keys)
    const grouped = new Map<Key, T[]>()
    for (const doc of docs) {
      const group = index.groupOf(doc)
      if (group === undefined) return null
      if (group === null) continue
      const members = grouped.get(group)
      if (members === undefined) grouped.set(group, [doc])
      else members.push(doc)
    }
    for (const [group, members] of grouped) {
      members.sort(index.compare)
      index.groups.set(group, bulkLoad(members, new Array<undefined>(members.length), nodeSize, index.compare))
    }
    return index
  }

  /**
   * The group a document belongs to: null when it has no scalar at the prefix
   * (no equality on a scalar can match it), undefined when it holds something
   * this index cannot place (an array or object at the prefix or a sort key).
   */
  private groupOf(doc: T): Key | null | undefined {
    for (const [field] of this.keys) if (!placeable(Reflect.get(doc, field))) return undefined
    if (this.prefix === null) return ''
    const value: unknown = Reflect.get(doc, this.prefix)
    if (value === undefined || value === null) return null
    return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : undefined
  }

  /** Keeps a stored (replaced) document in place; false when it cannot be placed and the index must go. */
  store(doc: T, previous: T | null): boolean {
    const group = this.groupOf(doc)
    if (group === undefined) return false
    if (previous !== null) {
      const before = this.groupOf(previous)
      // Same group and same order: the entry is overwritten in place so the tree holds the current object.
      if (before === group && this.compare(previous, doc) === 0) {
        if (group !== null) this.groups.get(group)?.set(doc, undefined, true)
        return true
      }
      this.remove(previous)
    }
    if (group === null) return true
    let tree = this.groups.get(group)
    if (tree === undefined) {
      tree = new sortedBtree.default<T, undefined>(undefined, this.compare, nodeSize)
      this.groups.set(group, tree)
    }
    tree.set(doc, undefined)
    return true
  }

  remove(doc: T): void {
    const group = this.groupOf(doc)
    if (group === undefined || group === null) return
    const tree = this.groups.get(group)
    if (tree === undefined) return
    tree.delete(doc)
    if (tree.size === 0) this.groups.delete(group)
  }

  /** The documents whose prefix field equals `value` (every one without a prefix), in the sort's order. */
  inOrder(value: Key | undefined): Iterable<T> {
    const tree = this.groups.get(this.prefix === null ? '' : value ?? '')
    return tree === undefined ? [] : tree.keys()
  }
}
