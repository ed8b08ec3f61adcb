const dateOnly = /^(\d{4})-(\d{2})-(\d{2})$/
const timestamp = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:[Zz]|([+-])(\d{2}):?(\d{2}))$/

/**
 * The instant a date (midnight UTC) or a timestamp with its offset names (RFC
 * 3339, and the ISO 8601 forms without seconds or with `+hhmm`); null for a
 * day or time that does not exist (2026-02-30, 24:00, a leap second, which a
 * Date cannot hold) or a time without an offset, which would be the host's.
 */
export const instantOf = (text: string): Date | null => {
  const parts = dateOnly.exec(text) ?? timestamp.exec(text)
  if (parts === null) return null
  const [year, month, day, hour = 0, minute = 0, second = 0] = parts.slice(1, 7).map((part) => Number(part ?? 0))
  const milliseconds = Math.floor(Number(`0${parts[7] ?? ''}`) * 1000)
  const offsetMinutes = parts[8] === undefined ? 0 : (parts[8] === '-' ? -1 : 1) * (Number(parts[9]) * 60 + Number(parts[10]))
  if (year === undefined || month === undefined || day === undefined) return null
  if (hour > 23 || minute > 59 || second > 59 || Number(parts[9] ?? 0) > 23 || Number(parts[10] ?? 0) > 59) return null
  const at = new Date(0)
  // setUTCFullYear, unlike Date.UTC, keeps years 0–99 as they are.
  at.setUTCFullYear(year, month - 1, day)
  if (at.getUTCFullYear() !== year || at.getUTCMonth() !== month - 1 || at.getUTCDate() !== day) return null
  at.setUTCHours(hour, minute, second, milliseconds)
  return new Date(at.getTime() - offsetMinutes * 60_000)
}
