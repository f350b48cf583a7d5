import type { CreatedToken } from '../access/index.js';
import type { OffModel } from '../providers/provider-adapter.js';
import type { CatalogModel } from '../routing/index.js';

export interface BannerFacts {
  url: string;
  /** The web console's address; null when it is off or not built. */
  consoleUrl: string | null;
  /** Why there is no console, when there is none. */
  consoleOff?: string;
  configSource: string | null;
  models: ReadonlyArray<Pick<CatalogModel, 'id' | 'type'>>;
  /** What is off for want of something on this machine: named, with the command that turns it on. */
  offModels: readonly OffModel[];
  bootstrap: CreatedToken | null;
  /** `serve --workers N`: how many processes serve the port. */
  workers?: number;
}

/** What a person starting the gateway needs to see: where it is, what it serves, how to get in. */
export function banner({ url, consoleUrl, consoleOff, configSource, models, offModels, bootstrap, workers }: BannerFacts): string[] {
  const lines = [
    '',
    `Switchyard is listening on ${url}`,
    `  OpenAI base URL: ${url}/v1`,
    `  console:         ${consoleUrl ?? consoleOff ?? 'off'}`,
    `  config:          ${configSource ?? 'built-in defaults (no switchyard.yaml): the local provider'}`,
    ...(workers === undefined ? [] : [`  workers:         ${workers} processes on one port, and a primary that restarts them`]),
    `  models:          ${models.length === 0 ? 'none yet: copy switchyard.example.yaml to switchyard.yaml' : models.map((model) => `${model.id} (${model.type})`).join(', ')}`,
  ];
  for (const model of offModels) {
    lines.push(`  off:             ${model.id} (${model.type}): ${model.reason}; to turn it on: ${model.remedy}`);
  }
  if (bootstrap !== null) {
    lines.push(
      '',
      `  First start: an admin token (${bootstrap.record.id}, all scopes) was created. It is shown this once.`,
      `  Sign in to the console${consoleUrl === null ? '' : ` (${consoleUrl})`} with it and create your own tokens under Settings → API Tokens`,
      // npx: in a clone or an unpacked release the command is in no folder of PATH; npx finds it from here.
      `  (or with \`npx switchyard tokens create\`), then revoke this one (\`npx switchyard tokens revoke ${bootstrap.record.id}\`).`,
      `  admin token: ${bootstrap.secret}`,
    );
  }
  lines.push('');
  return lines;
}
