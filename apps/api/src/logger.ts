import type { LoggerService } from '@nestjs/common';
import pino, { Logger } from 'pino';

/** JSON logs; credentials are redacted wherever they could appear. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ['req.headers["x-api-key"]', 'req.headers["x-zoom-connector-token"]', 'req.headers["x-slack-signature"]', 'req.headers.authorization', 'req.headers.cookie', '*.password', '*.token', '*.apiKey', '*.api_key', '*.client_secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}

/** Routes Nest's own messages into the same JSON log. */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: Logger) {}
  log(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  error(message: unknown, trace?: string, context?: string) {
    this.logger.error({ context, trace }, String(message));
  }
  warn(message: unknown, context?: string) {
    this.logger.warn({ context }, String(message));
  }
  debug(message: unknown, context?: string) {
    this.logger.debug({ context }, String(message));
  }
  verbose(message: unknown, context?: string) {
    this.logger.trace({ context }, String(message));
  }
}
