'use strict';
// What a statement does to a transaction, for counting round trips and commits (bench/pgcount.js,
// and the tests that count a request's: test/helpers/postgresCounts.ts).

// INSERT/UPDATE/DELETE/MERGE anywhere (CTEs, ON CONFLICT, SELECT … FOR UPDATE) or a share lock:
// each makes PostgreSQL assign a transaction id and flush the commit.
const WRITES = /\b(INSERT|UPDATE|DELETE|MERGE)\b|\bFOR\s+(KEY\s+)?SHARE\b/i;
const kinds = new Map();
/** 'begin' | 'commit' | 'rollback' | 'write' | 'read', cached by text: the same texts repeat. */
function kindOf(text) {
  let kind = kinds.get(text);
  if (kind !== undefined) return kind;
  const head = text.trimStart().slice(0, 20).toUpperCase();
  if (head.startsWith('BEGIN') || head.startsWith('START TRANSACTION')) kind = 'begin';
  else if (head.startsWith('COMMIT') || head.startsWith('END')) kind = 'commit';
  else if (head.startsWith('ROLLBACK') && !/^ROLLBACK\s+TO\b/.test(head)) kind = 'rollback';
  else kind = WRITES.test(text) ? 'write' : 'read';
  if (kinds.size > 5000) kinds.clear();
  kinds.set(text, kind);
  return kind;
}

module.exports = { kindOf };
