import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, loadConfig, settings, type Config } from '../src/config';

// The typed config, and the two documents that follow `settings` (both checked here): .env.example
// line for line, and the configuration table (docs/configuration.md) row for row.

const root = path.join(__dirname, '..');
const names = Object.keys(settings) as (keyof typeof settings)[];

interface Entry {
  name: string;
  value: string;
  commentedOut: boolean;
  comments: string[];
}

/** .env.example as blocks separated by blank lines: comment lines, then one `NAME=value` (maybe commented out). */
function readEnvExample(): Entry[] {
  const text = readFileSync(path.join(root, '.env.example'), 'utf8');
  const entries: Entry[] = [];
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((l) => l.trim() !== '');
    const assignments = lines.filter((l) => /^(#\s*)?[A-Z][A-Z0-9_]*=/.test(l));
    if (assignments.length === 0) continue; // the header
    expect(assignments).toHaveLength(1);
    const last = lines[lines.length - 1];
    expect(last).toBe(assignments[0]);
    const match = /^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(last)!;
    entries.push({
      name: match[2],
      value: match[3],
      commentedOut: match[1] !== undefined,
      comments: lines.slice(0, -1).map((l) => l.replace(/^#\s?/, '')),
    });
  }
  return entries;
}

/** The Config field a setting fills: its name in camelCase (PUBLIC_URL → publicUrl). */
const field = (name: string): keyof Config =>
  name.toLowerCase().replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase()) as keyof Config;

describe('.env.example', () => {
  const entries = readEnvExample();

  test('lists exactly the settings, in their order', () => {
    expect(entries.map((e) => e.name)).toEqual(names);
  });

  test('gives every setting its default and its meaning', () => {
    for (const entry of entries) {
      const [fallback, meaning] = settings[entry.name as keyof typeof settings];
      expect({ name: entry.name, value: entry.value }).toEqual({ name: entry.name, value: fallback });
      expect({ name: entry.name, meaning: entry.comments[0] }).toEqual({ name: entry.name, meaning });
    }
  });

  test('only leaves commented out what has no literal default', () => {
    // PUBLIC_URL's default is derived from PORT; every other line is live and equal to the default.
    expect(entries.filter((e) => e.commentedOut).map((e) => e.name)).toEqual(['PUBLIC_URL']);
  });

  test('its live lines load to exactly the defaults', () => {
    const env = Object.fromEntries(entries.filter((e) => !e.commentedOut).map((e) => [e.name, e.value]));
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });
});

describe('the configuration table in docs/configuration.md', () => {
  /** The table's rows: name, default as shown, meaning. */
  function readTable(): { name: string; shown: string; meaning: string }[] {
    const lines = readFileSync(path.join(root, 'docs', 'configuration.md'), 'utf8').split('\n');
    const start = lines.indexOf('| Variable | Default | Meaning |');
    expect(start).toBeGreaterThan(-1);
    const rows: { name: string; shown: string; meaning: string }[] = [];
    for (const line of lines.slice(start + 2)) {
      if (!line.startsWith('|')) break;
      const [name, shown, meaning] = line.slice(1, -1).split(' | ').map((cell) => cell.trim());
      rows.push({ name: name.replace(/^`|`$/g, ''), shown, meaning });
    }
    return rows;
  }

  test('lists exactly the settings, in their order, each with its default and meaning', () => {
    const rows = readTable();
    expect(rows.map((r) => r.name)).toEqual(names);
    for (const row of rows) {
      const [fallback, meaning] = settings[row.name as keyof typeof settings];
      expect(row).toEqual({ name: row.name, shown: fallback === '' ? '(empty)' : `\`${fallback}\``, meaning });
    }
  });
});

describe('loadConfig', () => {
  test('gives the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 12111,
      databaseUrl: 'postgresql://postgres@127.0.0.1:5432/sandbank',
      redisUrl: 'redis://127.0.0.1:6379',
      publicUrl: 'http://localhost:12111',
      authMode: 'open',
      // Off the network and unlimited unless told otherwise.
      host: '127.0.0.1',
      apiRateLimit: 0,
      resendRateLimit: 0,
    });
    expect(loadConfig({ HOST: '::' }).host).toBe('::');
    expect(loadConfig({ HOST: 'sandbank.internal' }).host).toBe('sandbank.internal');
  });

  test('has one field per setting, named after it, each equal to the default in `settings`', () => {
    const config = loadConfig({});
    expect(Object.keys(config).sort()).toEqual(names.map(field).sort());
    for (const name of names) {
      if (name === 'PUBLIC_URL') continue; // derived, checked below
      // Lists (WEBHOOK_RETRY_SCHEDULE, say) print back as their comma-separated default.
      expect({ name, value: String(config[field(name)]) }).toEqual({ name, value: settings[name][0] });
    }
    expect(settings.PUBLIC_URL[0].replace('<PORT>', settings.PORT[0])).toBe(config.publicUrl);
  });

  test('PUBLIC_URL follows PORT when unset, and wins when set', () => {
    expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PORT: '8080', PUBLIC_URL: '' }).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PORT: '8080', PUBLIC_URL: 'https://sandbank.example.test/' }).publicUrl).toBe('https://sandbank.example.test');
  });

  test('reads the values it is given', () => {
    const config = loadConfig({
      PORT: '3000',
      DATABASE_URL: 'postgres://u:p@db:5433/other',
      REDIS_URL: 'rediss://cache:6380',
      AUTH_MODE: 'registered',
      QUEUE_PREFIX: 'sb1',
      MAX_WEBHOOK_ENDPOINTS: '3',
      HOST: '0.0.0.0',
      API_RATE_LIMIT: '25',
      RESEND_RATE_LIMIT: '1',
    });
    expect(config).toMatchObject({
      host: '0.0.0.0',
      apiRateLimit: 25,
      resendRateLimit: 1,
      port: 3000,
      databaseUrl: 'postgres://u:p@db:5433/other',
      redisUrl: 'rediss://cache:6380',
      authMode: 'registered',
      queuePrefix: 'sb1',
      maxWebhookEndpoints: 3,
    });
  });

  test('reads the webhook destination settings; allowed hosts are written as the URL parser writes hosts', () => {
    const config = loadConfig({
      WEBHOOK_ALLOW_PRIVATE_NETWORK: 'false',
      WEBHOOK_LOOPBACK_ONLY: 'true',
      WEBHOOK_ALLOWED_HOSTS: ' Hooks.Internal. , 10.0.0.5,,[::1], fd00::0:1 ,0x0a.0.0.6',
    });
    expect(config).toMatchObject({
      webhookAllowPrivateNetwork: false,
      webhookLoopbackOnly: true,
      webhookAllowedHosts: ['hooks.internal', '10.0.0.5', '::1', 'fd00::1', '10.0.0.6'],
    });
    expect(Object.isFrozen(config.webhookAllowedHosts)).toBe(true);
  });

  test('SEED_FILE comes with SEED_API_KEY', () => {
    expect(loadConfig({ SEED_FILE: 'seed.yaml', SEED_API_KEY: 'sk_test_123' })).toMatchObject({ seedFile: 'seed.yaml', seedApiKey: 'sk_test_123' });
    expect(loadConfig({ SEED_API_KEY: 'rk_test_123' })).toMatchObject({ seedFile: '', seedApiKey: 'rk_test_123' });
  });

  test('returns a frozen object', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(config.port).toBe(12111);
  });

  test.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '-1'],
    ['AUTH_MODE', 'x'],
    ['DATABASE_URL', 'notaurl'],
    ['DATABASE_URL', 'mysql://127.0.0.1/sandbank'],
    ['REDIS_URL', 'notaurl'],
    ['PUBLIC_URL', 'ftp://example.com'],
    ['QUEUE_PREFIX', 'a:b'],
    ['DATABASE_POOL_SIZE', '0'],
    ['BODY_LIMIT_BYTES', '1.5'],
    ['WEBHOOK_RETRY_SCHEDULE', '60,soon'],
    ['WEBHOOK_ALLOW_PRIVATE_NETWORK', 'yes'],
    ['WEBHOOK_LOOPBACK_ONLY', '1'],
    ['WEBHOOK_ALLOWED_HOSTS', 'https://hooks.internal'],
    ['WEBHOOK_ALLOWED_HOSTS', 'hooks.internal:8443'],
    ['WEBHOOK_ALLOWED_HOSTS', 'ok.internal,hooks.internal/path'],
    ['WEBHOOK_ALLOWED_HOSTS', 'user@hooks.internal'],
    ['HOST', 'not a host'],
    ['HOST', 'http://0.0.0.0'],
    ['API_RATE_LIMIT', '-1'],
    ['API_RATE_LIMIT', '2.5'],
    ['RESEND_RATE_LIMIT', 'fast'],
    ['SEED_API_KEY', 'pk_test_123'],
    ['SEED_API_KEY', 'sk_live_123'],
    // A seed file with no key: there is no default key, since the key decides whose the objects are.
    ['SEED_FILE', 'fixtures.json'],
  ])('%s=%s throws a ConfigError naming the variable', (name, value) => {
    let thrown: unknown;
    try {
      loadConfig({ [name]: value });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).toContain(name);
  });
});

describe('reading the environment', () => {
  test('nothing but src/config.ts reads process.env', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const file = path.join(dir, name);
        if (statSync(file).isDirectory()) {
          if (file !== path.join(root, 'src', 'generated')) walk(file);
        } else if (file.endsWith('.ts') && file !== path.join(root, 'src', 'config.ts')) {
          if (readFileSync(file, 'utf8').includes('process.env')) offenders.push(path.relative(root, file));
        }
      }
    };
    walk(path.join(root, 'src'));
    walk(path.join(root, 'workers'));
    expect(offenders).toEqual([]);
  });
});
