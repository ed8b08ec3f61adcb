import { TemplateSyntaxError, type Position } from './errors.js'

/**
 * The lexer of Go's text/template (a port of text/template/parse/lex.go):
 * text outside `{{ }}`, and inside actions the tokens of its grammar, each
 * with its line and column. `{{-` and `-}}` trim the surrounding spaces.
 */
export type TokenType =
  | 'text' | 'leftDelim' | 'rightDelim' | 'comment'
  | 'space' | 'field' | 'variable' | 'identifier' | 'keyword'
  | 'string' | 'rawString' | 'number' | 'char' | 'bool' | 'nil' | 'dot'
  | 'pipe' | 'declare' | 'assign' | 'comma' | 'leftParen' | 'rightParen' | 'eof'

export interface Token {
  type: TokenType
  /** The token's text; for strings the decoded value is `value`. */
  text: string
  value?: string
  position: Position
}

export const keywords = new Set(['block', 'break', 'continue', 'define', 'else', 'end', 'if', 'range', 'template', 'with'])

const LEFT = '{{'
const RIGHT = '}}'
const TRIM_MARKER = '-'
const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\r' || c === '\n'
const isAlphaNumeric = (c: string | undefined) => c !== undefined && /[\p{L}\p{Nd}_]/u.test(c)

const MAX_CODE_POINT = 0x10ffff
/** Go's octal escapes are one byte: \377 at most. */
const MAX_OCTAL_ESCAPE = 0o377

/** Decodes a Go interpreted string literal (the escapes strconv.Unquote accepts). */
const unquote = (raw: string, position: Position): string => {
  let out = ''
  for (let i = 1; i < raw.length - 1; i++) {
    const c = raw[i] ?? ''
    if (c !== '\\') {
      out += c
      continue
    }
    const next = raw[++i] ?? ''
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', '"': '"', "'": "'", a: '\x07', b: '\b', f: '\f', v: '\v' }
    const mapped = simple[next]
    if (mapped !== undefined) {
      out += mapped
      continue
    }
    const hexLength = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0
    if (hexLength > 0) {
      const hex = raw.slice(i + 1, i + 1 + hexLength)
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== hexLength) throw new TemplateSyntaxError(`invalid escape \\${next}${hex} in string`, position)
      const code = Number.parseInt(hex, 16)
      if (code > MAX_CODE_POINT) throw new TemplateSyntaxError(`escape \\${next}${hex} is not a Unicode code point (above U+10FFFF)`, position)
      out += String.fromCodePoint(code)
      i += hexLength
      continue
    }
    if (/[0-7]/.test(next)) {
      const octal = raw.slice(i, i + 3)
      if (!/^[0-7]{3}$/.test(octal)) throw new TemplateSyntaxError(`invalid octal escape \\${octal} in string`, position)
      const code = Number.parseInt(octal, 8)
      if (code > MAX_OCTAL_ESCAPE) throw new TemplateSyntaxError(`octal escape \\${octal} is above \\377`, position)
      out += String.fromCharCode(code)
      i += 2
      continue
    }
    throw new TemplateSyntaxError(`unknown escape sequence \\${next} in string`, position)
  }
  return out
}

export class Lexer {
  private pos = 0
  private start = 0
  private line = 1
  private lineStart = 0
  private startLine = 1
  private startColumn = 1
  private parenDepth = 0
  private readonly tokens: Token[] = []

  constructor(private readonly input: string) {}

  /** All tokens of the template, ending with `eof`; throws a TemplateSyntaxError with line and column. */
  static tokenize(input: string): Token[] {
    const lexer = new Lexer(input)
    lexer.run()
    return lexer.tokens
  }

  private here(): Position {
    return { line: this.line, column: this.pos - this.lineStart + 1 }
  }

  private mark(): void {
    this.start = this.pos
    this.startLine = this.line
    this.startColumn = this.pos - this.lineStart + 1
  }

