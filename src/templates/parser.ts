import type { Command, Node, Operand, Pipeline, VariableRef } from './ast.js'
import { TemplateSyntaxError, type Position } from './errors.js'
import { Lexer, type Token } from './lexer.js'

/**
 * The parser of Go's text/template grammar (after text/template/parse/parse.go):
 * text, actions, if / else if / else, range (with `$i, $e :=`), with / else
 * with, break, continue, variables, pipelines, parenthesized pipelines and
 * field chains. What the grammar of a webhook template does not allow is a
 * TemplateSyntaxError with line and column: `define`, `template` and `block`
 * (a webhook template is one template), functions outside the allow-list,
 * undeclared variables, arguments given to something that is not a function,
 * and field names that only exist in JavaScript (`constructor`, `__proto__`…).
 */
export interface ParseOptions {
  isFunction(name: string): boolean
}

export interface ParsedTemplate {
  nodes: Node[]
  /** Number of variable ids handed out; `$` is id 0. */
  variableCount: number
}

type Terminator = { kind: 'end' | 'eof'; token: Token } | { kind: 'else'; token: Token; chained: 'if' | 'with' | null }

/**
 * Deepest nesting of blocks (if, with, range, each `else if`), parenthesized
 * pipelines and pipeline stages (each command after a `|` takes the ones
 * before it as an argument, one call inside the next in the generated code).
 * Every stage after the parser walks the tree recursively, and a few thousand
 * levels, well inside a template's length limit, overflowed the stack of the
 * compiler.
 */
export const MAX_TEMPLATE_NESTING = 100

const forbiddenFieldNames = new Set(['constructor', 'prototype', '__proto__'])

export const isForbiddenFieldName = (name: string): boolean => forbiddenFieldNames.has(name) || name.startsWith('__')

export const parseTemplate = (source: string, options: ParseOptions): ParsedTemplate => new Parser(Lexer.tokenize(source), options).parse()

class Parser {
  private index = 0
  private readonly scope: VariableRef[] = [{ name: '$', id: 0, position: { line: 1, column: 1 } }]
  private nextVariableId = 1
  private rangeDepth = 0
  private nesting = 0

  constructor(private readonly tokens: Token[], private readonly options: ParseOptions) {}

  parse(): ParsedTemplate {
    const { list, terminator } = this.itemList()
    if (terminator.kind !== 'eof') this.fail(`unexpected {{${terminator.kind}}}`, terminator.token.position)
    return { nodes: list, variableCount: this.nextVariableId }
  }

  private fail(message: string, position: Position): never {
    throw new TemplateSyntaxError(message, position)
  }

  private next(): Token {
    const token = this.tokens[this.index] ?? this.tokens[this.tokens.length - 1]
    if (token === undefined) throw new Error('lexer produced no tokens')
    if (this.index < this.tokens.length - 1) this.index++
    return token
  }

  private peek(): Token {
    const token = this.tokens[this.index] ?? this.tokens[this.tokens.length - 1]
    if (token === undefined) throw new Error('lexer produced no tokens')
    return token
  }

  private backup(): void {
    this.index--
  }

  private nextNonSpace(): Token {
    let token = this.next()
    while (token.type === 'space') token = this.next()
    return token
  }

  private peekNonSpace(): Token {
    const token = this.nextNonSpace()
    this.backup()
    return token
  }

  private expect(type: Token['type'], context: string): Token {
    const token = this.nextNonSpace()
    if (token.type !== type) this.unexpected(token, context)
    return token
  }

  private unexpected(token: Token, context: string): never {
    const what = token.type === 'eof' ? 'EOF' : token.type === 'rightDelim' ? '"}}"' : JSON.stringify(token.text)
    this.fail(`unexpected ${what} in ${context}`, token.position)
  }

