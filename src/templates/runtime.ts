import { compareText } from '../shared/text.js'
import { TemplateExecutionError, type Position } from './errors.js'
import { FunctionError, templateFunctions, type RenderEnvironment } from './functions.js'
import { argumentTextSteps, formatValue, goTypeName, isList, isMap, kindOf, ownValue, textLength, truth, type Meter } from './values.js'

/** A place in the template the generated code refers to by number: where it is, and what it names. */
export interface Site {
  position: Position
  /** Field chain (`.A.B`) read at this site. */
  names?: readonly string[]
  /** Function called at this site. */
  name?: string
  /** How the chain is written, for messages. */
  label?: string
}

export interface RenderLimits {
  /** Largest rendered text, and largest string any function may build, in characters. */
  maxOutput: number
  /** Range iterations, function calls and the work inside them (see Meter) in one render. */
  maxSteps: number
  /**
   * Wall-clock time of one render, in milliseconds: a backstop for work the
   * steps underprice, since every tenant's renders share one event loop. A
   * render within its steps takes 3 ms (plain steps) to about 160 ms
   * (`fromJson` in a loop) on the 2-core host of stop 37: the default, 2 s,
   * leaves a slower or busier host room.
   */
  maxMillis: number
}

/** Steps between two looks at the clock: about 50 µs of plain steps. */
const STEPS_PER_CLOCK_CHECK = 10_000

/**
 * What a range walks, by position, read as the loop goes rather than copied
 * into pairs first: a list is its own elements, an integer n needs no arrays.
 */
export interface RangeItems {
  readonly length: number
  /** Keys by position; null when the key is the position (lists, integers). */
  readonly keys: readonly unknown[] | null
  /** Elements by position; null when the element is the position (integers). */
  readonly elements: readonly unknown[] | null
}

const rangeItems = (length: number, keys: readonly unknown[] | null, elements: readonly unknown[] | null): RangeItems => ({ length, keys, elements })

const NOTHING = rangeItems(0, null, [])

const describeError = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error))

/**
 * The only object generated template code can reach (besides its own
 * literals): reads fields of data, calls allow-listed functions, iterates,
 * and keeps each render within its output and step budgets. It is the Meter
 * the functions pay their work to, on behalf of the call in progress.
 */
export class RenderRuntime implements Meter {
  private written = 0
  private steps = 0
  private built = 0
  /** The site of the call or output in progress (-1 before any): where its budget errors are reported. */
  private current = -1
  private nextClockCheck = STEPS_PER_CLOCK_CHECK
  private readonly deadline: number

  constructor(
    private readonly literals: readonly unknown[],
    private readonly sites: readonly Site[],
    private readonly env: RenderEnvironment,
    private readonly limits: RenderLimits,
  ) {
    this.deadline = performance.now() + limits.maxMillis
  }

  private site(index: number): Site {
    const site = this.sites[index]
    if (site === undefined) throw new TemplateExecutionError('internal: unknown template site', null)
    return site
  }

  private fail(index: number, message: string): never {
    throw new TemplateExecutionError(message, this.site(index).position)
  }

  private emit(text: string, index: number): string {
    this.written += text.length
    if (this.written > this.limits.maxOutput) this.fail(index, `rendered text exceeds ${this.limits.maxOutput} characters`)
    return text
  }

  text(index: number): string {
    const text = this.literals[index]
    return typeof text === 'string' ? this.emit(text, 0) : ''
  }

  /** Prints a pipeline's value as Go does (`<no value>` for nil); a list or map is measured against the room left before it is written. */
  out(value: unknown, site: number): string {
    if (typeof value === 'string') return this.emit(value, site)
    if (isList(value) || isMap(value)) {
      this.current = site
      const room = this.limits.maxOutput - this.written
      if (textLength(value, this, room) > room) this.fail(site, `rendered text exceeds ${this.limits.maxOutput} characters`)
    }
    return this.emit(formatValue(value, true), site)
  }

  get maxText(): number {
    return this.limits.maxOutput
  }

  charge(steps: number): void {
    this.step(this.current, steps)
  }

