import type { FastifyReply } from 'fastify'

/** The answer as the route's own 200 response schema serializes it. */
const serializedBySchema = (reply: FastifyReply, answer: Record<string, unknown>): string => {
  const serialize = reply.getSerializationFunction('200')
  if (serialize === undefined) throw new Error('a kept response needs a route with a 200 response schema')
  return serialize(answer)
}

const sendJsonText = (reply: FastifyReply, text: string): FastifyReply => reply.type('application/json; charset=utf-8').send(text)

/**
 * Serialized answers kept per read-model document. Stored documents are
 * immutable and replaced by a new object on every change, so a WeakMap keyed
 * by the document forgets the answer exactly when an event changes it (and
 * when the document is dropped). The text is made by the route's own response
 * schema serializer, once per document version.
 */
export const documentResponses = <Doc extends object>() => {
  const cache = new WeakMap<Doc, string>()
  return (reply: FastifyReply, doc: Doc, build: (doc: Doc) => Record<string, unknown>): FastifyReply => {
    let text = cache.get(doc)
    if (text === undefined) {
      text = serializedBySchema(reply, build(doc))
      cache.set(doc, text)
    }
    return sendJsonText(reply, text)
  }
}

interface ListNode {
  next: WeakMap<object, ListNode>
  text?: string
}

/**
 * Serialized answers kept per sequence of read-model documents (a list
 * route's page), like documentResponses: the sequence is walked as a trie of
 * WeakMaps keyed by each document, so a changed, added, removed or reordered
 * document leads to another entry, and entries of replaced documents go with
 * them.
 */
export const documentListResponses = <Doc extends object>() => {
  const root: ListNode = { next: new WeakMap() }
  return (reply: FastifyReply, docs: readonly Doc[], build: (docs: readonly Doc[]) => Record<string, unknown>): FastifyReply => {
    let node = root
    for (const doc of docs) {
      let child = node.next.get(doc)
      if (child === undefined) {
        child = { next: new WeakMap() }
        node.next.set(doc, child)
      }
      node = child
    }
    node.text ??= serializedBySchema(reply, build(docs))
    return sendJsonText(reply, node.text)
  }
}