  /** Nodes up to `{{end}}`, `{{else}}` or the end of the input. */
  private itemList(): { list: Node[]; terminator: Terminator } {
    const list: Node[] = []
    for (;;) {
      const token = this.next()
      if (token.type === 'eof') return { list, terminator: { kind: 'eof', token } }
      if (token.type === 'text') {
        list.push({ kind: 'text', text: token.text, position: token.position })
        continue
      }
      if (token.type !== 'leftDelim') this.unexpected(token, 'template')
      if (this.peek().type === 'comment') {
        this.next()
        this.expect('rightDelim', 'comment')
        continue
      }
      const keyword = this.peekNonSpace()
      if (keyword.type === 'keyword') {
        this.nextNonSpace()
        if (keyword.text === 'end') {
          this.expect('rightDelim', 'end')
          return { list, terminator: { kind: 'end', token: keyword } }
        }
        if (keyword.text === 'else') {
          const after = this.peekNonSpace()
          if (after.type === 'keyword' && (after.text === 'if' || after.text === 'with')) {
            this.nextNonSpace()
            return { list, terminator: { kind: 'else', token: keyword, chained: after.text } }
          }
          this.expect('rightDelim', 'else')
          return { list, terminator: { kind: 'else', token: keyword, chained: null } }
        }
        list.push(this.keywordAction(keyword))
        continue
      }
      const pipe = this.pipeline('command', 'rightDelim')
      list.push({ kind: 'action', pipe, position: keyword.position })
    }
  }

  private keywordAction(keyword: Token): Node {
    switch (keyword.text) {
      case 'if':
      case 'with':
        return this.control(keyword.text, keyword.position)
      case 'range':
        return this.control('range', keyword.position)
      case 'break':
      case 'continue':
        if (this.rangeDepth === 0) this.fail(`{{${keyword.text}}} outside {{range}}`, keyword.position)
        this.expect('rightDelim', keyword.text)
        return { kind: keyword.text, position: keyword.position }
      case 'define':
      case 'template':
      case 'block':
        return this.fail(`{{${keyword.text}}} is not supported: a webhook template is a single template`, keyword.position)
      default:
        return this.fail(`unexpected keyword ${keyword.text}`, keyword.position)
    }
  }

  private nested<T>(position: Position, parse: () => T): T {
    this.deeper(position)
    const result = parse()
    this.nesting--
    return result
  }

  private deeper(position: Position): void {
    if (++this.nesting > MAX_TEMPLATE_NESTING) this.fail(`nested deeper than ${MAX_TEMPLATE_NESTING} levels`, position)
  }

  /** if / with / range: the pipeline, the list, and an else list (possibly a chained `else if` / `else with`). */
  private control(kind: 'if' | 'with' | 'range', position: Position): Node {
    return this.nested(position, () => this.block(kind, position))
  }

  private block(kind: 'if' | 'with' | 'range', position: Position): Node {
    const depth = this.scope.length
    const pipe = this.pipeline(kind, 'rightDelim')
    if (pipe.commands.length === 0) this.fail(`missing value for ${kind}`, position)
    if (kind === 'range') this.rangeDepth++
    const { list, terminator } = this.itemList()
    if (kind === 'range') this.rangeDepth--
    this.scope.length = depth + (pipe.isAssign ? 0 : pipe.variables.length)
    let elseList: Node[] | null = null
    if (terminator.kind === 'eof') this.fail(`unexpected EOF: {{${kind}}} has no {{end}}`, position)
    if (terminator.kind === 'else') {
      if (terminator.chained !== null) {
        if (kind === 'range' || (terminator.chained === 'with' && kind !== 'with') || (terminator.chained === 'if' && kind !== 'if')) {
          this.fail(`{{else ${terminator.chained}}} is not allowed in {{${kind}}}`, terminator.token.position)
        }
        elseList = [this.control(terminator.chained, terminator.token.position)]
      } else {
        const rest = this.itemList()
        if (rest.terminator.kind !== 'end') {
          this.fail(rest.terminator.kind === 'eof' ? `unexpected EOF: {{${kind}}} has no {{end}}` : 'expected {{end}}; found {{else}}', rest.terminator.token.position)
        }
        elseList = rest.list
      }
    }
    this.scope.length = depth
    return { kind, pipe, list, elseList, position }
  }