  private advance(count = 1): void {
    for (let i = 0; i < count; i++) {
      if (this.input[this.pos] === '\n') {
        this.line++
        this.lineStart = this.pos + 1
      }
      this.pos++
    }
  }

  private emit(type: TokenType, extra: Partial<Token> = {}): void {
    this.tokens.push({ type, text: this.input.slice(this.start, this.pos), position: { line: this.startLine, column: this.startColumn }, ...extra })
    this.mark()
  }

  private fail(message: string, position: Position = this.here()): never {
    throw new TemplateSyntaxError(message, position)
  }

  private run(): void {
    while (this.lexText()) this.lexAction()
    this.mark()
    this.emit('eof')
  }

  /** Text up to the next `{{`; returns false at the end of input. */
  private lexText(): boolean {
    const next = this.input.indexOf(LEFT, this.pos)
    const end = next < 0 ? this.input.length : next
    let textEnd = end
    if (next >= 0 && this.input.startsWith(`${LEFT}${TRIM_MARKER}`, next) && isSpace(this.input[next + LEFT.length + 1])) {
      while (textEnd > this.pos && isSpace(this.input[textEnd - 1])) textEnd--
    }
    if (textEnd > this.pos) {
      this.advance(textEnd - this.pos)
      this.emit('text')
    }
    this.advance(end - this.pos)
    this.mark()
    return next >= 0
  }

  private lexAction(): void {
    const trimLeft = this.input.startsWith(`${LEFT}${TRIM_MARKER}`, this.pos) && isSpace(this.input[this.pos + LEFT.length + 1])
    this.advance(LEFT.length + (trimLeft ? TRIM_MARKER.length : 0))
    this.emit('leftDelim')
    if (this.input.startsWith('/*', this.pos) || (trimLeft && /^\s*\/\*/.test(this.input.slice(this.pos)))) {
      this.lexComment()
      return
    }
    this.parenDepth = 0
    for (;;) {
      if (this.atRightDelim()) {
        if (this.parenDepth > 0) this.fail('unclosed left parenthesis')
        this.lexRightDelim()
        return
      }
      if (this.pos >= this.input.length) this.fail('unclosed action', { line: this.startLine, column: this.startColumn })
      this.lexInsideAction()
    }
  }

  private atRightDelim(): boolean {
    if (this.input.startsWith(RIGHT, this.pos)) return true
    return this.pos > 0 && isSpace(this.input[this.pos - 1]) && this.input.startsWith(`${TRIM_MARKER}${RIGHT}`, this.pos)
  }

  private lexRightDelim(): void {
    const trim = this.input.startsWith(TRIM_MARKER, this.pos)
    this.advance((trim ? TRIM_MARKER.length : 0) + RIGHT.length)
    this.emit('rightDelim')
    if (trim) {
      while (this.pos < this.input.length && isSpace(this.input[this.pos])) this.advance()
      this.mark()
    }
  }

  /** `/* ... *\/` right after the left delimiter, then the right delimiter (`}}` or ` -}}`). */
  private lexComment(): void {
    while (isSpace(this.input[this.pos])) this.advance()
    const close = this.input.indexOf('*/', this.pos + 2)
    if (close < 0) this.fail('unclosed comment')
    this.advance(close + 2 - this.pos)
    this.emit('comment')
    if (this.input.startsWith(` ${TRIM_MARKER}${RIGHT}`, this.pos)) {
      this.advance()
      this.mark()
    }
    if (!this.atRightDelim()) this.fail('comment ends before closing delimiter')
    this.lexRightDelim()
  }

