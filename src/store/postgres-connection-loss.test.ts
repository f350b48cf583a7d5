import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from './open-database.js';

const url = process.env['TEST_DATABASE_URL'];

/**
 * A connection the server ends while a query holds it (a restart, `pg_terminate_backend`, a
 * proxy's cut): pg tells the query and also emits `error` on the client, which the pool listens to
 * only while the client is idle. Unheard, that event is an uncaught exception in the gateway.
 */
describe.skipIf(url === undefined)('a PostgreSQL connection lost while a query holds it', () => {
  const schema = `switchyard_loss_${randomBytes(6).toString('hex')}`;
  let database: Database;
  const told: unknown[] = [];
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown): void => void uncaught.push(error);

  beforeAll(async () => {
    database = await openDatabase(url as string, { schema, onConnectionError: (error) => told.push(error) });
    process.on('uncaughtException', onUncaught);
  });

  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await database?.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  });

  it('raises nothing uncaught, tells the connection error, and the next query gets a new connection', async () => {
    // Held between two statements (as a transaction holds it) when the server ends it.
    await expect(
      database.db.connection().execute(async (connection) => {
        const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(connection);
        const killer = new pg.Client({ connectionString: url });
        await killer.connect();
        await killer.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
        await killer.end();
        await new Promise((resolve) => setTimeout(resolve, 200));
        await sql`select 1`.execute(connection);
      }),
    ).rejects.toThrow();
    expect(uncaught).toEqual([]);
    expect(told.length).toBeGreaterThan(0);
    expect((await sql<{ one: number }>`select 1 as one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
  });
});