  private declare(token: Token): VariableRef {
    const variable = { name: token.text, id: this.nextVariableId++, position: token.position }
    this.scope.push(variable)
    return variable
  }

  private lookup(token: Token): VariableRef {
    for (let i = this.scope.length - 1; i >= 0; i--) {
      const variable = this.scope[i]
      if (variable?.name === token.text) return { ...variable, position: token.position }
    }
    return this.fail(`undefined variable "${token.text}"`, token.position)
  }

  /** `[decl] command ('|' command)*` up to `end` (a right delimiter or parenthesis). */
  private pipeline(context: 'if' | 'with' | 'range' | 'command' | 'parenthesized pipeline', end: 'rightDelim' | 'rightParen'): Pipeline {
    const start = this.peekNonSpace()
    const pipe: Pipeline = { isAssign: false, variables: [], commands: [], position: start.position }
    if (start.type === 'variable') this.declarations(pipe, context)
    const outer = this.nesting
    let afterPipe = false
    for (;;) {
      const token = this.nextNonSpace()
      if (token.type === end) {
        if (afterPipe) this.fail('missing command after |', token.position)
        this.checkPipeline(pipe, token, context)
        this.nesting = outer
        return pipe
      }
      if (token.type === 'eof' || token.type === 'rightDelim' || token.type === 'rightParen') this.unexpected(token, context)
      if (pipe.commands.length > 0) this.deeper(token.position)
      this.backup()
      const { command, piped } = this.command(end)
      pipe.commands.push(command)
      afterPipe = piped
    }
  }

  private declarations(pipe: Pipeline, context: string): void {
    const mark = this.index
    const first = this.nextNonSpace()
    const operator = this.nextNonSpace()
    if (operator.type === 'declare' || operator.type === 'assign') {
      pipe.isAssign = operator.type === 'assign'
      pipe.variables.push(pipe.isAssign ? this.lookup(first) : this.declare(first))
      if (context === 'parenthesized pipeline') this.fail('variables cannot be declared or assigned inside parentheses', first.position)
      return
    }
    if (operator.type === 'comma' && context === 'range') {
      const second = this.expect('variable', 'range declaration')
      const op = this.nextNonSpace()
      if (op.type !== 'declare' && op.type !== 'assign') this.unexpected(op, 'range declaration')
      pipe.isAssign = op.type === 'assign'
      const resolve = (token: Token) => (pipe.isAssign ? this.lookup(token) : this.declare(token))
      pipe.variables.push(resolve(first), resolve(second))
      return
    }
    if (operator.type === 'comma') this.fail(`too many declarations in ${context}`, operator.position)
    this.index = mark
  }

  private checkPipeline(pipe: Pipeline, endToken: Token, context: string): void {
    if (pipe.commands.length === 0) {
      if (pipe.variables.length > 0) this.fail('missing value for declaration', endToken.position)
      if (endToken.type === 'rightParen') this.fail('missing value in parentheses', endToken.position)
      this.fail(`missing value for ${context}`, endToken.position)
    }
    pipe.commands.forEach((command, stage) => {
      const [head] = command.args
      if (head === undefined) return
      if (head.kind === 'nil' && command.args.length === 1) this.fail('nil is not a command', head.position)
      if (head.kind !== 'function' && (command.args.length > 1 || stage > 0)) {
        this.fail(`can't give argument to non-function ${describe(head)}`, command.args[1]?.position ?? head.position)
      }
    })
  }

  private command(end: 'rightDelim' | 'rightParen'): { command: Command; piped: boolean } {
    const args: Operand[] = []
    const position = this.peekNonSpace().position
    let piped = false
    for (;;) {
      this.skipSpace()
      const operand = this.operand()
      if (operand === null) this.unexpected(this.peek(), 'operand')
      args.push(operand)
      const token = this.next()
      if (token.type === 'space') {
        const after = this.peekNonSpace()
        if (after.type === 'pipe') {
          this.nextNonSpace()
          piped = true
          break
        }
        if (after.type === end || after.type === 'eof' || after.type === 'rightDelim' || after.type === 'rightParen') break
        continue
      }
      if (token.type === 'pipe') {
        piped = true
        break
      }
      if (token.type === 'rightDelim' || token.type === 'rightParen') {
        this.backup()
        break
      }
      this.unexpected(token, 'operand')
    }
    return { command: { args, position }, piped }
  }

