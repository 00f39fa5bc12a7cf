import { route } from '../../../kernel/route';
import { hostedPage } from '../../../hosted/pages';
import { REPORT_OBJECT, SESSION_OBJECT } from './serializer';
import {
  cancelSession,
  createSession,
  HOSTED_PATH,
  listReports,
  listSessions,
  redactSession,
  retrieveReport,
  retrieveSession,
  submitSession,
  updateSession,
} from './service';
import { showVerificationPage, submitVerificationPage } from './pages';

const session = { object: SESSION_OBJECT };
const sessions = { object: SESSION_OBJECT, list: true };
const report = { object: REPORT_OBJECT };
const reports = { object: REPORT_OBJECT, list: true };
// Responses that hand out a url and client secret: their idempotent copies are sealed.
const secret = { responseHasSecret: true };

const VS = '/v1/identity/verification_sessions';

export const routes = [
  route('get', VS, 'GetIdentityVerificationSessions', sessions, listSessions),
  route('post', VS, 'PostIdentityVerificationSessions', session, createSession, secret),
  route('get', `${VS}/{session}`, 'GetIdentityVerificationSessionsSession', session, retrieveSession),
  route('post', `${VS}/{session}`, 'PostIdentityVerificationSessionsSession', session, updateSession, secret),
  route('post', `${VS}/{session}/cancel`, 'PostIdentityVerificationSessionsSessionCancel', session, cancelSession),
  route('post', `${VS}/{session}/redact`, 'PostIdentityVerificationSessionsSessionRedact', session, redactSession),
  route('post', `/sandbox${VS}/{session}/submit`, 'PostSandboxIdentityVerificationSessionsSessionSubmit', session, submitSession),
  route('get', '/v1/identity/verification_reports', 'GetIdentityVerificationReports', reports, listReports),
  route('get', '/v1/identity/verification_reports/{report}', 'GetIdentityVerificationReportsReport', report, retrieveReport),
];

export const pages = [
  hostedPage('get', `${HOSTED_PATH}/:token`, showVerificationPage),
  hostedPage('post', `${HOSTED_PATH}/:token`, submitVerificationPage),
];
