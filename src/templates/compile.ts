import { Eta } from 'eta'
import { LRUCache } from 'lru-cache'
import type { Command, Node, Operand, Pipeline } from './ast.js'
import { TemplateContextSchema } from './context.js'
import { TemplateSyntaxError, type Position } from './errors.js'
import { isTemplateFunction, templateFunctions, type RenderEnvironment } from './functions.js'
import { describe, parseTemplate } from './parser.js'
import { fromWebhookReferences, type FromWebhookReferences } from './references.js'
import { RenderRuntime, type RenderLimits, type Site } from './runtime.js'
import { ANY, describeType, fieldType, typeOfSchema, type Type } from './types.js'

/**
 * Go template → eta. The parse tree is checked against the context's shape
 * and turned into an eta template whose every tag is code this module writes:
 * the user's text, strings, numbers and names only ever appear as indexes
 * into tables (`k[3]`, site 7), never as characters of the generated code. So
 * a template can read data and call allow-listed functions, and nothing else.
 */
export interface CompiledTemplate {
  readonly source: string
  /** The eta template generated from the parse tree (for diagnostics and tests). */
  readonly etaSource: string
  /** The webhook tags it reads through fromWebhook (a firing sends those webhooks first). */
  readonly fromWebhook: FromWebhookReferences
  /** The rendered text; any failure (a budget, a JavaScript error such as a stack overflow) is a TemplateExecutionError. */
  render(data: unknown, env: RenderEnvironment, limits?: Partial<RenderLimits>): string
}

export const defaultRenderLimits: RenderLimits = { maxOutput: 1_048_576, maxSteps: 1_000_000, maxMillis: 2_000 }

const eta = new Eta({ autoEscape: false, autoTrim: false, autoFilter: false, useWith: false, varName: 'it', cache: false, rmWhitespace: false, debug: false })

const rootType = typeOfSchema(TemplateContextSchema, 'Context')

interface Value {
  code: string
  type: Type
}

interface Scope {
  dot: Value
  variables: Map<number, Value>
}

const listElement = (type: Type): Type => (type.kind === 'list' ? type.element : ANY)

/** Static result types where the checker can follow a value through a function. */
const resultType = (name: string, args: readonly Value[]): Type => {
  const [first] = args
  switch (name) {
    case 'index':
      return args.length === 2 && first !== undefined ? listElement(first.type) : ANY
    case 'first':
    case 'last':
      return first === undefined ? ANY : listElement(first.type)
    case 'rest':
    case 'initial':
    case 'reverse':
    case 'compact':
    case 'uniq':
      return first?.type ?? ANY
    default:
      return ANY
  }
}

class Generator {
  private readonly literals: unknown[] = []
  private readonly sites: Site[] = []
  private readonly out: string[] = []
  private temporaries = 0

  constructor(variableCount: number) {
    this.variableNames = Array.from({ length: variableCount }, (_, id) => `v${id}`)
  }

  private readonly variableNames: string[]

  generate(nodes: Node[]): { etaSource: string; literals: unknown[]; sites: Site[] } {
    // `$` (v0) is a variable Go lets a template assign; the dot stays the data.
    this.exec('const r = it.r, k = it.k, data = it.d; let v0 = data;')
    this.list(nodes, { dot: { code: 'data', type: rootType }, variables: new Map([[0, { code: 'v0', type: rootType }]]) })
    return { etaSource: this.out.join(''), literals: this.literals, sites: this.sites }
  }

  private exec(code: string): void {
    this.out.push(`<% ${code} %>`)
  }

  private print(code: string): void {
    this.out.push(`<%~ ${code} %>`)
  }

  private literal(value: unknown): string {
    this.literals.push(value)
    return `k[${this.literals.length - 1}]`
  }

  private site(site: Site): number {
    this.sites.push(site)
    return this.sites.length - 1
  }

  private temporary(prefix: string): string {
    return `${prefix}${this.temporaries++}`
  }

  private list(nodes: Node[], scope: Scope): void {
    const inner: Scope = { dot: scope.dot, variables: new Map(scope.variables) }
    for (const node of nodes) this.node(node, inner)
  }

