import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONSOLE_TYPES_PATH, consoleTypesSource } from '../../scripts/console-types.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe("the console's wire types (web/src/api/types.ts)", () => {
  it("are what the admin API's OpenAPI document makes today (else: npm run generate:console-types)", () => {
    expect(readFileSync(`${root}${CONSOLE_TYPES_PATH}`, 'utf8')).toBe(consoleTypesSource());
  });

  it('name each schema the console reads, and write a shared one by its name', () => {
    const source = consoleTypesSource();
    for (const name of [
      'Token',
      'CreatedToken',
      'NewToken',
      'TokenChanges',
      'Team',
      'Project',
      'RequestView',
      'SessionView',
      'Credential',
      'UsageView',
      'ListPage<T>',
      'ErrorBody',
    ]) {
      expect(source).toContain(`export interface ${name} {`);
    }
    expect(source).toMatch(/export interface Team \{[^}]*\n {2}limits: Limits;/);
    expect(source).toMatch(/export interface RequestView \{[\s\S]*?\n {2}attempts: Attempt\[\];/);
  });
});
