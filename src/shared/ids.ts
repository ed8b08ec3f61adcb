import { randomUUID } from 'node:crypto'
import { v5 as uuidv5, validate } from 'uuid'

/** Namespace for every name-derived id of this service (UUIDv5). */
export const SERVICE_NAMESPACE = '6f1d3c52-8a0e-5b1f-9a2c-3e4d5f6a7b8c'

export const newId = (): string => randomUUID()

/** A stable id derived from a name: the same name gives the same id on every installation. */
export const deterministicId = (...parts: Array<string | number>): string =>
  uuidv5(parts.map(String).join(':'), SERVICE_NAMESPACE)

export const isUuid = (value: string): boolean => validate(value)
