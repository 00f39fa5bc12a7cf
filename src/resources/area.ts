import type { Server } from 'node:http';
import type { Config } from '../config';
import type { ObjectType } from '../kernel/expand';
import type { Deps, JobWorker, Reconcile, Route, Schedule } from '../kernel/route';
import type { VersionChange } from '../kernel/versions';
import type { RequestChange } from '../kernel/requestVersions';
import type { HostedPage } from '../hosted/pages';
import type { QueueDefinition } from '../lib/queue';

/**
 * What an area of the public API (src/resources/<area>/index.ts) declares to the registry
 * (src/resources/index.ts): the API process mounts its routes, objects and pages; the worker
 * process runs its workers, reconcilers and schedules.
 */
export interface Area {
  readonly name: string;
  readonly routes: readonly Route[];
  /** The object registry's entries, by object type: expandable fields, and how to retrieve one by id. */
  readonly objects: Readonly<Record<string, ObjectType>>;
  /** Expandable fields it gives other areas' object types, by type (billing's `subscriptions` of a customer). */
  readonly objectFields?: Readonly<Record<string, ObjectType['expandable']>>;
  /** HTML pages a browser opens from links this area returns, mounted under /hosted. */
  readonly pages?: readonly HostedPage[];
  /** Websockets this area serves on the API's HTTP server (the Stripe CLI's); answers their closer. */
  readonly sockets?: (server: Server, deps: Deps) => { close(): void };
  /** Queues it runs with workers of its own (events' batched fan-out and delivery), for depth metrics. */
  readonly queues?: readonly QueueDefinition<any>[];
  /** The consumers of its queues, which the worker process runs. */
  readonly workers?: readonly JobWorker<any>[];
  /** Re-add its due jobs from the database after Redis lost them. */
  readonly reconcilers?: readonly Reconcile[];
  /**
   * Re-add jobs a client is waiting on (a forward's pickup deadline): run first in every pass,
   * before the fan-outs and the other reconcilers, so a backlog after a flush or a kill can't use up the wait.
   */
  readonly reconcileFirst?: readonly Reconcile[];
  /** Its periodic work, run by the maintenance queue. */
  readonly schedules?: readonly Schedule[];
  /** How its objects differ at older API versions. */
  readonly versionChanges?: readonly VersionChange[];
  /** The parameters its operations took at older versions, mapped onto today's. */
  readonly requestChanges?: readonly RequestChange[];
  /** Component schemas of the OpenAPI document whose one list lives in its code. */
  readonly schemas?: Readonly<Record<string, unknown>>;
  /** Checks its own settings as a process starts; throws a ConfigError that stops start-up. */
  readonly checkConfig?: (config: Config) => void;
}

/** Object types that only declare expandable fields (nothing names them by id). */
export const expandableOnly = (byType: Readonly<Record<string, ObjectType['expandable']>>): Record<string, ObjectType> =>
  Object.fromEntries(Object.entries(byType).map(([type, expandable]) => [type, { expandable }]));
