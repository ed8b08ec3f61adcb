import type { FastifyRequest } from 'fastify'
import { invalidFields } from '../shared/errors.js'

/**
 * The validator coerces JSON numbers to strings, which would let a float
 * (already rounded by JSON.parse) stand for money or a rate. Before validation,
 * this refuses a number in any of the named body fields: amounts are decimal
 * strings on the wire, both ways.
 */
export const decimalStrings = (fields: readonly string[]) => async (request: FastifyRequest): Promise<void> => {
  const body = request.body
  if (typeof body !== 'object' || body === null) return
  const numbers = fields.filter((field) => typeof Reflect.get(body, field) === 'number')
  if (numbers.length > 0) {
    throw invalidFields(numbers.map((field) => ({ field: `body.${field}`, message: 'must be a decimal string (e.g. "1500000.00"), not a JSON number' })))
  }
}
