import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  TracerProvider,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import type { RequestTrace, RequestTracing, TracedAttempt } from '../core/index.js';
import type { RequestLogEntry } from '../store/index.js';

export interface TracingOptions {
  /** Where spans are posted (OTLP over HTTP, JSON or protobuf as the exporter sends). */
  tracesUrl: string;
  serviceName: string;
  serviceVersion: string;
  sampleRatio: number;
  maxQueueSpans: number;
  /** A credential's provider kind (`gen_ai.system`); null when it is not known. */
  providerOf: (credentialId: string) => string | null;
  /** The first export that failed since the last that worked: said once, not per batch. */
  onExportFailure: (error: Error | undefined) => void;
  /** An export worked again after failures. */
  onExportRecovered: () => void;
}

/** The GenAI semantic conventions' operation of each endpoint the gateway serves. */
const OPERATIONS: Readonly<Record<string, string>> = {
  'chat.completions': 'chat',
  responses: 'chat',
  native: 'chat',
  embeddings: 'embeddings',
};

const HEADER_GETTER: TextMapGetter<Record<string, string | undefined>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/**
 * OpenTelemetry traces of the `/v1` requests (docs/tracing.md): one server span per request and one
 * client span per upstream attempt under it, with the GenAI semantic conventions' attributes and
 * the gateway's own, never a prompt's or an answer's text. A caller's `traceparent` is continued;
 * each attempt's own context is what the upstream is sent. Spans leave in batches over OTLP/HTTP;
 * a collector that is slow or away costs requests nothing: past `maxQueueSpans` spans are dropped,
 * and counted.
 */
export class GatewayTracing implements RequestTracing {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  private readonly propagator = new W3CTraceContextPropagator();
  private readonly counting: CountingExporter;

  constructor(private readonly options: TracingOptions) {
    this.counting = new CountingExporter(new OTLPTraceExporter({ url: options.tracesUrl, timeoutMillis: 10_000 }), options);
    const batches = new BatchSpanProcessor({
      exporter: this.counting,
      maxQueueSize: options.maxQueueSpans,
      maxExportBatchSize: Math.min(512, options.maxQueueSpans),
      scheduledDelayMillis: 1_000,
      exportTimeoutMillis: 10_000,
    });
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': options.serviceName, 'service.version': options.serviceVersion }),
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(options.sampleRatio) }),
      spanProcessors: [new DropCountingProcessor(batches, this.counting, options.maxQueueSpans)],
    });
    this.tracer = this.provider.getTracer('switchyard', options.serviceVersion);
  }

  /** Spans dropped so far: the queue was full, or their export failed. */
  get droppedSpans(): number {
    return this.counting.dropped;
  }

  start(endpoint: string, traceparent: string | undefined, tracestate: string | undefined, startedAt: number): RequestTrace {
    const parent = traceparent === undefined ? ROOT_CONTEXT : this.propagator.extract(ROOT_CONTEXT, { traceparent, tracestate }, HEADER_GETTER);
    // Attributes are set after the start, not given to it: a span the sampler leaves out then costs no attribute checks.
    const span = this.tracer.startSpan(endpoint, { kind: SpanKind.SERVER, startTime: startedAt }, parent);
    span.setAttribute('switchyard.endpoint', endpoint);
    return new TracedRequest(this.tracer, span, trace.setSpan(parent, span), this.options.providerOf);
  }

  /** The request ended: its span gets what the request log says of it, and ends. */
  finish(entry: RequestLogEntry, requestTrace: RequestTrace | null): void {
    if (requestTrace instanceof TracedRequest) requestTrace.end(entry);
  }

  /** Exports what is queued, then stops. */
  async close(): Promise<void> {
    await this.provider.shutdown();
  }
}

/** One request's spans. */
class TracedRequest implements RequestTrace {
  /** The attempts' spans not ended yet, oldest first. */
  private readonly open: Array<{ credential: string; span: Span }> = [];

  constructor(
    private readonly tracer: Tracer,
    private readonly span: Span,
    private readonly context: Context,
    private readonly providerOf: (credentialId: string) => string | null,
  ) {}

