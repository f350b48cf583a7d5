import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A PostgreSQL URL that confines the gateway to a new schema, as an operator could write it
 * (`?options=-c search_path=…`), and a function that drops the schema afterwards.
 */
export async function isolatedPostgresUrl(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const schema = `switchyard_e2e_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: baseUrl });
  await client.connect();
  await client.query(`create schema ${schema}`);
  await client.end();
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const dropper = new pg.Client({ connectionString: baseUrl });
      await dropper.connect();
      await dropper.query(`drop schema if exists ${schema} cascade`);
      await dropper.end();
    },
  };
}
