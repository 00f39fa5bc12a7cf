import { isJsonObject, type VersionChange } from '../../kernel/versions';

// Its objects' changes between API versions (see src/kernel/versions.ts for how they render, and
// docs/versions.md for the whole table). Serializers write the newest shape; each change here is
// undone, newest first, for a request or an event at an older version.

export const versionChanges: readonly VersionChange[] = [
  {
    version: '2017-05-25',
    object: 'event',
    description: "An event's `request` becomes `{id, idempotency_key}`; before, it was the request's id.",
    downgrade: (event) => (isJsonObject(event.request) ? { ...event, request: event.request.id ?? null } : event),
  },
];