  private lexInsideAction(): void {
    const c = this.input[this.pos] ?? ''
    if (isSpace(c)) {
      while (isSpace(this.input[this.pos]) && !this.atRightDelim()) this.advance()
      this.emit('space')
      return
    }
    if (c === '=') {
      this.advance()
      this.emit('assign')
      return
    }
    if (c === ':') {
      if (this.input[this.pos + 1] !== '=') this.fail('expected :=')
      this.advance(2)
      this.emit('declare')
      return
    }
    if (c === '|') {
      this.advance()
      this.emit('pipe')
      return
    }
    if (c === ',') {
      this.advance()
      this.emit('comma')
      return
    }
    if (c === '"') return this.lexQuote()
    if (c === '`') return this.lexRawQuote()
    if (c === "'") return this.lexChar()
    if (c === '$') return this.lexVariable()
    if (c === '.') {
      const after = this.input[this.pos + 1]
      if (after === undefined || !/[0-9]/.test(after)) return this.lexField()
    }
    if (c === '+' || c === '-' || /[0-9.]/.test(c)) return this.lexNumber()
    if (isAlphaNumeric(c)) return this.lexIdentifier()
    if (c === '(') {
      this.advance()
      this.parenDepth++
      this.emit('leftParen')
      return
    }
    if (c === ')') {
      this.advance()
      this.parenDepth--
      if (this.parenDepth < 0) this.fail('unexpected right paren')
      this.emit('rightParen')
      return
    }
    this.fail(`unrecognized character in action: ${JSON.stringify(c)}`)
  }

  private lexQuote(): void {
    this.advance()
    for (;;) {
      const c = this.input[this.pos]
      if (c === '\\') {
        this.advance(2)
        continue
      }
      if (c === undefined || c === '\n') this.fail('unterminated quoted string', { line: this.startLine, column: this.startColumn })
      this.advance()
      if (c === '"') break
    }
    const text = this.input.slice(this.start, this.pos)
    this.emit('string', { value: unquote(text, { line: this.startLine, column: this.startColumn }) })
  }

  private lexRawQuote(): void {
    const close = this.input.indexOf('`', this.pos + 1)
    if (close < 0) this.fail('unterminated raw quoted string', { line: this.startLine, column: this.startColumn })
    this.advance(close + 1 - this.pos)
    const text = this.input.slice(this.start, this.pos)
    this.emit('rawString', { value: text.slice(1, -1) })
  }

  private lexChar(): void {
    this.fail('character constants are not supported; use a string')
  }

  private lexVariable(): void {
    this.advance()
    while (isAlphaNumeric(this.input[this.pos])) this.advance()
    this.emit('variable')
    this.lexFieldChainAfterTerm()
  }

  private lexField(): void {
    this.advance()
    if (!isAlphaNumeric(this.input[this.pos])) {
      this.emit('dot')
      return
    }
    while (isAlphaNumeric(this.input[this.pos])) this.advance()
    this.emit('field')
    this.lexFieldChainAfterTerm()
  }

  /** `.A.B` right after a term: each link a field token (spaces end the chain). */
  private lexFieldChainAfterTerm(): void {
    while (this.input[this.pos] === '.' && isAlphaNumeric(this.input[this.pos + 1])) {
      this.advance()
      while (isAlphaNumeric(this.input[this.pos])) this.advance()
      this.emit('field')
    }
  }

  private lexIdentifier(): void {
    while (isAlphaNumeric(this.input[this.pos])) this.advance()
    const word = this.input.slice(this.start, this.pos)
    if (keywords.has(word)) this.emit('keyword')
    else if (word === 'true' || word === 'false') this.emit('bool')
    else if (word === 'nil') this.emit('nil')
    else this.emit('identifier')
    if (!keywords.has(word)) this.lexFieldChainAfterTerm()
  }

  private lexNumber(): void {
    const rest = this.input.slice(this.pos)
    const match = /^[+-]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d+)?)/.exec(rest)
    const text = match?.[0] ?? ''
    if (text === '' || /^[+-]$/.test(text)) this.fail(`bad number syntax: ${JSON.stringify(rest.slice(0, 10))}`)
    this.advance(text.length)
    const after = this.input[this.pos]
    if (after === 'i') this.fail('complex numbers are not supported')
    if (isAlphaNumeric(after) || after === '.') this.fail(`bad number syntax: ${JSON.stringify(this.input.slice(this.start, this.pos + 1))}`)
    this.emit('number')
  }
}
