import { newTestKey, startTestApp, type TestApp } from '../helpers/app';
import { documentedOperations } from '../helpers/responseSchemas';
import { pinVersion, scenarios, useApp } from '../helpers/responseScenarios';
import { hasSdkType, sdkTypeProblems, type SdkPackage } from '../helpers/sdkTypes';

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

/**
 * Members an older major's types declare that the public API did not show at that major's version
 * either: stripe-node later corrected its types, naming no API version for the change (the API's
 * behaviour did not change, so no version change undoes it). Each is one package, one path.
 */
export const SDK_TYPE_ERRATA: readonly { readonly pkgs: readonly SdkPackage[]; readonly problem: RegExp; readonly why: string }[] = [
  {
    pkgs: ['stripe-v8', 'stripe-v11', 'stripe-v14'],
    problem: /(<identity\.verification_(report|session)>|<event>\.data\.object).*\.(document\.(dob|expiration_date|number)|id_number\.(dob|id_number)|verified_outputs(\.(dob|id_number))?) is missing$/,
    why:
      'stripe-node 15.5.0 (2024-05-02): "Fix properties incorrectly marked as required in the OpenAPI spec": the report\'s document.dob, ' +
      'expiration_date, number, id_number.dob, id_number.id_number and the session\'s verified_outputs (dob, id_number) are shown only when expanded.',
  },
  {
    pkgs: ['stripe-v11', 'stripe-v14'],
    problem: /<(apps\.secret|event)>\.(data\.object\.)?payload is missing$/,
    why: 'stripe-node 15.5.0, the same correction: Apps.Secret.payload is shown only when expanded.',
  },
  {
    pkgs: ['stripe-v8', 'stripe-v11', 'stripe-v14'],
    problem: /<(account|event)>\.(data\.object\.)?settings\.bacs_debit_payments\.display_name is null; the SDK type is string \| undefined$/,
    why: 'stripe-node 14.5.0 (2023-11-16, pinning 2023-10-16 still): Account.settings.bacs_debit_payments.display_name typed string | null.',
  },
  {
    pkgs: ['stripe-v14'],
    problem: /<forwarding\.request>\.config is missing$/,
    why: 'stripe-node 15.2.0 (2024-04-16): config removed from Forwarding.Request, "no longer used by the Forwarding Request API" (at every version).',
  },
  {
    pkgs: ['stripe-v14', 'stripe-v15'],
    problem: /<(person|account|event)>\.(data\.object\.)?(individual\.)?additional_tos_acceptances\.account is null; the SDK type is Account$/,
    why:
      'Person.additional_tos_acceptances.account is typed non-null by stripe-node 14 and 15 and nullable by 17, with no API version or ' +
      'changelog entry for the change: a person who accepted nothing has null there at every version.',
  },
];

const isErratum = (pkg: SdkPackage, problem: string): boolean => SDK_TYPE_ERRATA.some((e) => e.pkgs.includes(pkg) && e.problem.test(problem));

let t: TestApp;
beforeAll(async () => {
  t = useApp(await startTestApp());
});
afterAll(() => t.close());

const operations = documentedOperations().filter((o) => scenarios[o.operationId]);

describe.each(MAJORS)('%s (%s)', (pkg, version) => {
  afterEach(() => pinVersion(undefined));
  test.each(operations.map((o) => [o.operationId]))(`%s: what it answers at ${version} has every member ${pkg}'s types declare`, async (operationId) => {
    pinVersion(version);
    const answers = await scenarios[operationId](newTestKey());
    const problems = answers.flatMap((a) =>
      sdkTypeProblems(a.body, pkg)
        .filter((p) => !/the SDK has no type for objects "([^"]+)"/.test(p) || hasSdkType(/"([^"]+)"/.exec(p)![1], pkg))
        .filter((p) => !isErratum(pkg, p))
        .map((p) => `${a.label}: ${p}`),
    );
    expect(problems).toEqual([]);
  });
});
