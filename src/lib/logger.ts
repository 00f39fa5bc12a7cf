import pino, { type Logger, type DestinationStream } from 'pino';

export type { Logger };

/** Structured JSON logs. Credentials are never passed to the logger; redaction is a second guard. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'sandbank' },
      redact: {
        paths: ['authorization', 'headers.authorization', 'req.headers.authorization', '*.secret', '*.payload', '*.client_secret'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
