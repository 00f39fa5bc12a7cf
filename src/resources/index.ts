import type { Config } from '../config';
import type { ObjectType } from '../kernel/expand';
import type { JobWorker, Reconcile, Route, Schedule } from '../kernel/route';
import { VersionRenderer, type VersionChange } from '../kernel/versions';
import { RequestUpgrader, type RequestChange } from '../kernel/requestVersions';
import type { HostedPage } from '../hosted/pages';
import type { QueueDefinition } from '../lib/queue';
import type { Area } from './area';
import { area as webhooks } from './webhooks';
import { area as connect } from './connect';
import { area as apps } from './apps';
import { area as identity } from './identity';
import { area as sandbox } from './sandbox';
import { area as payments, useCustomerDiscounts } from './payments';
import { area as billing, customerDiscounts } from './billing';
import { area as forwarding } from './forwarding';
import { area as financialConnections } from './financial_connections';

// The registry: every area of the public API, and what the processes take from them. app.ts
// mounts the routes, objects and pages; the worker process runs the workers, reconcilers and
// schedules. An area declares itself in its own index.ts.

// Customers (payments) show and take a discount whose coupons are billing's.
useCustomerDiscounts(customerDiscounts);

export const areas: readonly Area[] = [webhooks, connect, apps, identity, sandbox, payments, billing, forwarding, financialConnections];

export const routes: readonly Route[] = areas.flatMap((a) => a.routes);

/** The object registry's entries: each object type's expandable fields and retrieve (see src/kernel/expand.ts). */
export const objectTypes: readonly (readonly [string, ObjectType])[] = areas.flatMap((a) => Object.entries(a.objects));

/** Expandable fields areas give each other's object types (registered after every type). */
export const objectFields: readonly (readonly [string, ObjectType['expandable']])[] = areas.flatMap((a) => Object.entries(a.objectFields ?? {}));

export const pages: readonly HostedPage[] = areas.flatMap((a) => a.pages ?? []);
export const sockets = areas.flatMap((a) => (a.sockets ? [a.sockets] : []));

/** Every queue of every area. */
export const queueDefinitions: readonly QueueDefinition<any>[] = areas.flatMap((a) => [...(a.queues ?? []), ...(a.workers ?? []).map((w) => w.queue)]);

/** Every area's workers, reconcilers and schedules, for the worker process. */
export const jobWorkers: readonly JobWorker<any>[] = areas.flatMap((a) => a.workers ?? []);
export const reconcilers: readonly Reconcile[] = areas.flatMap((a) => a.reconcilers ?? []);
/** The ones a waiting client needs soonest: each pass runs them before anything else. */
export const firstReconcilers: readonly Reconcile[] = areas.flatMap((a) => a.reconcileFirst ?? []);
export const schedules: readonly Schedule[] = areas.flatMap((a) => a.schedules ?? []);

/** The one table of differences between API versions, from every area's changes; `deps.versions`. */
export const versionChanges: readonly VersionChange[] = areas.flatMap((a) => a.versionChanges ?? []);
export const versions = new VersionRenderer(versionChanges);

/** Every area's request parameters at older versions, which the kernel maps onto today's before validation. */
export const requestChanges: readonly RequestChange[] = areas.flatMap((a) => a.requestChanges ?? []);
export const requestUpgrader = new RequestUpgrader(requestChanges);

/** Component schemas whose one list lives in code; the OpenAPI document takes them from here. */
export const generatedSchemas: Readonly<Record<string, unknown>> = Object.assign({}, ...areas.map((a) => a.schemas ?? {}));

/** Each area's check of its own settings; a process runs them as it starts (a bad one stops it). */
export function checkConfig(config: Config): void {
  for (const area of areas) area.checkConfig?.(config);
}
