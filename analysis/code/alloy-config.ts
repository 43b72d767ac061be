/**
 * Grafana Alloy configuration files (`config.alloy`, the "Alloy configuration syntax", formerly
 * River): the endpoints its exporter components send to. Literal URLs (`loki.write` /
 * `prometheus.remote_write` / `pyroscope.write` `endpoint { url = "http://loki:3100/..." }`,
 * `otelcol.exporter.otlphttp` `client { endpoint = "http://..." }`) are read by the connection
 * scan's URL pass like any settings file's; this adds the one address the syntax writes without
 * a scheme: the gRPC `otelcol.exporter.otlp` `client { endpoint = "tempo:4317" }` (Alloy docs,
 * "otelcol.exporter.otlp": `endpoint`, "host:port to send telemetry data to").
 *
 * Not read: `prometheus.scrape` / `pyroscope.scrape` `targets` (`"__address__" = "app:4000"`).
 * A scrape is Alloy pulling an endpoint the target exposes for it (Alloy docs,
 * "prometheus.scrape": "configures a Prometheus scraping job for a given set of targets"): the
 * telemetry flows from the target, and the project treats scrapes as monitoring, not a call a
 * request waits on (docs/decisions.md). Receivers' `endpoint` (`0.0.0.0:4317`) is where Alloy
 * listens, not an address it calls.
 */
import { entityKey } from '../evidence';
import { internalName, isLocalHost, parseHostPort } from '../shared/urls';
import { STRING } from './common';
import { hostLabel } from './connection-hosts';
import { push, type Ctx } from './connection-scan';

/** A top-level block's header: `otelcol.exporter.otlp "tempo" {`. */
const BLOCK_HEADER = /^[ \t]*([A-Za-z_][\w.]*)[ \t]*(?:"[^"\n]{0,200}"[ \t]*)?\{/;
/** An `endpoint = "host:port"` attribute (no scheme: a URL is the URL pass's). */
const ENDPOINT_ATTR = /(?:^|[\s{])endpoint[ \t]*=[ \t]*"([A-Za-z0-9_.-]{1,253}:\d{1,5})"/g;

/** The components that send to an endpoint: OpenTelemetry exporters. */
const isExporter = (component: string) => /^otelcol\.exporter\./.test(component);

/** Scans the comment-blanked text of an Alloy file for exporters' `host:port` endpoints. */
export function scanAlloyEndpoints(ctx: Ctx, code: string, mask: Uint8Array): void {
  const selfNames = new Set(ctx.unit.aliases);
  let depth = 0;
  let component = '';
  let offset = 0;
  const lines = code.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i]!;
    const start = offset;
    offset += text.length + 1;
    if (depth === 0) {
      const header = BLOCK_HEADER.exec(text);
      component = header ? (header[1] ?? '') : '';
    }
    ENDPOINT_ATTR.lastIndex = 0;
    let m: RegExpExecArray | null;
    while (isExporter(component) && (m = ENDPOINT_ATTR.exec(text)) !== null) {
      if (mask[start + m.index + m[0].indexOf('endpoint')] === STRING) continue;
      const hp = parseHostPort(m[1] ?? '');
      const internal = hp && !isLocalHost(hp.host) ? internalName(hp.host) : null;
      if (hp && internal !== null && !selfNames.has(internal)) {
        const line = i + 1;
        push(ctx, line, `svc\u0000${internal}`, () => ({
          kind: 'connection-string',
          relationship: 'connects_to',
          object: entityKey('service', internal),
          summary: `${ctx.unit.name} exports to service ${internal} at ${hostLabel(hp)} (${component})`,
          attributes: {
            scheme: 'grpc',
            host: hp.host,
            port: hp.port,
            has_credentials: false,
            internal_host: true,
            detected_by: 'alloy-exporter',
            setting: `${component}.client.endpoint`,
            in_test: ctx.inTest,
          },
        }));
      }
    }
    // Braces outside strings open and close blocks (comments are already blanked).
    for (let j = 0; j < text.length; j++) {
      if (mask[start + j] === STRING) continue;
      const c = text.charCodeAt(j);
      if (c === 123) depth++;
      else if (c === 125 && depth > 0) depth--;
    }
    if (depth === 0) component = '';
  }
}
