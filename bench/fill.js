'use strict';
// `--rows=N` (bench/run.js): fills every hot table of the bench database up to N rows, so the
// scenarios run against a database that looks used. Set-based SQL only (INSERT … SELECT over
// generate_series), each new row a copy of one the preparation made through the API (so every
// JSON column has the shape the service writes), with its own id, owner and creation time.
//
// Speed (1M rows a table in well under a minute each): each table's inserts run in one
// transaction that first drops its indexes other than the primary key and builds them again after
// (one sort instead of a million random b-tree inserts), new rows go in id order (so the primary
// key grows at its right edge), and foreign keys are not checked row by row
// (session_replication_role = replica) but once at the end, by anti-joins over the new rows.
//
// Owners: a quarter of the rows of each table belong to the bench key's account (its lists are
// long), the rest are spread over the generated accounts: one platform per 50, a quarter connected
// to the bench account, the others connected to a generated platform. Ids are md5-derived, so they
// land all over the primary keys' b-trees as random ids do.

const crypto = require('node:crypto');
const { Client } = require('pg');

/** Creation times spread over the last 23 hours: inside the events' and idempotency's retention. */
const SPAN_SECONDS = 23 * 3600;

/** The tables filled, in the order their foreign keys need. */
const TABLES = [
  'accounts',
  'webhook_endpoints',
  'customers',
  'products',
  'prices',
  'payment_intents',
  'charges',
  'subscriptions',
  'subscription_items',
  'invoices',
  'invoice_lines',
  'events',
  'webhook_deliveries',
  'idempotency_records',
];

/**
 * Fills the tables up to `rows` each. `bench` is the bench key's account; `templates` names rows the
 * preparation made: { connectedAccount, endpoint, customer, product, price, intent, subscription, idempotencyKey }.
 * Answers { table: rows inserted } and the seconds it took.
 */