  private node(node: Node, scope: Scope): void {
    switch (node.kind) {
      case 'text':
        this.literals.push(node.text)
        this.print(`r.text(${this.literals.length - 1})`)
        return
      case 'action': {
        const value = this.pipeline(node.pipe, scope)
        const [variable] = node.pipe.variables
        if (variable === undefined) {
          this.print(`r.out(${value.code}, ${this.site({ position: node.position })})`)
          return
        }
        this.exec(`${this.bind(variable.id, value, node.pipe.isAssign, scope)};`)
        return
      }
      case 'if':
      case 'with':
        return this.conditional(node.kind, node.pipe, node.list, node.elseList, scope)
      case 'range':
        return this.range(node.pipe, node.list, node.elseList, node.position, scope)
      case 'break':
        this.exec('break;')
        return
      case 'continue':
        this.exec('continue;')
        return
      default: {
        const _never: never = node
        return _never
      }
    }
  }

  /** `let vN = …` for a declaration, `vN = …` for an assignment (which widens the variable's type). */
  private bind(id: number, value: Value, isAssign: boolean, scope: Scope): string {
    const name = this.variableNames[id] ?? `v${id}`
    scope.variables.set(id, { code: name, type: isAssign ? ANY : value.type })
    return `${isAssign ? '' : 'let '}${name} = ${value.code}`
  }

  private conditional(kind: 'if' | 'with', pipe: Pipeline, list: Node[], elseList: Node[] | null, scope: Scope): void {
    const inner: Scope = { dot: scope.dot, variables: new Map(scope.variables) }
    const value = this.pipeline(pipe, inner)
    const condition = this.temporary('c')
    const [variable] = pipe.variables
    const declaration = variable === undefined ? '' : `${this.bind(variable.id, value, pipe.isAssign, inner)}; `
    const current = variable === undefined ? value.code : (this.variableNames[variable.id] ?? '')
    this.exec(`{ ${declaration}const ${condition} = ${current}; if (r.truth(${condition})) {`)
    const bodyScope: Scope = kind === 'with' ? { dot: { code: condition, type: value.type }, variables: inner.variables } : inner
    this.list(list, bodyScope)
    if (elseList !== null) {
      this.exec('} else {')
      this.list(elseList, inner)
    }
    this.exec('} }')
  }

  private range(pipe: Pipeline, list: Node[], elseList: Node[] | null, position: Position, scope: Scope): void {
    const inner: Scope = { dot: scope.dot, variables: new Map(scope.variables) }
    const collection = this.pipeline(pipe, inner)
    const { type } = collection
    if (type.kind === 'struct' || (type.kind === 'scalar' && type.name !== 'number')) {
      throw new TemplateSyntaxError(`range can't iterate over ${describeType(type)}`, position)
    }
    const element: Type = type.kind === 'list' ? type.element : type.kind === 'scalar' ? type : ANY
    const site = this.site({ position })
    const items = this.temporary('s')
    const index = this.temporary('i')
    const dot = this.temporary('d')
    const key = `(${items}.keys === null ? ${index} : ${items}.keys[${index}])`
    const value = `(${items}.elements === null ? ${index} : ${items}.elements[${index}])`
    const variables = pipe.variables
    const bindings = variables.length === 2
      ? [this.bind(variables[0]?.id ?? 0, { code: key, type: type.kind === 'list' ? { kind: 'scalar', name: 'number' } : ANY }, pipe.isAssign, inner),
        this.bind(variables[1]?.id ?? 0, { code: value, type: element }, pipe.isAssign, inner)]
      : variables.map((v) => this.bind(v.id, { code: value, type: element }, pipe.isAssign, inner))
    this.exec(`{ const ${items} = r.iter(${collection.code}, ${site}, ${variables.length}); if (${items}.length > 0) { for (let ${index} = 0; ${index} < ${items}.length; ${index}++) { r.step(${site}); ${bindings.map((b) => `${b}; `).join('')}const ${dot} = ${value};`)
    this.list(list, { dot: { code: dot, type: element }, variables: inner.variables })
    this.exec('} }')
    if (elseList !== null) {
      this.exec('else {')
      this.list(elseList, inner)
      this.exec('}')
    }
    this.exec('}')
  }

  private pipeline(pipe: Pipeline, scope: Scope): Value {
    let value: Value | null = null
    for (const command of pipe.commands) value = this.command(command, scope, value)
    if (value === null) throw new TemplateSyntaxError('missing value for command', pipe.position)
    return value
  }

  private command(command: Command, scope: Scope, piped: Value | null): Value {
    const [head, ...rest] = command.args
    if (head === undefined) throw new TemplateSyntaxError('empty command', command.position)
    if (head.kind !== 'function') return this.operand(head, scope)
    const args = rest.map((arg) => this.operand(arg, scope))
    if (piped !== null) args.push(piped)
    return this.call(head.name, args, head.position)
  }

