import type { RequestContext } from '../../../kernel/route';
import { invalidRequest, resourceMissing } from '../../../kernel/errors';
import { paginateItems } from '../../../kernel/list';
import { hasIdShape, newId } from '../../../lib/ids';
import {
  checkEmail,
  checkHolderMayChange,
  editAccount,
  findReadable,
  merge,
  nextSeq,
  refuseToken,
  type LockedAccount,
} from '../accounts/service';
import type { AccountDetails, AccountRow, PersonRecord } from '../accounts/details';
import { personRequirementsOf } from '../accounts/serializer';
import { personsOf, RELATIONSHIPS, serializeDeletedPerson, serializePerson } from './serializer';

// Persons of a connected account: the people behind its legal entity (representative, owners,
// directors, executives …). They are kept in the account's details, so writes lock the account
// and report person.created / updated / deleted with the account's own changes.

const NAME = 'person';

/** The person as answered, from the account as written. */
const answerFor = (id: string) => (row: AccountRow) => {
  const record = personsOf(row).find((p) => p.id === id)!;
  return serializePerson(row, record, personRequirementsOf(row, record));
};

const findPerson = (row: AccountRow, id: string): PersonRecord => {
  const record = hasIdShape('person', id) ? personsOf(row).find((p) => p.id === id) : undefined;
  if (!record) throw resourceMissing(NAME, id);
  return record;
};

/** The posted members, without the request's own parameters. */
function personParams(params: Record<string, any>): Record<string, any> {
  const { expand: _expand, person_token: _token, ...rest } = params;
  return rest;
}

function checkPersonWrite(locked: LockedAccount, params: Record<string, any>): void {
  refuseToken(params, 'person_token');
  checkEmail(params.email, 'email');
  checkHolderMayChange(locked.row, locked.onboardingStarted, 'the persons of this account');
}

/** There is one representative: making a person it makes every other person not it. */
function keepOneRepresentative(details: AccountDetails, representative: string): void {
  if (details.individual && details.individual_id !== representative) {
    details.individual.relationship = { ...(details.individual.relationship ?? {}), representative: false };
  }
  for (const p of details.persons ?? []) {
    if (p.id !== representative && p.relationship?.representative === true) p.relationship = { ...p.relationship, representative: false };
  }
}

/**
 * Applies posted person members to a person of `details` (a new one when `id` is undefined) and
 * returns its id. Shared with the onboarding page, which gives the representative's details.
 */
export function applyPerson(details: AccountDetails, id: string | undefined, params: Record<string, any>, now: number): string {
  if (id !== undefined && id === details.individual_id) {
    details.individual = merge(details.individual, params);
  } else if (id !== undefined) {
    const persons = details.persons ?? [];
    const at = persons.findIndex((p) => p.id === id);
    const { id: _id, created, seq, ...current } = persons[at];
    persons[at] = { ...merge(current, params), id, created, seq };
  } else {
    id = newId('person');
    const record: PersonRecord = { ...merge({}, params), id, created: now, seq: nextSeq(details) };
    details.persons = [...(details.persons ?? []), record];
  }
  if (params.relationship?.representative === true) keepOneRepresentative(details, id);
  return id;
}

/** POST /v1/accounts/{account}/persons */
export async function createPerson(ctx: RequestContext) {
  return editAccount(ctx, (locked, details, now) => {
    checkPersonWrite(locked, ctx.params);
    const id = applyPerson(details, undefined, personParams(ctx.params), now);
    return { details, answer: answerFor(id) };
  });
}

/** GET /v1/accounts/{account}/persons: newest first, optionally only those with (or without) given relationships. */
export async function listPersons(ctx: RequestContext) {
  const row = await findReadable(ctx, ctx.pathParams.account);
  const filter = (ctx.params.relationship ?? {}) as Record<string, boolean>;
  const persons = personsOf(row)
    .filter((p) => RELATIONSHIPS.every((r) => filter[r] === undefined || (p.relationship?.[r] === true) === filter[r]))
    .sort((a, b) => b.seq - a.seq);
  return paginateItems({
    params: ctx.params,
    url: `/v1/accounts/${row.id}/persons`,
    items: persons,
    objectName: NAME,
    serialize: (p) => serializePerson(row, p, personRequirementsOf(row, p)),
  });
}

/** GET /v1/accounts/{account}/persons/{person} */
export async function retrievePerson(ctx: RequestContext) {
  const row = await findReadable(ctx, ctx.pathParams.account);
  const record = findPerson(row, ctx.pathParams.person);
  return serializePerson(row, record, personRequirementsOf(row, record));
}

/** POST /v1/accounts/{account}/persons/{person} */
export async function updatePerson(ctx: RequestContext) {
  const id = ctx.pathParams.person;
  return editAccount(ctx, (locked, details, now) => {
    findPerson(locked.row, id);
    checkPersonWrite(locked, ctx.params);
    applyPerson(details, id, personParams(ctx.params), now);
    return { details, answer: answerFor(id), individualChanged: id === details.individual_id };
  });
}

/** DELETE /v1/accounts/{account}/persons/{person}: any person but the representative (and the account's individual). */
export async function deletePerson(ctx: RequestContext) {
  const id = ctx.pathParams.person;
  return editAccount(ctx, (locked, details) => {
    const record = findPerson(locked.row, id);
    checkHolderMayChange(locked.row, locked.onboardingStarted, 'the persons of this account');
    if (id === details.individual_id) {
      throw invalidRequest(`You cannot delete ${id}: it is the account's individual. Change the account's \`individual\` instead.`);
    }
    if (record.relationship?.representative === true) {
      throw invalidRequest(
        `You cannot delete ${id}: it is the account's representative. Make another person the representative ` +
          '(relationship[representative]=true), then delete this one.',
      );
    }
    details.persons = (details.persons ?? []).filter((p) => p.id !== id);
    return { details, answer: () => serializeDeletedPerson(id) };
  });
}
