import { isJsonObject, type VersionChange } from '../../kernel/versions';

// Its objects' changes between API versions (see src/kernel/versions.ts for how they render, and
// docs/versions.md for the whole table). Serializers write the newest shape; each change here is
// undone, newest first, for a request or an event at an older version.
//
// Not here: 2025-11-17.clover made a session's `client_secret` nullable (omitted for hosted
// sessions); before it, every session showed its secret. Sandbank keeps only a hash of the secret,
// so a retrieved session has none to show at any version (docs/versions.md).

export const versionChanges: readonly VersionChange[] = [
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