  private call(name: string, args: Value[], position: Position): Value {
    const fn = templateFunctions.get(name)
    if (fn === undefined || !isTemplateFunction(name)) throw new TemplateSyntaxError(`function "${name}" not defined`, position)
    const [min, max] = fn.arity
    if (args.length < min || args.length > max) {
      const want = min === max ? `${min}` : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min} to ${max}`
      throw new TemplateSyntaxError(`wrong number of args for ${name}: want ${want} got ${args.length}`, position)
    }
    const site = this.site({ position, name })
    const code = name === 'and' || name === 'or'
      ? `r.${name}(${site}, [${args.map((a) => `() => ${a.code}`).join(', ')}])`
      : `r.call(${site}, [${args.map((a) => a.code).join(', ')}])`
    return { code, type: resultType(name, args) }
  }

  private operand(operand: Operand, scope: Scope): Value {
    switch (operand.kind) {
      case 'dot':
        return scope.dot
      case 'field':
        return this.chain(scope.dot, operand.names, operand.position, describe(operand))
      case 'variable': {
        const variable = scope.variables.get(operand.variable.id)
        if (variable === undefined) throw new TemplateSyntaxError(`undefined variable "${operand.variable.name}"`, operand.position)
        return operand.names.length === 0 ? variable : this.chain(variable, operand.names, operand.position, describe(operand))
      }
      case 'function':
        return this.call(operand.name, [], operand.position)
      case 'string':
        return { code: this.literal(operand.value), type: { kind: 'scalar', name: 'string' } }
      case 'number':
        return { code: this.literal(operand.value), type: { kind: 'scalar', name: 'number' } }
      case 'bool':
        return { code: operand.value ? 'true' : 'false', type: { kind: 'scalar', name: 'bool' } }
      case 'nil':
        return { code: 'null', type: ANY }
      case 'pipeline': {
        const inner = this.pipeline(operand.pipe, scope)
        const value = { code: `(${inner.code})`, type: inner.type }
        return operand.names.length === 0 ? value : this.chain(value, operand.names, operand.position, describe(operand))
      }
      default: {
        const _never: never = operand
        return _never
      }
    }
  }

  private chain(base: Value, names: readonly string[], position: Position, label: string): Value {
    let type = base.type
    for (const name of names) {
      const field = fieldType(type, name)
      if ('error' in field) throw new TemplateSyntaxError(field.error, position)
      type = field.type
    }
    return { code: `r.field(${base.code}, ${this.site({ position, names, label })})`, type }
  }
}

const compileUncached = (source: string): CompiledTemplate => {
  const parsed = parseTemplate(source, { isFunction: isTemplateFunction })
  const { etaSource, literals, sites } = new Generator(parsed.variableCount).generate(parsed.nodes)
  const fn = eta.compile(etaSource)
  const frozenLiterals = Object.freeze([...literals])
  return {
    source,
    etaSource,
    fromWebhook: fromWebhookReferences(parsed.nodes),
    render(data, env, limits = {}) {
      const runtime = new RenderRuntime(frozenLiterals, sites, env, { ...defaultRenderLimits, ...limits })
      try {
        return eta.render(fn, { r: runtime, k: frozenLiterals, d: data })
      } catch (error) {
        throw runtime.failure(error)
      }
    },
  }
}

/**
 * Compiled templates by text. A compiled template holds about thirty times its
 * text in heap (the generated source, the function, one site per action), so
 * the cache is bounded by that estimate as well as by count: 2,000 templates
 * of 64 KiB would otherwise keep about 3.7 GiB.
 */
const CACHED_BYTES_PER_CHARACTER = 32
const cache = new LRUCache<string, CompiledTemplate>({
  max: 2000, maxSize: 128 * 1024 * 1024, sizeCalculation: (_compiled, source) => Math.max(1, source.length * CACHED_BYTES_PER_CHARACTER),
})

/** Parses, checks and compiles a template (cached by its text); throws TemplateSyntaxError with line and column. */
export const compileTemplate = (source: string): CompiledTemplate => {
  const cached = cache.get(source)
  if (cached !== undefined) return cached
  const compiled = compileUncached(source)
  cache.set(source, compiled)
  return compiled
}

/** How many compiled templates the cache holds (for tests and metrics). */
export const compiledTemplateCount = (): number => cache.size
