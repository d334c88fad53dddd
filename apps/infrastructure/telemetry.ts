import { ConfigError, enableTracing } from '@lib/platform';
import type { Logger } from 'pino';

/** Where spans go, from the standard OTEL_* variables (docs/telemetry.md); undefined: tracing off. */
export interface TelemetrySettings {
  /** The full traces URL (`…/v1/traces`). */
  readonly url: string;
  readonly protocol: 'http/protobuf' | 'http/json';
  readonly serviceName: string;
}

export const DEFAULT_SERVICE_NAME = 'agent-retrieval-service';

/** Reads the settings; a bad one is a ConfigError like any other setting's, reported before anything starts. */
export function telemetrySettings(env: Readonly<Record<string, string | undefined>>): TelemetrySettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!traces && !base) return undefined;
  // The specification's rule: the signal's own endpoint is used as given, the base one gets `v1/traces` appended.
  const url = traces || `${base!.replace(/\/+$/, '')}/v1/traces`;
  const problems: string[] = [];
  try {
    if (!/^https?:$/.test(new URL(url).protocol)) problems.push(`OTEL_EXPORTER_OTLP_${traces ? 'TRACES_' : ''}ENDPOINT must be an http or https URL, got "${url}"`);
  } catch {
    problems.push(`OTEL_EXPORTER_OTLP_${traces ? 'TRACES_' : ''}ENDPOINT is not a URL: "${traces || base}"`);
  }
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') problems.push(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (grpc is not supported), got "${protocol}"`);
  if (problems.length) throw new ConfigError(problems);
  return { url, protocol: protocol as TelemetrySettings['protocol'], serviceName: env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAME };
}

/** The running SDK: `shutdown` exports the spans still batched, then stops. */
export interface Telemetry {
  shutdown(): Promise<void>;
}

/**
 * Registers the OpenTelemetry SDK as the global tracer provider (async-hooks context, W3C trace context propagator,
 * batched OTLP/HTTP export). Required here, lazily: with tracing off no SDK module is ever loaded.
 */
export function startTelemetry(settings: TelemetrySettings, log: Logger): Telemetry {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { NodeTracerProvider, BatchSpanProcessor } = require('@opentelemetry/sdk-trace-node') as typeof import('@opentelemetry/sdk-trace-node');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const { OTLPTraceExporter } =
    settings.protocol === 'http/json'
      ? (require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http'))
      : (require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto'));
  const { context, propagation, trace } = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.url }))],
  });
  // Trace context only, no baggage: a caller's baggage would otherwise be forwarded to models, tools and webhooks.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  enableTracing();
  const shown = new URL(settings.url);
  shown.username = shown.password = '';
  log.info({ url: shown.href, protocol: settings.protocol, serviceName: settings.serviceName }, 'OpenTelemetry tracing on');
  return {
    async shutdown() {
      enableTracing(false);
      try {
        await provider.shutdown();
      } catch (e) {
        log.warn({ err: e }, 'OpenTelemetry: the last spans could not be exported');
      }
      // Unregistered, so a later start in this process (tests) can register again.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
