import { ConfigError } from '@lib/platform';
import { telemetrySettings } from './telemetry';

/** The OTEL_* settings as the OpenTelemetry specification reads them (docs/telemetry.md). */
describe('telemetrySettings', () => {
  it('is off without an endpoint, or with OTEL_SDK_DISABLED=true', () => {
    expect(telemetrySettings({})).toBeUndefined();
    expect(telemetrySettings({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toBeUndefined();
    expect(telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'TRUE' })).toBeUndefined();
  });

  it('appends v1/traces to the base endpoint, takes the traces endpoint as given; protobuf and the package name by default', () => {
    expect(telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({ url: 'http://collector:4318/v1/traces', protocol: 'http/protobuf', serviceName: 'agent-retrieval-service' });
    expect(telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/otlp/traces', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'rag-eu' })).toEqual({ url: 'https://b/otlp/traces', protocol: 'http/json', serviceName: 'rag-eu' });
    expect(telemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json' })?.protocol).toBe('http/json');
  });

  it('refuses grpc, another scheme and a non-URL, naming the setting', () => {
    const problems = (env: Record<string, string>) => {
      try {
        telemetrySettings(env);
      } catch (e) {
        return (e as ConfigError).problems;
      }
      return [];
    };
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual(['OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json (grpc is not supported), got "grpc"']);
    expect(problems({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'ftp://a/v1/traces' })).toEqual(['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http or https URL, got "ftp://a/v1/traces"']);
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })[0]).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL|is not a URL/);
  });
});
