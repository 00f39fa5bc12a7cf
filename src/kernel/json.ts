/**
 * An answer's body: indented with two spaces, as the public API's are (scripts grep them). V8's
 * own indenting (no replacer) costs about what the compact form does; the bytes grow by a fifth.
 * Stored idempotent answers are kept in the same form, so a replay is the same bytes.
 */
export const answerJson = (value: unknown): string => JSON.stringify(value, null, 2);
