import { expandableOnly, type Area } from '../area';
import * as financialConnections from './accounts/routes';
import * as financialConnectionsSerializer from './accounts/serializer';
import { fcLinkPrune, financialConnectionsWorker, reconcileFinancialConnectionsJobs } from './accounts/pipeline';
import { versionChanges } from './versions';
import { requestChanges } from './requestVersions';

// Financial Connections: sessions and the hosted bank-link flow, the accounts they link, their
// owners and transactions; the worker refreshes, subscribes and deactivates. No other area is imported.

export const area: Area = {
  name: 'financial_connections',
  routes: financialConnections.routes,
  objects: expandableOnly(financialConnectionsSerializer.expandable),
  pages: financialConnections.pages,
  workers: [financialConnectionsWorker],
  reconcilers: [reconcileFinancialConnectionsJobs],
  schedules: [fcLinkPrune],
  versionChanges,
  requestChanges,
};
