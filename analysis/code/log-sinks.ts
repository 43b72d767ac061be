/**
 * Log-shipping sinks (docs/decisions.md, "A log sink's address is telemetry, not a call"):
 * Serilog's HTTP sink (`Serilog.Sinks.Http`: `.WriteTo.Http(requestUri, ...)`,
 * `.WriteTo.DurableHttpUsingFileSizeRolledBuffers(requestUri, ...)`) posts the application's
 * own log events to a log collector (Logstash, Fluentd, Vector). The address written in that
 * call is where the logs go, not a service the application calls for its work.
 *
 * Only the generic HTTP sink is read so: a store-backed sink (`WriteTo.Seq`,
 * `WriteTo.Elasticsearch`) names a store of its own and keeps its edge.
 */
const HTTP_SINK = /\.WriteTo\.(?:Http|DurableHttp\w*)\s*\(/;

/** True when `before` (the code before an address on its line) opens a Serilog HTTP sink call. */
export function inLogSinkCall(before: string): boolean {
  return HTTP_SINK.test(before);
}
