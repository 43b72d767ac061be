/**
 * Envoy routes that call a Dapr app through a Dapr sidecar: a route whose `prefix_rewrite` (or
 * `regex_rewrite.substitution`) is Dapr's service-invocation path `/v1.0/invoke/<app-id>/method/`,
 * or that adds the `dapr-app-id: <app-id>` request header, sends the request to that app (the
 * cluster it names is the sidecar, `127.0.0.1:3500`, which forwards it). The gateway Envoy runs in
 * then calls the app: analysis/cloud/proxies.ts cites the route as a `connects_to` from the
 * service that mounts or builds the file to `service:<app-id>`.
 *
 * Read from the static listeners (`static_resources.listeners[].filter_chains[].filters[]`, the
 * HTTP connection manager's `typed_config` or v2 `config`, `route_config.virtual_hosts[].routes[]`).
 * A rewrite with a variable or a regex group in the app id names nothing.
 */
import type { Span } from '../shared/evidence';
import { asArray, asString, isRecord } from '../shared/values';

/** One route to a Dapr app: where it is written, the app id, the cluster it goes through. */
export interface DaprRoute {
  span: Span;
  appId: string;
  cluster: string | null;
  route: string | null;
}

const INVOKE = /^\/?v1\.0\/invoke\/([a-z0-9](?:[a-z0-9.-]{0,61}[a-z0-9])?)\/method(\/|$)/;
const APP_ID = /^[a-z0-9](?:[a-z0-9.-]{0,61}[a-z0-9])?$/;

type PathItem = string | number;

/** The app id a route invokes through Dapr, from its rewrite or its added headers; else null. */
function appIdOf(action: Record<string, unknown>, route: Record<string, unknown>): string | null {
  const regex = isRecord(action.regex_rewrite) ? action.regex_rewrite.substitution : undefined;
  for (const rewrite of [action.prefix_rewrite, regex]) {
    const m = INVOKE.exec(asString(rewrite)?.trim() ?? '');
    if (m) return m[1] ?? null;
  }
  for (const h of asArray(route.request_headers_to_add)) {
    const header = isRecord(h) && isRecord(h.header) ? h.header : null;
    if (asString(header?.key)?.toLowerCase() !== 'dapr-app-id') continue;
    const value = asString(header?.value)?.trim() ?? '';
    if (APP_ID.test(value)) return value;
  }
  return null;
}

/** Every route of an Envoy static configuration that invokes a Dapr app (module comment). */
export function envoyDaprRoutes(
  root: unknown,
  span: (path: readonly PathItem[]) => Span,
): DaprRoute[] {
  const out: DaprRoute[] = [];
  const sr = isRecord(root) ? root.static_resources : null;
  asArray(isRecord(sr) ? sr.listeners : null).forEach((l, li) => {
    asArray(isRecord(l) ? l.filter_chains : null).forEach((fc, ci) => {
      asArray(isRecord(fc) ? fc.filters : null).forEach((f, fi) => {
        if (!isRecord(f)) return;
        const configKey = isRecord(f.typed_config) ? 'typed_config' : 'config';
        const config = f[configKey];
        const rc = isRecord(config) ? config.route_config : null;
        asArray(isRecord(rc) ? rc.virtual_hosts : null).forEach((vh, vi) => {
          asArray(isRecord(vh) ? vh.routes : null).forEach((r, ri) => {
            if (!isRecord(r) || !isRecord(r.route)) return;
            const appId = appIdOf(r.route, r);
            if (!appId) return;
            const path: PathItem[] = [
              'static_resources',
              'listeners',
              li,
              'filter_chains',
              ci,
              'filters',
              fi,
              configKey,
              'route_config',
              'virtual_hosts',
              vi,
              'routes',
              ri,
            ];
            out.push({
              span: span(path),
              appId,
              cluster: asString(r.route.cluster) ?? null,
              route: asString(r.name) ?? null,
            });
          });
        });
      });
    });
  });
  return out;
}
