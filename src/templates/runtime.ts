import { TemplateExecutionError, type Position } from './errors.js'
import { FunctionError, templateFunctions, type RenderEnvironment } from './functions.js'
import { formatValue, goTypeName, isList, isMap, kindOf, ownValue, truth } from './values.js'

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
  /** Range iterations plus function calls in one render. */
  maxSteps: number
}

/**
 * The only object generated template code can reach (besides its own
 * literals): reads fields of data, calls allow-listed functions, iterates,
 * and keeps each render within its output and step budgets.
 */
export class RenderRuntime {
  private written = 0
  private steps = 0
  private built = 0

  constructor(
    private readonly literals: readonly unknown[],
    private readonly sites: readonly Site[],
    private readonly env: RenderEnvironment,
    private readonly limits: RenderLimits,
  ) {}

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

  /** Prints a pipeline's value as Go does (`<no value>` for nil). */
  out(value: unknown, site: number): string {
    return this.emit(formatValue(value, true), site)
  }

  truth(value: unknown): boolean {
    return truth(value)
  }

  step(site: number, count = 1): void {
    this.steps += count
    if (this.steps > this.limits.maxSteps) this.fail(site, `render exceeds ${this.limits.maxSteps} steps`)
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
    this.step(site)
    try {
      return this.checkSize(fn.call(args, this.env), site)
    } catch (error) {
      if (error instanceof FunctionError) this.fail(site, `error calling ${name}: ${error.message}`)
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

  /** The (key, element) pairs of a range: lists by position, maps by sorted key, an integer n as 0…n-1, nil as nothing. */
  iter(value: unknown, site: number, variables: number): Array<[unknown, unknown]> {
    const kind = kindOf(value)
    let pairs: Array<[unknown, unknown]>
    if (kind === 'nil') pairs = []
    else if (isList(value)) pairs = value.map((element, index) => [index, element])
    else if (isMap(value)) pairs = Object.keys(value).sort().map((key) => [key, value[key]])
    else if (typeof value === 'number' && Number.isInteger(value)) {
      if (variables > 1) this.fail(site, 'range over int permits only one iteration variable')
      this.step(site, Math.max(0, value))
      pairs = Array.from({ length: Math.max(0, value) }, (_, i) => [i, i])
    } else this.fail(site, `range can't iterate over ${formatValue(value)}`)
    return pairs
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
