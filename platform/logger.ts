/** Structured JSON logging (pino). Secrets never reach a log line: see `redact`. */
import pino, { type Logger, type DestinationStream } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'archaudit' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['req.headers.authorization', 'authorization', 'token', '*.token', 'secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
