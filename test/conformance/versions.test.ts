import { newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { documentedOperations } from '../helpers/responseSchemas';
import { pinVersion, REMOVED_AT, scenarios, useApp } from '../helpers/responseScenarios';
import { releaseSdkTypes, sdkVersionProblems, type SdkPackage } from '../helpers/sdkTypes';

// Every operation's successful responses at the version each older major of the stripe package
// pins, checked against that major's own types: what an integration on that SDK reads is there.
// An object that major has no type for postdates it and is not checked.

export const MAJORS: readonly (readonly [SdkPackage, string])[] = [
  ['stripe-v8', '2020-08-27'],
  ['stripe-v11', '2022-11-15'],
  ['stripe-v14', '2023-10-16'],
  ['stripe-v15', '2024-04-10'],
  ['stripe-v17', '2025-02-24.acacia'],
  ['stripe-v18', '2025-08-27.basil'],
];


let t: TestApp;
beforeAll(async () => {
  t = useApp(await startTestApp());
});
afterAll(() => t.close());

const operations = documentedOperations().filter((o) => scenarios[o.operationId]);

describe.each(MAJORS)('%s (%s)', (pkg, version) => {
  afterEach(() => pinVersion(undefined));
  // One major's types in memory at a time (each is a TypeScript program of a few hundred MB).
  afterAll(() => releaseSdkTypes(pkg));
  // An operation removed at or before the major's version has no answer there to check.
  const live = operations.filter((o) => !(REMOVED_AT[o.operationId] && version.slice(0, 10) >= REMOVED_AT[o.operationId]));
  test.each(live.map((o) => [o.operationId]))(`%s: what it answers at ${version} has every member ${pkg}'s types declare`, async (operationId) => {
    pinVersion(version);
    const answers = await scenarios[operationId](newTestKey());
    const problems = answers.flatMap((a) =>
      sdkVersionProblems(a.body, pkg).map((p) => `${a.label}: ${p}`),
    );
    expect(problems).toEqual([]);
  });
});