  private skipSpace(): void {
    while (this.peek().type === 'space') this.next()
  }

  private operand(): Operand | null {
    const term = this.term()
    if (term === null) return null
    if (this.peek().type !== 'field') return term
    const names: string[] = []
    while (this.peek().type === 'field') names.push(this.fieldName(this.next()))
    switch (term.kind) {
      case 'field':
      case 'variable':
      case 'pipeline':
        return { ...term, names: [...term.names, ...names] }
      case 'function':
        return this.fail(`unexpected field after function ${term.name}`, term.position)
      default:
        return this.fail(`unexpected . after term ${describe(term)}`, term.position)
    }
  }

  private fieldName(token: Token): string {
    const name = token.text.slice(1)
    if (isForbiddenFieldName(name)) this.fail(`field name "${name}" is not allowed: templates read data, not JavaScript objects`, token.position)
    return name
  }

  private term(): Operand | null {
    const token = this.next()
    const position = token.position
    switch (token.type) {
      case 'identifier':
        if (!this.options.isFunction(token.text)) this.fail(`function "${token.text}" not defined`, position)
        return { kind: 'function', name: token.text, position }
      case 'dot':
        return { kind: 'dot', position }
      case 'nil':
        return { kind: 'nil', position }
      case 'variable':
        return { kind: 'variable', variable: this.lookup(token), names: [], position }
      case 'field':
        return { kind: 'field', names: [this.fieldName(token)], position }
      case 'bool':
        return { kind: 'bool', value: token.text === 'true', position }
      case 'number':
        return { kind: 'number', value: parseNumber(token), text: token.text, position }
      case 'string':
      case 'rawString':
        return { kind: 'string', value: token.value ?? '', position }
      case 'leftParen': {
        const pipe = this.nested(position, () => this.pipeline('parenthesized pipeline', 'rightParen'))
        return { kind: 'pipeline', pipe, names: [], position }
      }
      case 'keyword':
        return this.fail(`unexpected keyword ${token.text} in operand`, position)
      default:
        this.backup()
        return null
    }
  }
}

/** An integer written with a leading 0 and no base prefix, which Go reads in octal (`017` is 15). */
const LEGACY_OCTAL = /^0[0-9]+$/

const parseNumber = (token: Token): number => {
  const negative = token.text.startsWith('-')
  const digits = token.text.replace(/^[+-]/, '').replace(/_/g, '')
  let value: number
  if (LEGACY_OCTAL.test(digits)) {
    // As Go: `09` is neither an octal integer nor (having no point or exponent) a float.
    if (!/^[0-7]+$/.test(digits)) throw new TemplateSyntaxError(`bad number syntax: ${token.text} (a leading 0 makes an octal integer)`, token.position)
    value = Number.parseInt(digits, 8)
  } else value = Number(digits.endsWith('.') ? digits.slice(0, -1) : digits)
  if (!Number.isFinite(value)) throw new TemplateSyntaxError(`bad number syntax: ${token.text}`, token.position)
  return negative ? -value : value
}

export const describe = (operand: Operand): string => {
  switch (operand.kind) {
    case 'dot': return '.'
    case 'field': return `.${operand.names.join('.')}`
    case 'variable': return [operand.variable.name, ...operand.names].join('.')
    case 'function': return operand.name
    case 'string': return JSON.stringify(operand.value)
    case 'number': return operand.text
    case 'bool': return String(operand.value)
    case 'nil': return 'nil'
    case 'pipeline': return `(…)${operand.names.map((n) => `.${n}`).join('')}`
    default: {
      const _never: never = operand
      return _never
    }
  }
}
