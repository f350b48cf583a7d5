// The openai SDK against a freshly started gateway: every local model answers with real output.
import OpenAI, { toFile } from 'openai';

const [url, token] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: token, maxRetries: 0, timeout: 120_000 });
const check = (condition, message) => {
  if (!condition) throw new Error(`quick start: ${message}`);
};

const models = (await client.models.list()).data.map((model) => model.id);
console.log('models:', models.join(', '));
check(
  ['local-speech', 'local-embed', 'local-rerank'].every((id) => models.includes(id)),
  'the local models are missing',
);

const sentence = 'the quick brown fox jumps over the lazy dog';
const speech = await client.audio.speech.create({ model: 'local-speech', input: sentence, voice: 'echo' });
const audio = new Uint8Array(await speech.arrayBuffer());
console.log(`speech: ${audio.length} bytes of ${speech.headers.get('content-type')}`);
check(speech.headers.get('content-type') === 'audio/mpeg' && audio.length > 1000, 'no mp3 audio');

if (models.includes('local-transcribe')) {
  const transcription = await client.audio.transcriptions.create({ model: 'local-transcribe', file: await toFile(audio, 'fox.mp3') });
  console.log(`transcription: "${transcription.text}"`);
  check(transcription.text.includes('fox') && transcription.text.includes('dog'), 'the transcription missed the sentence');
}

const embeddings = await client.embeddings.create({
  model: 'local-embed',
  input: ['a cat sat on the mat', 'a kitten slept on the rug', 'stock prices fell today'],
});
const [cat, kitten, stocks] = embeddings.data.map((item) => item.embedding);
const dot = (left, right) => left.reduce((sum, value, index) => sum + value * right[index], 0);
console.log(`embeddings: ${cat.length} dimensions; cat·kitten ${dot(cat, kitten).toFixed(3)} > cat·stocks ${dot(cat, stocks).toFixed(3)}`);
check(dot(cat, kitten) > dot(cat, stocks), 'related sentences are not closer');

const rerank = await client.post('/rerank', {
  body: {
    model: 'local-rerank',
    query: 'how do I reset my password',
    documents: ['Bananas are yellow.', 'Open settings and choose reset password.', 'The match ended in a draw.'],
  },
});
console.log(`rerank: ${JSON.stringify(rerank.results.map(({ index, relevance_score }) => ({ index, score: Number(relevance_score.toFixed(3)) })))}`);
check(rerank.results[0].index === 1, 'the relevant document is not first');
console.log('quick start: ok');
