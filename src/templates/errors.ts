/** 1-based line and column in the template text. */
export interface Position {
  line: number
  column: number
}

/** A template the parser or checker refuses: reported at create/update time with where it went wrong. */
export class TemplateSyntaxError extends Error {
  constructor(readonly reason: string, readonly position: Position) {
    super(`${position.line}:${position.column}: ${reason}`)
    this.name = 'TemplateSyntaxError'
  }
}

/** A failure while rendering (a nil field, an index out of range, a budget exceeded…): the send fails with it. */
export class TemplateExecutionError extends Error {
  constructor(readonly reason: string, readonly position: Position | null) {
    super(position === null ? reason : `${position.line}:${position.column}: ${reason}`)
    this.name = 'TemplateExecutionError'
  }
}
