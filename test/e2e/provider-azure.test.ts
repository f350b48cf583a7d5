import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { startGateway, type Gateway } from '../../src/gateway.js';
import { createLogger } from '../../src/observability/logger.js';
import { startFakeAzureUpstream, type FakeAzureUpstream } from '../fake-upstreams/azure-upstream.js';
import { fakeEmbedding, fakeWav } from '../fake-upstreams/openai-upstream.js';

let azure: FakeAzureUpstream;
let gateway: Gateway;
let client: OpenAI;
let directory: string;

function configFile(models: unknown[]): string {
  const path = join(directory, `config-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    path,
    stringify({
      server: { port: 0 },
      database: { url: `sqlite:${join(directory, 'db.sqlite')}` },
      logging: { level: 'silent' },
      upstreams: [{ id: 'azure-east', provider: 'azure', base_url: azure.url, api_key: 'azure-key-123', api_version: '2024-10-21' }],
      models,
    }),
  );
  return path;
}

beforeAll(async () => {
  azure = await startFakeAzureUpstream();
  directory = mkdtempSync(join(tmpdir(), 'switchyard-azure-'));
  const { config } = loadConfig({
    configPath: configFile([
      { id: 'gpt-4o', type: 'chat', routes: [{ upstream: 'azure-east', model: 'gpt4o-prod' }] },
      { id: 'embed', type: 'embedding', routes: [{ upstream: 'azure-east', model: 'embed-deploy' }] },
      { id: 'tts', type: 'speech', routes: [{ upstream: 'azure-east', model: 'tts-deploy' }] },
      { id: 'whisper', type: 'transcription', routes: [{ upstream: 'azure-east', model: 'whisper-deploy' }] },
    ]),
    env: {},
  });
  gateway = await startGateway(config, { logger: createLogger('silent') });
  const { secret } = await gateway.tokens.create({ team: 'azure' });
  client = new OpenAI({ apiKey: secret, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gateway.shutdown();
  await azure.close();
  rmSync(directory, { recursive: true, force: true });
});

describe('azure provider', () => {
  it('calls the deployment URL with api-version and the api-key header, never a bearer token', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
    expect(completion.choices[0]?.message.content).toBe('Hello! How can I assist you today?');
    const sent = azure.requests.at(-1);
    expect(sent).toMatchObject({ deployment: 'gpt4o-prod', operation: 'chat/completions', apiVersion: '2024-10-21' });
    expect(sent?.headers['api-key']).toBe('azure-key-123');
    expect(sent?.headers['authorization']).toBeUndefined();
  });

  it('streams chat with usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Hello! How can I assist you today?');
    expect(usage?.total_tokens).toBe(17);
  });

  it('serves embeddings, speech, transcriptions and translations through their deployments', async () => {
    const embedded = await client.embeddings.create({ model: 'embed', input: ['one', 'three'], encoding_format: 'float' });
    expect(embedded.data.map((item) => item.embedding)).toEqual([fakeEmbedding('one'), fakeEmbedding('three')]);
    expect(azure.requests.at(-1)).toMatchObject({ deployment: 'embed-deploy', operation: 'embeddings' });

    const speech = await client.audio.speech.create({ model: 'tts', input: 'Hi', voice: 'alloy', response_format: 'wav' });
    expect(speech.headers.get('content-type')).toBe('audio/wav');
    expect(azure.requests.at(-1)).toMatchObject({ deployment: 'tts-deploy', operation: 'audio/speech' });

    const wav = fakeWav(100);
    const transcript = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(wav, 'a.wav') });
    expect(transcript.text).toBe(`received ${wav.length} bytes as a.wav`);
    expect(azure.requests.at(-1)).toMatchObject({ deployment: 'whisper-deploy', operation: 'audio/transcriptions' });

    const translation = await client.audio.translations.create({ model: 'whisper', file: await toFile(wav, 'a.wav') });
    expect(translation.text).toBe(`translated ${wav.length} bytes as a.wav`);
    expect(azure.requests.at(-1)).toMatchObject({ deployment: 'whisper-deploy', operation: 'audio/translations', apiVersion: '2024-10-21' });
  });

  it('refuses at start a rerank model on azure, and an azure upstream without base_url', () => {
    const rerank = loadConfig({ configPath: configFile([{ id: 'r', type: 'rerank', routes: [{ upstream: 'azure-east', model: 'x' }] }]), env: {} }).config;
    return startGateway(rerank, { logger: createLogger('silent') }).then(
      () => expect.fail('the gateway started'),
      (error: unknown) => {
        expect(error).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).message).toContain('cannot serve rerank models');
        const path = join(directory, 'no-base.yaml');
        writeFileSync(path, stringify({ upstreams: [{ id: 'a', provider: 'azure', api_key: 'k' }] }));
        expect(() => loadConfig({ configPath: path, env: {} })).toThrow('upstreams[0].base_url: is required for azure');
      },
    );
  });
});