async function fillRows(databaseUrl, rows, bench, templates, log = () => undefined) {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  const started = Date.now();
  const inserted = {};
  try {
    // A bench database only: nothing here must outlive a crash of this process.
    await client.query('SET synchronous_commit = off');
    await client.query("SET maintenance_work_mem = '256MB'");
    await client.query("SET work_mem = '256MB'");
    await client.query('SET session_replication_role = replica');
    const salt = crypto.randomBytes(6).toString('hex');
    const lit = (s) => `'${String(s).replace(/'/g, "''")}'`;
    const count = async (table) => Number((await client.query(`SELECT count(*)::bigint AS n FROM ${table}`)).rows[0].n);
    const columns = async (table) =>
      (await client.query('SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position', [table])).rows.map((r) => r.column_name);
    const now = Math.floor(Date.now() / 1000);
    /** A generated row's id: `prefix_` and `length` md5 characters of (salt, table, index). */
    const id = (prefix, tag, i, length = 24) => `${lit(`${prefix}_`)} || substr(md5(${lit(`${salt}:${tag}:`)} || (${i})), 1, ${length})`;
    /** Seconds since the epoch, rising with the index over the last 23 hours. */
    const created = (i, n) => `(${now - SPAN_SECONDS} + ((${i})::bigint * ${SPAN_SECONDS} / ${Math.max(n, 1)}))::int`;

    /**
     * INSERT … SELECT n copies of the template row (`from`: a FROM clause yielding `tpl`), with
     * the columns in `set` computed per index `g.i`; seq takes its default (insertion order).
     */
    const clone = async (table, n, set, from, where = 'TRUE') => {
      if (n <= 0) return 0;
      const cols = (await columns(table)).filter((c) => c !== 'seq');
      const values = cols.map((c) => (c in set ? `${set[c]} AS ${c}` : `tpl.${c}`));
      const order = cols.includes('id') ? 'ORDER BY id' : '';
      const sql = `INSERT INTO ${table} (${cols.join(', ')}) SELECT * FROM (SELECT ${values.join(', ')} FROM generate_series(1, ${n}) AS g(i) CROSS JOIN ${from} WHERE ${where}) AS r ${order}`;
      const t = Date.now();
      const res = await withoutIndexes(table, () => client.query(sql));
      log(`${table}: ${res.rowCount} rows in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      inserted[table] = (inserted[table] ?? 0) + res.rowCount;
      return res.rowCount;
    };
    /** Runs `insert` in a transaction that drops the table's indexes that back no constraint and builds them again after. */
    const withoutIndexes = async (table, insert) => {
      await client.query('BEGIN');
      try {
        const { rows: indexes } = await client.query(
          `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i
           WHERE i.indrelid = $1::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)`,
          [table],
        );
        for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
        const result = await insert();
        for (const index of indexes) await client.query(index.def);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      }
    };
    const byId = (table, templateId) => `(SELECT * FROM ${table} WHERE id = ${lit(templateId)}) AS tpl`;

    // Accounts: generated account j is a platform when j % 50 = 1, connected to the bench account
    // when j % 4 = 0 (never both: 50k + 1 is odd), else connected to the platform 50·⌊(j−1)/50⌋ + 1.
    const accounts = Math.max(0, rows - (await count('accounts')));
    const account = (j) => id('acct', 'a', j, 16);
    const isPlatform = (j) => `((${j}) % 50 = 1 AND (${j}) % 4 <> 0)`;
    /** The owner of a table's row i: the bench account for a quarter, else a generated account. */
    const owner = (i) => (accounts === 0 ? lit(bench) : `CASE WHEN (${i}) % 4 = 0 THEN ${lit(bench)} ELSE ${account(`1 + ((${i})::bigint * 7919) % ${accounts}`)} END`);

    // Endpoints before their accounts (the keys are checked at the end), so each new account is
    // made with its count of endpoints, as creating them through the API keeps it.
    const endpoints = Math.max(0, rows - (await count('webhook_endpoints')));
    await clone(
      'webhook_endpoints',
      endpoints,
      { id: id('we', 'we', 'g.i'), account_id: owner('g.i'), created: created('g.i', endpoints), url: `'http://127.0.0.1:0/bench/fill/' || g.i` },
      byId('webhook_endpoints', templates.endpoint),
    );
    const withCount = (template) =>
      `${byId('accounts', template)} LEFT JOIN (SELECT account_id, count(*)::int AS n FROM webhook_endpoints GROUP BY account_id) AS c ON c.account_id = ${account('g.i')}`;
    const endpointCount = 'coalesce(c.n, 0)';
    await clone('accounts', accounts, { id: account('g.i'), created: created('g.i', accounts), webhook_endpoint_count: endpointCount }, withCount(bench), isPlatform('g.i'));
    await clone(
      'accounts',
      accounts,
      {
        id: account('g.i'),
        created: created('g.i', accounts),
        webhook_endpoint_count: endpointCount,
        parent_account_id: `CASE WHEN g.i % 4 = 0 THEN ${lit(bench)} ELSE ${account('50 * ((g.i - 1) / 50) + 1')} END`,
      },
      withCount(templates.connectedAccount),
      `NOT ${isPlatform('g.i')}`,
    );
    await client.query('UPDATE accounts SET webhook_endpoint_count = (SELECT count(*) FROM webhook_endpoints WHERE account_id = $1) WHERE id = $1', [bench]);

    const customers = Math.max(0, rows - (await count('customers')));
    await clone(
      'customers',
      customers,
      {
        id: id('cus', 'cus', 'g.i', 14),
        account_id: owner('g.i'),
        created: created('g.i', customers),
        name: `'Customer ' || g.i`,
        email: `'customer' || g.i || '@example.com'`,
      },
      byId('customers', templates.customer),
    );

    const products = Math.max(0, rows - (await count('products')));
    await clone(
      'products',
      products,
      { id: id('prod', 'prod', 'g.i'), account_id: owner('g.i'), created: created('g.i', products), updated: created('g.i', products), name: `'Product ' || g.i` },
      byId('products', templates.product),
    );
    // Price i belongs to a generated product (and to its owner), or to the template's when none was generated.
    const prices = Math.max(0, rows - (await count('prices')));
    const productOf = (i) => `(1 + ((${i}) - 1) % ${products})`;
    await clone(
      'prices',
      prices,
      {
        id: id('price', 'price', 'g.i'),
        account_id: products > 0 ? owner(productOf('g.i')) : 'tpl.account_id',
        product_id: products > 0 ? id('prod', 'prod', productOf('g.i')) : 'tpl.product_id',
        created: created('g.i', prices),
        unit_amount: '100 + g.i % 10000',
        unit_amount_decimal: '(100 + g.i % 10000)::text',
      },
      byId('prices', templates.price),
    );

    // PaymentIntents, each with its charge (same index, same owner): copies of a paid one, each
    // with an order number in its metadata (so the metadata index holds a million keys). The copies
    // keep the template's sealed client secret: they are read, never confirmed.
    const intents = templates.intent ? Math.max(0, rows - (await count('payment_intents'))) : 0;
    await clone(
      'payment_intents',
      intents,
      {
        id: id('pi', 'pi', 'g.i'),
        account_id: owner('g.i'),
        created: created('g.i', intents),
        amount: '100 + g.i % 10000',
        amount_received: '100 + g.i % 10000',
        customer_id: 'NULL::text',
        latest_charge_id: id('ch', 'ch', 'g.i'),
        metadata: `jsonb_build_object('order', g.i::text)`,
        due_at: 'NULL::int',
      },
      byId('payment_intents', templates.intent),
    );
    // Counted apart: an intent the preparation left unconfirmed has no charge. Charges past the
    // generated intents belong to one of them (wrapping around), with the same owner.
    const charges = templates.intent ? Math.max(0, rows - (await count('charges'))) : 0;
    const intentOf = (i) => (intents > 0 ? `(1 + ((${i}) - 1) % ${intents})` : i);
    await clone(
      'charges',
      charges,
      {
        id: id('ch', 'ch', 'g.i'),
        account_id: owner(intentOf('g.i')),
        created: created('g.i', charges),
        amount: '100 + g.i % 10000',
        amount_captured: '100 + g.i % 10000',
        payment_intent_id: intents > 0 ? id('pi', 'pi', intentOf('g.i')) : 'tpl.payment_intent_id',
        customer_id: 'NULL::text',
        metadata: `jsonb_build_object('order', g.i::text)`,
      },
      `(SELECT c.* FROM charges c JOIN payment_intents p ON p.latest_charge_id = c.id WHERE p.id = ${lit(templates.intent ?? '')}) AS tpl`,
    );

    // Subscriptions, each with its item, and invoices, each with its line: copies of the prepared
    // monthly subscription and its first (paid) invoice. Subscription i belongs to generated
    // customer i (same owner) while there are some; item, invoice and line i hang off subscription
    // (and invoice) i, wrapping around when a table needs more rows than subscriptions were made.
    // Each gets an order number in its metadata (the GIN index holds a million keys); none has a
    // next action, so no renewal is ever due among them.
    const subscriptions = templates.subscription ? Math.max(0, rows - (await count('subscriptions'))) : 0;
    if (subscriptions > 0) {
      const subOf = (i) => `(1 + ((${i}) - 1) % ${subscriptions})`;
      const customerOf = (i) => (customers > 0 ? `CASE WHEN ${i} <= ${customers} THEN ${id('cus', 'cus', i, 14)} ELSE tpl.customer_id END` : 'tpl.customer_id');
      // A subscription's owner is its customer's; the template's customer when none was generated.
      const subOwner = (i) => (customers > 0 ? `CASE WHEN ${i} <= ${customers} THEN ${owner(i)} ELSE tpl.account_id END` : 'tpl.account_id');
      const invoices = Math.max(0, rows - (await count('invoices')));
      await clone(
        'subscriptions',
        subscriptions,
        {
          id: id('sub', 'sub', 'g.i'),
          account_id: subOwner('g.i'),
          customer_id: customerOf('g.i'),
          created: created('g.i', subscriptions),
          metadata: `jsonb_build_object('order', g.i::text)`,
          latest_invoice: invoices > 0 ? `CASE WHEN g.i <= ${invoices} THEN ${id('in', 'in', 'g.i')} ELSE NULL END` : 'NULL::text',
          next_action_at: 'NULL::int',
          test_clock_id: 'NULL::text',
        },
        byId('subscriptions', templates.subscription),
      );
      const items = Math.max(0, rows - (await count('subscription_items')));
      await clone(
        'subscription_items',
        items,
        { id: id('si', 'si', 'g.i', 14), account_id: subOwner(subOf('g.i')), subscription_id: id('sub', 'sub', subOf('g.i')), created: created('g.i', items) },
        `(SELECT * FROM subscription_items WHERE subscription_id = ${lit(templates.subscription)} ORDER BY seq LIMIT 1) AS tpl`,
      );
      await clone(
        'invoices',
        invoices,
        {
          id: id('in', 'in', 'g.i'),
          account_id: subOwner(subOf('g.i')),
          customer_id: customerOf(subOf('g.i')),
          subscription_id: id('sub', 'sub', subOf('g.i')),
          created: created('g.i', invoices),
          number: `'FILL-' || lpad(g.i::text, 7, '0')`,
          metadata: `jsonb_build_object('order', g.i::text)`,
        },
        `(SELECT i.* FROM invoices i JOIN subscriptions s ON s.latest_invoice = i.id WHERE s.id = ${lit(templates.subscription)}) AS tpl`,
      );
      const lines = invoices === 0 ? 0 : Math.max(0, rows - (await count('invoice_lines')));
      const invoiceOf = (i) => `(1 + ((${i}) - 1) % ${invoices})`;
      await clone(
        'invoice_lines',
        lines,
        {
          id: id('il', 'il', 'g.i'),
          invoice_id: id('in', 'in', invoiceOf('g.i')),
          subscription_id: id('sub', 'sub', subOf(invoiceOf('g.i'))),
          subscription_item_id: id('si', 'si', subOf(invoiceOf('g.i')), 14),
        },
        `(SELECT l.* FROM invoice_lines l JOIN subscriptions s ON s.latest_invoice = l.invoice_id WHERE s.id = ${lit(templates.subscription)} ORDER BY l.seq LIMIT 1) AS tpl`,
      );
    }

    // Events: copies of the prepared customer.created, price.created and product.created events,
    // and their `.updated` twins (with previous_attributes), so a type filter has company.
    const kinds = (await client.query(`SELECT DISTINCT ON (type) id FROM events WHERE account_id = $1 AND type LIKE '%.created' ORDER BY type, seq`, [bench])).rows.map((r) => r.id);
    const events = kinds.length === 0 ? 0 : Math.max(0, rows - (await count('events')));
    const k = kinds.length * 2;
    await clone(
      'events',
      events,
      {
        id: id('evt', 'evt', 'g.i'),
        account_id: owner('g.i'),
        created: created('g.i', events),
        type: `CASE WHEN g.i % ${k} < ${kinds.length} THEN tpl.type ELSE replace(tpl.type, '.created', '.updated') END`,
        data: `CASE WHEN g.i % ${k} < ${kinds.length} THEN tpl.data ELSE tpl.data || '{"previous_attributes": {"metadata": {}}}'::jsonb END`,
        request_id: `'req_' || substr(md5(${lit(`${salt}:req:`)} || g.i), 1, 14)`,
        idempotency_key: 'NULL',
        pending_webhooks: '0',
        // Fanned out long ago, as old events are: nothing for a relay to pick up.
        fanned_out_at: `to_timestamp(${created('g.i', events)})`,
      },
      `(SELECT e.*, row_number() OVER (ORDER BY e.type) - 1 AS k FROM events e WHERE e.id = ANY(ARRAY[${kinds.map(lit).join(', ')}]::text[])) AS tpl`,
      `tpl.k = g.i % ${kinds.length}`,
    );

    // Deliveries: one per generated event (to the generated endpoint of the same index, so of the
    // same owner), wrapping around with a resend number when there are more deliveries than events.
    const deliveries = events === 0 || endpoints === 0 ? 0 : Math.max(0, rows - (await count('webhook_deliveries')));
    if (deliveries > 0) {
      const ev = `(1 + (g.i - 1) % ${events})`;
      const t = Date.now();
      const res = await withoutIndexes('webhook_deliveries', () =>
        client.query(
          `INSERT INTO webhook_deliveries (id, event_id, endpoint_id, resend_number, status, attempts, next_attempt_at, created_at, completed_at)
           SELECT 'whdel_' || md5(${lit(`${salt}:whdel:`)} || g.i) AS id, ${id('evt', 'evt', ev)}, ${id('we', 'we', `1 + (${ev} - 1) % ${endpoints}`)}, (g.i - 1) / ${events},
                  CASE WHEN g.i % 20 = 0 THEN 'failed' ELSE 'succeeded' END, 1 + (g.i % 20 = 0)::int * 3, NULL::timestamptz,
                  to_timestamp(${created(ev, events)}), to_timestamp(${created(ev, events)} + 1)
           FROM generate_series(1, ${deliveries}) AS g(i) ORDER BY id`,
        ),
      );
      log(`webhook_deliveries: ${res.rowCount} rows in ${((Date.now() - t) / 1000).toFixed(1)} s`);
      inserted.webhook_deliveries = res.rowCount;
    }

    const records = Math.max(0, rows - (await count('idempotency_records')));
    await clone(
      'idempotency_records',
      records,
      {
        account_id: owner('g.i'),
        key: `${lit(`bench-fill-${salt}-`)} || g.i`,
        claim_id: 'gen_random_uuid()::text',
        created_at: `to_timestamp(${created('g.i', records)})`,
        heartbeat_at: `to_timestamp(${created('g.i', records)})`,
        completed_at: `to_timestamp(${created('g.i', records)})`,
      },
      `(SELECT * FROM idempotency_records WHERE account_id = ${lit(bench)} AND key = ${lit(templates.idempotencyKey)}) AS tpl`,
    );

    // Foreign keys were not checked row by row: check them now, once per key.
    const { rows: keys } = await client.query(
      `SELECT c.conrelid::regclass::text AS tbl, c.confrelid::regclass::text AS ref, a.attname AS col, r.attname AS refcol
       FROM pg_constraint c JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
       JOIN pg_attribute r ON r.attrelid = c.confrelid AND r.attnum = c.confkey[1]
       WHERE c.contype = 'f' AND cardinality(c.conkey) = 1 AND c.conrelid::regclass::text = ANY($1)`,
      [TABLES.filter((table) => inserted[table] > 0)],
    );
    for (const key of keys) {
      const dangling = await client.query(
        `SELECT count(*)::int AS n FROM ${key.tbl} t WHERE t.${key.col} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${key.ref} r WHERE r.${key.refcol} = t.${key.col})`,
      );
      if (dangling.rows[0].n > 0) throw new Error(`bench/fill.js: ${dangling.rows[0].n} rows of ${key.tbl}.${key.col} reference no ${key.ref}`);
    }
    const t = Date.now();
    await client.query(`VACUUM ANALYZE ${TABLES.join(', ')}`);
    log(`VACUUM ANALYZE in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const counts = {};
    for (const table of TABLES) counts[table] = await count(table);
    return { inserted, counts, seconds: (Date.now() - started) / 1000 };
  } finally {
    await client.end();
  }
}

module.exports = { fillRows, TABLES };
