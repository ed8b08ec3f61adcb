import { IsArray, IsBoolean, IsInteger, IsNumber, IsObject, IsString, type TSchema } from 'typebox'

/**
 * What the checker knows of a value while compiling: the context's shape is
 * known field by field, so `.Credit.Debtr` is refused at create time; values
 * of functions and of stored responses are `any` and checked at render time.
 */
export type Type =
  | { kind: 'any' }
  | { kind: 'scalar'; name: 'string' | 'number' | 'bool' }
  | { kind: 'struct'; name: string; fields: ReadonlyMap<string, Type> }
  | { kind: 'list'; element: Type }

export const ANY: Type = { kind: 'any' }

export const typeOfSchema = (schema: TSchema, name = 'context'): Type => {
  if (IsObject(schema)) {
    const fields = new Map(Object.entries(schema.properties).map(([key, child]) => [key, typeOfSchema(child, key)]))
    return { kind: 'struct', name, fields }
  }
  if (IsArray(schema)) return { kind: 'list', element: typeOfSchema(schema.items, name) }
  if (IsString(schema)) return { kind: 'scalar', name: 'string' }
  if (IsNumber(schema) || IsInteger(schema)) return { kind: 'scalar', name: 'number' }
  if (IsBoolean(schema)) return { kind: 'scalar', name: 'bool' }
  return ANY
}

export const describeType = (type: Type): string => {
  switch (type.kind) {
    case 'any': return 'interface {}'
    case 'scalar': return type.name
    case 'struct': return type.name
    case 'list': return `[]${describeType(type.element)}`
  }
}

/** The type of `base.name`, or the reason it does not exist. */
export const fieldType = (base: Type, name: string): { type: Type } | { error: string } => {
  switch (base.kind) {
    case 'any':
      return { type: ANY }
    case 'struct': {
      const field = base.fields.get(name)
      if (field !== undefined) return { type: field }
      return { error: `can't evaluate field ${name} in type ${base.name} (it has ${[...base.fields.keys()].join(', ')})` }
    }
    default:
      return { error: `can't evaluate field ${name} in type ${describeType(base)}` }
  }
}
