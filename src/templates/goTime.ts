import { LRUCache } from 'lru-cache'

/**
 * Go's time.Format with a reference layout (`2006-01-02T15:04:05Z07:00`): the
 * layout chunks of time/format.go, in UTC or in an IANA time zone.
 */
const longMonths = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
const longDays = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

interface Wall {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
  millisecond: number
  weekday: number
  yearDay: number
  offsetMinutes: number
  zoneName: string
}

/** Date.UTC for every year: Date.UTC itself reads years 0–99 as 1900–1999. */
const utc = (year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number => {
  const date = new Date(0)
  date.setUTCFullYear(year, month, day)
  date.setUTCHours(hour, minute, second, 0)
  return date.getTime()
}

const wallClock = (date: Date, timeZone: string): Wall => {
  const offsetMinutes = timeZone === 'UTC' ? 0 : zoneOffsetMinutes(date, timeZone)
  const shifted = new Date(date.getTime() + offsetMinutes * 60_000)
  const startOfYear = utc(shifted.getUTCFullYear(), 0, 1)
  return {
    year: shifted.getUTCFullYear(), month: shifted.getUTCMonth() + 1, day: shifted.getUTCDate(),
    hour: shifted.getUTCHours(), minute: shifted.getUTCMinutes(), second: shifted.getUTCSeconds(), millisecond: shifted.getUTCMilliseconds(),
    weekday: shifted.getUTCDay(), yearDay: Math.floor((shifted.getTime() - startOfYear) / 86_400_000) + 1,
    offsetMinutes, zoneName: timeZone === 'UTC' ? 'UTC' : zoneAbbreviation(date, timeZone, offsetMinutes),
  }
}

/**
 * Formatters by kind and zone. Building one takes about a hundred times as
 * long as formatting with it, and a template may format in a loop; zone names
 * are case-insensitive, so the spellings a template can make are bounded only
 * by the cache.
 */
const formatters = new LRUCache<string, Intl.DateTimeFormat>({ max: 256 })

const formatter = (kind: 'wall' | 'name', timeZone: string): Intl.DateTimeFormat => {
  const key = `${kind} ${timeZone}`
  const cached = formatters.get(key)
  if (cached !== undefined) return cached
  const created = kind === 'wall'
    ? new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', era: 'short', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' })
    : new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' })
  formatters.set(key, created)
  return created
}

/** Minutes east of UTC of an IANA zone at an instant; throws RangeError for an unknown zone. */
export const zoneOffsetMinutes = (date: Date, timeZone: string): number => {
  const parts = formatter('wall', timeZone).formatToParts(date)
  const part = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value ?? 0)
  // Intl counts years before 1 as 1 BC, 2 BC…; the proleptic year (Go's and JavaScript's) of 1 BC is 0.
  const year = parts.find((p) => p.type === 'era')?.value === 'BC' ? 1 - part('year') : part('year')
  const asUtc = utc(year, part('month') - 1, part('day'), part('hour'), part('minute'), part('second'))
  return Math.round((asUtc - Math.floor(date.getTime() / 1000) * 1000) / 60_000)
}

const zoneAbbreviation = (date: Date, timeZone: string, offsetMinutes: number): string => {
  const name = formatter('name', timeZone).formatToParts(date).find((p) => p.type === 'timeZoneName')?.value ?? ''
  if (/^[A-Z]{2,5}$/.test(name)) return name
  const sign = offsetMinutes < 0 ? '-' : '+'
  const abs = Math.abs(offsetMinutes)
  return `${sign}${two(Math.floor(abs / 60))}${abs % 60 === 0 ? '' : two(abs % 60)}`
}

/** Go's appendInt with a width: a negative number's sign comes before its padding (`-02`). */
const padded = (n: number, width: number) => `${n < 0 ? '-' : ''}${String(Math.abs(n)).padStart(width, '0')}`
const two = (n: number) => padded(n, 2)

const offsetText = (minutes: number, style: 'hhmmss' | 'hh:mm:ss' | 'hhmm' | 'hh:mm' | 'hh', zulu: boolean): string => {
  if (zulu && minutes === 0) return 'Z'
  const sign = minutes < 0 ? '-' : '+'
  const abs = Math.abs(minutes)
  const hh = two(Math.floor(abs / 60))
  const mm = two(abs % 60)
  switch (style) {
    case 'hhmmss': return `${sign}${hh}${mm}00`
    case 'hh:mm:ss': return `${sign}${hh}:${mm}:00`
    case 'hhmm': return `${sign}${hh}${mm}`
    case 'hh:mm': return `${sign}${hh}:${mm}`
    case 'hh': return `${sign}${hh}`
  }
}

