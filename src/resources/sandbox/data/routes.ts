import { route } from '../../../kernel/route';
import { OBJECT } from './serializer';
import { resetData } from './service';

export const routes = [route('delete', '/sandbox/v1/data', 'DeleteSandboxData', { object: OBJECT }, resetData)];