  refuse(reason: string): never {
    return this.fail(this.current, reason)
  }

  /** Any other error a render raises (a JavaScript RangeError…) as the template's error, where the render was. */
  failure(error: unknown): TemplateExecutionError {
    if (error instanceof TemplateExecutionError) return error
    const position = this.sites[this.current]?.position ?? null
    return new TemplateExecutionError(`render failed: ${shortened(describeError(error))}`, position)
  }

  truth(value: unknown): boolean {
    return truth(value)
  }

  step(site: number, count = 1): void {
    this.steps += count
    if (this.steps > this.limits.maxSteps) this.fail(site, `render exceeds ${this.limits.maxSteps} steps`)
    if (this.steps >= this.nextClockCheck) {
      this.nextClockCheck = this.steps + STEPS_PER_CLOCK_CHECK
      if (performance.now() > this.deadline) this.fail(site, `render exceeds ${this.limits.maxMillis} ms`)
    }
  }

  /** `base.A.B`: own fields of data objects only; a missing key is nil, a field of nil an error. */
  field(base: unknown, site: number): unknown {
    const { names = [], label = '' } = this.site(site)
    let value = base
    for (const name of names) {
      if (isMap(value)) {
        value = ownValue(value, name).value ?? null
        continue
      }
      if (value === null || value === undefined) this.fail(site, `nil pointer evaluating ${label}: no field ${name}`)
      this.fail(site, `can't evaluate field ${name} in type ${goTypeName(value)}`)
    }
    return value
  }

  call(site: number, args: unknown[]): unknown {
    const { name = '' } = this.site(site)
    const fn = templateFunctions.get(name)
    if (fn === undefined) this.fail(site, `function "${name}" not defined`)
    this.current = site
    // Every function that takes text reads it at least once.
    this.step(site, fn.steps + argumentTextSteps(args))
    try {
      return this.checkSize(fn.call(args, this.env, this), site)
    } catch (error) {
      if (error instanceof FunctionError) this.fail(site, `error calling ${name}: ${shortened(error.message)}`)
      throw error
    }
  }

  /** Go's short-circuit and/or: arguments are evaluated only as far as needed. */
  and(site: number, args: ReadonlyArray<() => unknown>): unknown {
    this.step(site)
    let value: unknown = null
    for (const arg of args) {
      value = arg()
      if (!truth(value)) return value
    }
    return value
  }

  or(site: number, args: ReadonlyArray<() => unknown>): unknown {
    this.step(site)
    let value: unknown = null
    for (const arg of args) {
      value = arg()
      if (truth(value)) return value
    }
    return value
  }

  /**
   * The (key, element) pairs of a range: lists by position, maps by sorted
   * key, an integer n as 0…n-1, nil as nothing. Each iteration pays its step
   * as the loop runs; a map also pays for sorting its keys up front.
   */
  iter(value: unknown, site: number, variables: number): RangeItems {
    const kind = kindOf(value)
    if (kind === 'nil') return NOTHING
    if (isList(value)) return rangeItems(value.length, null, value)
    if (isMap(value)) {
      const keys = Object.keys(value)
      this.step(site, keys.length)
      keys.sort(compareText)
      return rangeItems(keys.length, keys, keys.map((key) => value[key]))
    }
    if (typeof value === 'number' && Number.isInteger(value)) {
      if (variables > 1) this.fail(site, 'range over int permits only one iteration variable')
      return rangeItems(Math.max(0, value), null, null)
    }
    return this.fail(site, `range can't iterate over ${shortened(formatValue(value))}`)
  }

  private checkSize(result: unknown, site: number): unknown {
    if (typeof result === 'string') {
      this.built += result.length
      if (result.length > this.limits.maxOutput || this.built > this.limits.maxOutput * 16) this.fail(site, 'value too large')
    } else if (Array.isArray(result)) {
      this.step(site, result.length)
    }
    return result
  }
}

/** Longest text of an error message: `fail` and `required` take the template's text, and the message is kept with the send. */
const MAX_MESSAGE = 1000

const shortened = (message: string): string => (message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE)}…` : message)
