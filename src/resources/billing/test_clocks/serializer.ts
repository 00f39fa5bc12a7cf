import type { TestClock } from '../../../generated/prisma/client';
import type { ExpandableFields } from '../../../kernel/expand';

export const OBJECT = 'test_helpers.test_clock';

export type TestClockRow = Omit<TestClock, 'seq' | 'accountId'>;

export function serializeTestClock(row: TestClockRow) {
  return {
    id: row.id,
    object: OBJECT,
    created: row.created,
    deletes_after: row.deletesAfter,
    frozen_time: row.frozenTime,
    livemode: false,
    name: row.name,
    status: row.status,
    status_details: row.status === 'advancing' && row.targetFrozenTime !== null ? { advancing: { target_frozen_time: row.targetFrozenTime } } : {},
  };
}

export const serializeDeletedTestClock = (id: string) => ({ id, object: OBJECT, deleted: true as const });

export const expandable: ExpandableFields = {};
