// The first connection to PostgreSQL is where a fresh machine fails: nothing listening, a wrong
// host, a server that wants a password. Those become one line (what was tried, what to do)
// instead of a driver's stack trace.

/** The URL as it was tried, without its password. */
export function redactedDatabaseUrl(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return '(DATABASE_URL is not a valid URL)';
  }
}

function codeOf(err: unknown): string | undefined {
  if (err instanceof AggregateError && err.errors.length > 0) return codeOf(err.errors[0]);
  return typeof err === 'object' && err !== null && 'code' in err ? String((err as { code: unknown }).code) : undefined;
}

function messageOf(err: unknown): string {
  if (err instanceof AggregateError && !err.message) return err.errors.map(messageOf).join('; ');
  return err instanceof Error ? err.message : String(err);
}

/**
 * One line for a connection failure we can explain, or undefined for anything else (a failed
 * migration, say, which says what it is itself).
 */
export function explainDatabaseError(err: unknown, databaseUrl: string): string | undefined {
  const tried = redactedDatabaseUrl(databaseUrl);
  const code = codeOf(err);
  const message = messageOf(err);
  let host = '';
  try {
    const url = new URL(databaseUrl);
    host = url.hostname;
  } catch {
    return undefined;
  }
  if (code === 'ECONNREFUSED' || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || /timeout/i.test(message)) {
    return `No PostgreSQL answers at ${tried} (${code ?? message}). Start PostgreSQL there, or set DATABASE_URL to one that runs.`;
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return `Cannot resolve the PostgreSQL host "${host}" of ${tried}. Fix the host in DATABASE_URL.`;
  }
  if (/client password must be a string/.test(message)) {
    return `PostgreSQL at ${tried} wants a password and DATABASE_URL has none. Put it in DATABASE_URL (postgresql://user:password@host:port/database).`;
  }
  if (code === '28P01') {
    return `PostgreSQL at ${tried} refused the password (${message}). Fix the password in DATABASE_URL.`;
  }
  if (code === '28000') {
    return `PostgreSQL at ${tried} refused the connection (${message}). Allow this user and host in pg_hba.conf, or set DATABASE_URL to another user.`;
  }
  if (code === '3D000') {
    return `The database of ${tried} does not exist and this user can't create it (${message}). Create it, or give the user CREATEDB.`;
  }
  return undefined;
}
