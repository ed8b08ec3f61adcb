import fs from 'node:fs'
import path from 'node:path'
import { deterministicId } from '../shared/ids.js'

/** A municipality of the DANE DIVIPOLA division, as GET /cities answers it. */
export interface City {
  id: string
  name: string
  daneCode: number
  lat: string
  long: string
  state: { id: string; name: string; daneCode: number }
  /** The sub-regional province; null where the department has none. */
  province: { id: string; name: string } | null
  createdAt: string
}

/** The day this DIVIPOLA snapshot entered the service: every city's `createdAt`, the same on every installation. */
export const CITIES_LOADED_AT = '2026-01-15T00:00:00.000Z'

export const DATA_FILE = path.join(import.meta.dirname, 'colombia-municipalities.json')

interface Department { code: string; daneCode: number; name: string }
interface Municipality { code: string; daneCode: number; name: string; departmentCode: string; province: string | null; lat: string; long: string }

/** Lower case, accents stripped, punctuation as spaces: `Bogotá, D.C.` → `bogota d c`. */
export const normalizeName = (text: string): string =>
  text.normalize('NFD').replace(/\p{Diacritic}/gu, '').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim()

const record = (value: unknown, where: string): Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${where}: not an object`)
  return Object.fromEntries(Object.entries(value))
}
const stringAt = (row: Record<string, unknown>, key: string, where: string): string => {
  const value = row[key]
  if (typeof value !== 'string') throw new Error(`${where}.${key}: not a string`)
  return value
}
const integerAt = (row: Record<string, unknown>, key: string, where: string): number => {
  const value = row[key]
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new Error(`${where}.${key}: not an integer`)
  return value
}
const arrayAt = (row: Record<string, unknown>, key: string): unknown[] => {
  const value = row[key]
  if (!Array.isArray(value)) throw new Error(`${key}: not an array`)
  return value
}

const parse = (raw: unknown): { departments: Department[]; municipalities: Municipality[] } => {
  const root = record(raw, 'data set')
  const departments = arrayAt(root, 'departments').map((value, i) => {
    const row = record(value, `departments.${i}`)
    return { code: stringAt(row, 'code', `departments.${i}`), daneCode: integerAt(row, 'daneCode', `departments.${i}`), name: stringAt(row, 'name', `departments.${i}`) }
  })
  const municipalities = arrayAt(root, 'municipalities').map((value, i) => {
    const where = `municipalities.${i}`
    const row = record(value, where)
    const province = row['province']
    if (province !== null && typeof province !== 'string') throw new Error(`${where}.province: not a string or null`)
    return {
      code: stringAt(row, 'code', where), daneCode: integerAt(row, 'daneCode', where), name: stringAt(row, 'name', where),
      departmentCode: stringAt(row, 'departmentCode', where), province, lat: stringAt(row, 'lat', where), long: stringAt(row, 'long', where),
    }
  })
  return { departments, municipalities }
}

/** A normalized name without its spaces: how `bogota dc` and `bogota d c` (from `Bogotá, D.C.`) are compared. */
const joined = (normalized: string): string => normalized.replaceAll(' ', '')

/** The characters of a search that are compared: letters and digits, without case, accents, spaces or punctuation. */
export const searchedLength = (text: string): number => joined(normalizeName(text)).length

interface Indexed { city: City; key: string; words: string[]; compact: string }

/**
 * Colombia's municipalities, loaded once from the shipped DIVIPOLA file. Ids are
 * UUIDv5 of the DANE codes (and of the department and province name for
 * provinces), so they are the same on every installation.
 */
export class CityCatalogue {
  private readonly byCode = new Map<string, City>()
  private readonly byId = new Map<string, City>()
  private readonly indexed: Indexed[]

  constructor(raw: unknown) {
    const { departments, municipalities } = parse(raw)
    const states = new Map(departments.map((d) => [d.code, { id: deterministicId('department', d.code), name: d.name, daneCode: d.daneCode }]))
    this.indexed = municipalities.map((m) => {
      const state = states.get(m.departmentCode)
      if (state === undefined) throw new Error(`municipality ${m.code}: unknown department ${m.departmentCode}`)
      const city: City = {
        id: deterministicId('city', m.code), name: m.name, daneCode: m.daneCode, lat: m.lat, long: m.long, state,
        province: m.province === null ? null : { id: deterministicId('province', m.departmentCode, m.province), name: m.province },
        createdAt: CITIES_LOADED_AT,
      }
      this.byCode.set(m.code, city)
      this.byId.set(city.id, city)
      const key = normalizeName(m.name)
      return { city, key, words: key.split(' '), compact: joined(key) }
    })
  }

  get size(): number {
    return this.byCode.size
  }

  /** The city of a 5-digit DANE code (`05001`), or null. */
  byDaneCode(code: string): City | null {
    return this.byCode.get(code) ?? null
  }

  get(id: string): City | null {
    return this.byId.get(id) ?? null
  }

  /**
   * Cities whose name contains the text, ignoring case, accents and punctuation;
   * exact names first, then names starting with it, then a word starting with it,
   * then anywhere; alphabetical within each rank. Punctuation may be typed as a
   * space or left out, so names are also compared without their spaces.
   */
  search(text: string, limit: number): City[] {
    const needle = normalizeName(text)
    if (needle === '') return []
    const compactNeedle = joined(needle)
    const rank = ({ key, words, compact }: Indexed): number => {
      if (key === needle || compact === compactNeedle) return 0
      if (key.startsWith(needle) || compact.startsWith(compactNeedle)) return 1
      if (words.some((_, i) => words.slice(i).join(' ').startsWith(needle))) return 2
      return compact.includes(compactNeedle) ? 3 : -1
    }
    return this.indexed
      .map((entry) => ({ entry, rank: rank(entry) }))
      .filter(({ rank: r }) => r >= 0)
      .sort((a, b) => a.rank - b.rank || a.entry.key.localeCompare(b.entry.key) || a.entry.city.daneCode - b.entry.city.daneCode)
      .slice(0, limit)
      .map(({ entry }) => entry.city)
  }
}

let loaded: CityCatalogue | undefined

/** The shipped catalogue, read and checked on first use (the HTTP layer asks for it at start). */
export const cityCatalogue = (): CityCatalogue => {
  loaded ??= new CityCatalogue(JSON.parse(fs.readFileSync(DATA_FILE, 'utf8')))
  return loaded
}
