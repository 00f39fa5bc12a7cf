import { expandableOnly, type Area } from '../area';
import * as accounts from './accounts/routes';
import * as accountSerializer from './accounts/serializer';
import { retrieveAccountObject } from './accounts/service';
import * as capabilities from './capabilities/routes';
import * as capabilitySerializer from './capabilities/serializer';
import * as externalAccounts from './external_accounts/routes';
import * as externalAccountSerializer from './external_accounts/serializer';
import * as persons from './persons/routes';
import * as personSerializer from './persons/serializer';
import * as loginLinks from './login_links/routes';
import * as loginLinkSerializer from './login_links/serializer';
import * as accountLinks from './account_links/routes';
import * as accountLinkSerializer from './account_links/serializer';
import * as accountSessions from './account_sessions/routes';
import * as accountSessionSerializer from './account_sessions/serializer';
import { versionChanges } from './versions';

// Connect: accounts and what hangs off them (capabilities, external accounts, persons, login
// links), account links (the hosted onboarding) and account sessions.
//
// Inside, everything leans on accounts: capabilities, external accounts and persons live in the
// account's `details` (accounts/details.ts holds its shape), and their writes go through the
// accounts service's `editAccount`. The account's serializer shows persons and external accounts
// inside the account, so it imports theirs; they import only accounts/details.ts. Login links
// reuse account links' page tokens. No other area is imported.

export const area: Area = {
  name: 'connect',
  routes: [
    ...accounts.routes,
    ...capabilities.routes,
    ...externalAccounts.routes,
    ...persons.routes,
    ...accountSessions.routes,
    ...accountLinks.routes,
    ...loginLinks.routes,
  ],
  objects: {
    [accountSerializer.OBJECT]: { expandable: accountSerializer.expandable, retrieve: retrieveAccountObject },
    ...expandableOnly({
    [capabilitySerializer.OBJECT]: capabilitySerializer.expandable,
    [externalAccountSerializer.BANK_ACCOUNT_OBJECT]: externalAccountSerializer.expandable,
    [externalAccountSerializer.CARD_OBJECT]: externalAccountSerializer.expandable,
    [personSerializer.OBJECT]: personSerializer.expandable,
    [accountSessionSerializer.OBJECT]: accountSessionSerializer.expandable,
    [accountSessionSerializer.CLAIM_OBJECT]: accountSessionSerializer.expandable,
    [accountLinkSerializer.OBJECT]: accountLinkSerializer.expandable,
    [loginLinkSerializer.OBJECT]: loginLinkSerializer.expandable,
    }),
  },
  pages: [...accountLinks.pages, ...loginLinks.pages],
  versionChanges,
  schemas: {
    account_capabilities_param: accountSerializer.capabilitiesParamSchema,
    account_session_components_param: accountSessionSerializer.componentsParamSchema,
    account_session_components: accountSessionSerializer.componentsSchema,
  },
};