type Chunk = { text: string; render: (w: Wall) => string }

const fixed: Chunk[] = [
  { text: 'January', render: (w) => longMonths[w.month - 1] ?? '' },
  { text: 'Jan', render: (w) => (longMonths[w.month - 1] ?? '').slice(0, 3) },
  { text: 'Monday', render: (w) => longDays[w.weekday] ?? '' },
  { text: 'Mon', render: (w) => (longDays[w.weekday] ?? '').slice(0, 3) },
  { text: 'MST', render: (w) => w.zoneName },
  { text: '2006', render: (w) => padded(w.year, 4) },
  { text: '002', render: (w) => String(w.yearDay).padStart(3, '0') },
  { text: '_2006', render: (w) => `_${padded(w.year, 4)}` },
  { text: '__2', render: (w) => String(w.yearDay).padStart(3, ' ') },
  { text: '_2', render: (w) => String(w.day).padStart(2, ' ') },
  { text: '01', render: (w) => two(w.month) },
  { text: '02', render: (w) => two(w.day) },
  { text: '03', render: (w) => two(w.hour % 12 === 0 ? 12 : w.hour % 12) },
  { text: '04', render: (w) => two(w.minute) },
  { text: '05', render: (w) => two(w.second) },
  { text: '06', render: (w) => two(w.year % 100) },
  { text: '15', render: (w) => two(w.hour) },
  { text: '1', render: (w) => String(w.month) },
  { text: '2', render: (w) => String(w.day) },
  { text: '3', render: (w) => String(w.hour % 12 === 0 ? 12 : w.hour % 12) },
  { text: '4', render: (w) => String(w.minute) },
  { text: '5', render: (w) => String(w.second) },
  { text: 'PM', render: (w) => (w.hour >= 12 ? 'PM' : 'AM') },
  { text: 'pm', render: (w) => (w.hour >= 12 ? 'pm' : 'am') },
  { text: '-070000', render: (w) => offsetText(w.offsetMinutes, 'hhmmss', false) },
  { text: '-07:00:00', render: (w) => offsetText(w.offsetMinutes, 'hh:mm:ss', false) },
  { text: '-0700', render: (w) => offsetText(w.offsetMinutes, 'hhmm', false) },
  { text: '-07:00', render: (w) => offsetText(w.offsetMinutes, 'hh:mm', false) },
  { text: '-07', render: (w) => offsetText(w.offsetMinutes, 'hh', false) },
  { text: 'Z070000', render: (w) => offsetText(w.offsetMinutes, 'hhmmss', true) },
  { text: 'Z07:00:00', render: (w) => offsetText(w.offsetMinutes, 'hh:mm:ss', true) },
  { text: 'Z0700', render: (w) => offsetText(w.offsetMinutes, 'hhmm', true) },
  { text: 'Z07:00', render: (w) => offsetText(w.offsetMinutes, 'hh:mm', true) },
  { text: 'Z07', render: (w) => offsetText(w.offsetMinutes, 'hh', true) },
]

/** `.000` / `.999` (or with a comma): fractional seconds, zeros kept or trimmed; JavaScript times carry milliseconds. */
const fraction = (layout: string, i: number): { length: number; render: (w: Wall) => string } | null => {
  const separator = layout[i]
  const digit = layout[i + 1]
  if ((separator !== '.' && separator !== ',') || (digit !== '0' && digit !== '9')) return null
  let j = i + 1
  while (layout[j] === digit) j++
  if (/[0-9]/.test(layout[j] ?? '')) return null
  const places = j - i - 1
  return {
    length: j - i,
    render: (w) => {
      const digits = (String(w.millisecond).padStart(3, '0') + '0'.repeat(Math.max(0, places - 3))).slice(0, places)
      if (digit === '0') return separator + digits
      const trimmed = digits.replace(/0+$/, '')
      return trimmed === '' ? '' : separator + trimmed
    },
  }
}

export const formatGoTime = (date: Date, layout: string, timeZone = 'UTC'): string => {
  const wall = wallClock(date, timeZone)
  let out = ''
  let i = 0
  outer: while (i < layout.length) {
    const frac = fraction(layout, i)
    if (frac !== null) {
      out += frac.render(wall)
      i += frac.length
      continue
    }
    for (const chunk of fixed) {
      if (layout.startsWith(chunk.text, i)) {
        out += chunk.render(wall)
        i += chunk.text.length
        continue outer
      }
    }
    out += layout[i]
    i++
  }
  return out
}
