import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { cityCatalogue, searchedLength } from '../reference/cities.js'
import type { Services } from '../services.js'
import { invalidFields } from '../shared/errors.js'
import { failures, Timestamp, Uuid } from './schemas.js'

export const CitySchema = Type.Object({
  id: Uuid,
  name: Type.String({ description: 'official DANE name' }),
  daneCode: Type.Integer({ description: 'DANE DIVIPOLA code without the leading zero (5001 for 05001)' }),
  lat: Type.String({ description: 'latitude of the municipal seat, WGS84 decimal degrees' }),
  long: Type.String({ description: 'longitude of the municipal seat, WGS84 decimal degrees' }),
  state: Type.Object({ id: Uuid, name: Type.String(), daneCode: Type.Integer() }, { description: 'the department' }),
  province: Type.Union([Type.Object({ id: Uuid, name: Type.String() }), Type.Null()], { description: 'sub-regional province; null where the department has none' }),
  createdAt: Timestamp,
})

/** City lookup over Colombia's DANE DIVIPOLA municipalities, shipped with the service. */
export const cityRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app) => {
  const cities = cityCatalogue()

  app.get('/cities', {
    schema: {
      summary: 'Find Colombian cities (municipalities) by name or DANE code',
      description: '`q` matches names ignoring case, accents and punctuation (exact names first, then prefixes, then words, then anywhere); ' +
        '`dane` returns the one city with that code or an empty list. With both, a city must match both. At least one is required. ' +
        'At most `limit` cities (default 20, at most 100).',
      tags: ['Cities'],
      querystring: Type.Object({
        q: Type.Optional(Type.String({ minLength: 3, maxLength: 100, description: 'part of the name, at least 3 characters' })),
        dane: Type.Optional(Type.String({ pattern: '^[0-9]{5}$', description: 'DANE municipality code, exactly 5 digits (05001)' })),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
      }, { additionalProperties: false }),
      response: { 200: Type.Object({ data: Type.Object({ cities: Type.Array(CitySchema) }) }), ...failures(400, 401) },
    },
  }, async (request) => {
    const { q, dane, limit } = request.query
    if (q === undefined && dane === undefined) {
      throw invalidFields([{ field: 'querystring', message: 'give q (at least 3 characters of the name) or dane (5 digits)' }])
    }
    // `a  ` or `..a` has three characters but searches for one: every city holding an a.
    if (q !== undefined && searchedLength(q) < 3) {
      throw invalidFields([{ field: 'querystring.q', message: 'must hold at least 3 letters or digits besides spaces and punctuation' }])
    }
    if (dane !== undefined) {
      const city = cities.byDaneCode(dane)
      const matches = city !== null && (q === undefined || cities.search(q, cities.size).some((c) => c.id === city.id))
      return { data: { cities: matches ? [city] : [] } }
    }
    return { data: { cities: cities.search(q ?? '', limit) } }
  })
}
