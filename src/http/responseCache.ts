import type { FastifyReply } from 'fastify'

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
      const serialize = reply.getSerializationFunction('200')
      if (serialize === undefined) throw new Error('documentResponses needs a route with a 200 response schema')
      text = serialize(build(doc))
      cache.set(doc, text)
    }
    return reply.type('application/json; charset=utf-8').send(text)
  }
}