  attemptStarted(credentialId: string, startedAt: number): string {
    const span = this.tracer.startSpan(`attempt ${credentialId}`, { kind: SpanKind.CLIENT, startTime: startedAt }, this.context);
    if (span.isRecording()) {
      const provider = this.providerOf(credentialId);
      const attributes: Attributes = { 'switchyard.credential': credentialId };
      if (provider !== null) attributes['gen_ai.system'] = provider;
      span.setAttributes(attributes);
    }
    this.open.push({ credential: credentialId, span });
    const { traceId, spanId, traceFlags } = span.spanContext();
    return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
  }

  attemptEnded(attempt: TracedAttempt): void {
    const index = this.open.findIndex((entry) => entry.credential === attempt.credential);
    if (index === -1) return;
    const [{ span }] = this.open.splice(index, 1) as [{ credential: string; span: Span }];
    span.setAttribute('switchyard.attempt.outcome', attempt.outcome);
    if (attempt.status !== null) span.setAttribute('http.response.status_code', attempt.status);
    if (attempt.outcome !== 'ok') {
      span.setAttribute('error.type', attempt.outcome);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }

  end(entry: RequestLogEntry): void {
    // Attempts the request never heard the end of (the client left mid-call) end with it.
    for (const { span } of this.open.splice(0)) span.end();
    const { span } = this;
    if (!span.isRecording()) return span.end();
    const operation = OPERATIONS[entry.endpoint] ?? entry.endpoint;
    span.updateName(entry.model === null ? operation : `${operation} ${entry.model}`);
    const attributes: Attributes = {
      'gen_ai.operation.name': operation,
      'switchyard.request_id': entry.id,
      'http.response.status_code': entry.status,
    };
    if (entry.model !== null) attributes['gen_ai.request.model'] = entry.model;
    if (entry.upstreamModel !== null) attributes['gen_ai.response.model'] = entry.upstreamModel;
    if (entry.upstream !== null) {
      attributes['switchyard.credential'] = entry.upstream;
      const provider = this.providerOf(entry.upstream);
      if (provider !== null) attributes['gen_ai.system'] = provider;
    }
    if (entry.promptTokens !== null) attributes['gen_ai.usage.input_tokens'] = entry.promptTokens;
    if (entry.completionTokens !== null) attributes['gen_ai.usage.output_tokens'] = entry.completionTokens;
    if (entry.team !== null) attributes['switchyard.team'] = entry.team;
    if (entry.affinity !== null) attributes['switchyard.session.affinity'] = entry.affinity;
    if (entry.errorCode !== null) attributes['error.type'] = entry.errorCode;
    span.setAttributes(attributes);
    // A server span is an error when the gateway or its upstream failed, not when the caller was refused.
    if (entry.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(entry.createdAt + entry.latencyMs);
  }
}

/** The OTLP exporter, counting the spans of batches that failed, and saying the first failure of a run once. */
class CountingExporter implements SpanExporter {
  dropped = 0;
  /** Spans in the processor's queue: handed to it, not yet taken for an export. */
  pending = 0;
  private failing = false;

  constructor(
    private readonly inner: SpanExporter,
    private readonly options: Pick<TracingOptions, 'onExportFailure' | 'onExportRecovered'>,
  ) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    // Taken out of the processor's queue now, whatever becomes of them.
    this.pending = Math.max(0, this.pending - spans.length);
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.failing) {
          this.failing = false;
          this.options.onExportRecovered();
        }
      } else {
        this.dropped += spans.length;
        if (!this.failing) {
          this.failing = true;
          this.options.onExportFailure(result.error);
        }
      }
      resultCallback(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/**
 * The batch processor, with its drops counted: it drops a span that ends while its queue holds
 * `maxQueueSpans`, and says so nowhere the gateway can read.
 */
class DropCountingProcessor {
  constructor(
    private readonly inner: BatchSpanProcessor,
    private readonly counting: CountingExporter,
    private readonly maxQueueSpans: number,
  ) {}

  onStart(span: Parameters<BatchSpanProcessor['onStart']>[0], parentContext: Context): void {
    this.inner.onStart(span, parentContext);
  }

  onEnd(span: ReadableSpan): void {
    // The processor leaves out a span recorded but not sampled.
    if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return this.inner.onEnd(span);
    if (this.counting.pending >= this.maxQueueSpans) this.counting.dropped++;
    else this.counting.pending++;
    this.inner.onEnd(span);
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}
