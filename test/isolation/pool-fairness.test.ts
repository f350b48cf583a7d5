import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFaultUpstream, type FaultUpstream } from '../fake-upstreams/fault-upstream.js';
import { resetCredentials } from '../support/reset-credentials.js';
import { startTestGateway, type TestGateway } from '../support/start-test-gateway.js';

// One tenant's inputs must not take a shared pool away from the others (issue 29): a caller whose
// requests make a self-hosted server answer 500, or 404, or who calls the Responses API on a
// server without it, leaves the pool serving every other team.

/** Text that makes the fault upstream fail the request it is in, whatever the credential. */
const POISON = 'switchyard-fault:server-error';
/** How long the attacker and the bystander send at once. */
const ATTACK_MS = 2_500;
/** Parallel request loops of each team. */
const ATTACKER_LOOPS = 8;
const BYSTANDER_LOOPS = 4;

describe('a two-credential pool shared by two teams', () => {
  let upstream: FaultUpstream;
  let test: TestGateway;
  let attacker: OpenAI;
  let bystander: OpenAI;

  beforeAll(async () => {
    upstream = await startFaultUpstream();
    test = await startTestGateway({
      upstreams: [
        // Two keys of one self-hosted, OpenAI-compatible server (no Responses API).
        { id: 'pool-a', provider: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-pool-a' },
        { id: 'pool-b', provider: 'openai', base_url: `${upstream.url}/v1`, api_key: 'sk-pool-b' },
      ],
      models: [
        {
          id: 'shared-chat',
          type: 'chat',
          routes: [
            { upstream: 'pool-a', model: 'ok' },
            { upstream: 'pool-b', model: 'ok' },
          ],
        },
        {
          id: 'shared-embed',
          type: 'embedding',
          routes: [
            { upstream: 'pool-a', model: 'ok' },
            { upstream: 'pool-b', model: 'ok' },
          ],
        },
      ],
      routing: { infer_sessions: false },
    });
    const client = (team: string) => async () => {
      const { secret } = await test.gateway.tokens.create({ team });
      return new OpenAI({ apiKey: secret, baseURL: `${test.gateway.url}/v1`, maxRetries: 0, timeout: 10_000 });
    };
    attacker = await client('attacker')();
    bystander = await client('bystander')();
  });

  afterAll(async () => {
    await test?.close();
    await upstream?.close();
  });

  beforeEach(() => resetCredentials(test.gateway));

  const chat = (client: OpenAI, content: string) => client.chat.completions.create({ model: 'shared-chat', messages: [{ role: 'user', content }] });
  const statusOf = async (call: Promise<unknown>): Promise<number> => {
    try {
      await call;
      return 200;
    } catch (error) {
      if (error instanceof OpenAI.APIError && error.status !== undefined) return error.status;
      throw error;
    }
  };
  const states = () => test.gateway.credentials.list().map(({ id, state }) => `${id}:${state}`);

  it("keeps serving the bystander team while the attacker's inputs make the server answer 500", async () => {
    const deadline = performance.now() + ATTACK_MS;
    const attackerStatuses: number[] = [];
    const bystanderStatuses: number[] = [];
    const loop = async (client: OpenAI, content: string, statuses: number[]) => {
      while (performance.now() < deadline) statuses.push(await statusOf(chat(client, content)));
    };
    await Promise.all([
      ...Array.from({ length: ATTACKER_LOOPS }, () => loop(attacker, `Summarise this: ${POISON}`, attackerStatuses)),
      ...Array.from({ length: BYSTANDER_LOOPS }, () => loop(bystander, 'Hello', bystanderStatuses)),
    ]);
    const served = bystanderStatuses.filter((status) => status === 200).length;
    const statusCounts = Object.fromEntries(
      [...new Set(bystanderStatuses)].map((status) => [status, bystanderStatuses.filter((each) => each === status).length]),
    );
    expect(bystanderStatuses.length).toBeGreaterThan(50);
    expect(served / bystanderStatuses.length, `bystander statuses ${JSON.stringify(statusCounts)}`).toBeGreaterThanOrEqual(0.99);
    // The attack really ran: the attacker's requests failed upstream, many times a second.
    expect(attackerStatuses.length).toBeGreaterThan(50);
    expect(upstream.received.get('server-error') ?? 0).toBeGreaterThan(50);
    expect(states()).toEqual(['pool-a:healthy', 'pool-b:healthy']);
  });

  it("answers an upstream 404 as the caller's 400 and leaves chat and embeddings to everyone", async () => {
    for (let request = 0; request < 5; request++) {
      const error = await chat(attacker, `Use the model I named: switchyard-fault:model-not-found`).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error).toMatchObject({ status: 400, code: 'upstream_bad_request' });
    }
    expect(states()).toEqual(['pool-a:healthy', 'pool-b:healthy']);
    expect(await statusOf(chat(bystander, 'Hello'))).toBe(200);
    expect(await statusOf(bystander.embeddings.create({ model: 'shared-embed', input: ['Hello'] }))).toBe(200);
  });

  it('serves /v1/responses on a server without the Responses API by converting to chat, and chat and embeddings go on', async () => {
    const before = upstream.received.get('/responses') ?? 0;
    const response = await attacker.responses.create({ model: 'shared-chat', input: 'Hello' });
    expect(response.object).toBe('response');
    expect(response.output_text.length).toBeGreaterThan(0);
    const stream = attacker.responses.stream({ model: 'shared-chat', input: 'Hello again' });
    const final = await stream.finalResponse();
    expect(final.status).toBe('completed');
    // Learnt once for the server (both keys share its endpoint): later requests are converted at once.
    expect((upstream.received.get('/responses') ?? 0) - before).toBe(1);
    expect(states()).toEqual(['pool-a:healthy', 'pool-b:healthy']);
    expect(await statusOf(chat(bystander, 'Hello'))).toBe(200);
    expect(await statusOf(bystander.embeddings.create({ model: 'shared-embed', input: ['Hello'] }))).toBe(200);
  });
});
