import { isJsonObject, type VersionChange } from '../../kernel/versions';
import { lastClientSecretKey } from './accounts/serializer';

// Its objects' changes between API versions (see src/kernel/versions.ts for how they render, and
// docs/versions.md for the whole table). Serializers write the newest shape; each change here is
// undone, newest first, for a request or an event at an older version.

export const versionChanges: readonly VersionChange[] = [
  {
    version: '2025-11-17.clover',
    object: 'financial_connections.session',
    description:
      "Makes a session's `client_secret` nullable: a finished session no longer shows one. Before, every session showed its " +
      'secret (here the last one it was given, kept sealed; a session made before Sandbank kept it shows null).',
    downgrade: (session, _newest, embedded) => {
      if (session.client_secret !== null || typeof session.id !== 'string') return session;
      const last = embedded[lastClientSecretKey(session.id)];
      return typeof last === 'string' ? { ...session, client_secret: last } : session;
    },
  },
  {
    version: '2026-09-30.endive',
    object: 'financial_connections.session',
    description:
      "Renames a session's `filters.countries` (an array, of which only the first element was used) to `filters.country`, a single country code.",
    downgrade: (session) => {
      if (!isJsonObject(session.filters)) return session;
      const { country, ...filters } = session.filters;
      if (country === undefined) return session;
      const countries = filters.countries !== undefined ? filters.countries : typeof country === 'string' ? [country] : null;
      return { ...session, filters: { ...filters, countries } };
    },
  },
];
