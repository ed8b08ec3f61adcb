import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions, Logger } from 'pino'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/**
 * A request's logger that becomes a pino child (the request id bound) only
 * when something is logged at an enabled level. Fastify makes one for every
 * request; at the usual `warn` level most requests log nothing, and binding a
 * child's fields is a cost on every request otherwise.
 */
class RequestLogger implements FastifyBaseLogger {
  private child_: Logger | undefined

  constructor(private readonly root: Logger, private readonly bindings: Bindings) {}

  private get logger(): Logger {
    this.child_ ??= this.root.child(this.bindings)
    return this.child_
  }

  get level(): string {
    return (this.child_ ?? this.root).level
  }

  set level(level: string) {
    this.logger.level = level
  }

  private log(level: Level, args: unknown[]): void {
    if (!(this.child_ ?? this.root).isLevelEnabled(level)) return
    const logger = this.logger
    Reflect.apply(logger[level], logger, args)
  }

  fatal(...args: unknown[]): void { this.log('fatal', args) }
  error(...args: unknown[]): void { this.log('error', args) }
  warn(...args: unknown[]): void { this.log('warn', args) }
  info(...args: unknown[]): void { this.log('info', args) }
  debug(...args: unknown[]): void { this.log('debug', args) }
  trace(...args: unknown[]): void { this.log('trace', args) }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options)
  }
}

const isPino = (logger: FastifyBaseLogger): logger is Logger => 'isLevelEnabled' in logger && typeof logger.isLevelEnabled === 'function'

/**
 * Fastify's childLoggerFactory: requests get a lazy RequestLogger over the
 * application's pino logger; a route with its own log level or serializers
 * gets an ordinary child.
 */
export const requestLoggerFactory = (logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger =>
  isPino(logger) && options.level === undefined && options.serializers === undefined
    ? new RequestLogger(logger, bindings)
    : logger.child(bindings, options)
