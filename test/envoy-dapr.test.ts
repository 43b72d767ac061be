/**
 * An Envoy gateway that calls Dapr apps through its Dapr sidecar: routes rewritten to Dapr's
 * service-invocation path (`/v1.0/invoke/<app-id>/method/`), or adding the `dapr-app-id` header,
 * are calls from the service that builds or mounts the Envoy file to that app.
 */
import test from 'ava';
import { analyzeFiles, connections } from './helpers/pipeline';

const ENVOY_V2 = `static_resources:
  listeners:
  - address:
      socket_address: { address: 0.0.0.0, port_value: 80 }
    filter_chains:
    - filters:
      - name: envoy.http_connection_manager
        config:
          route_config:
            virtual_hosts:
            - name: backend
              domains: ["*"]
              routes:
              - name: "b"
                match:
                  prefix: "/b/"
                route:
                  prefix_rewrite: "/v1.0/invoke/basket-api/method/"
                  cluster: dapr
              - name: "pics"
                match:
                  prefix: "/pics/"
                route:
                  prefix_rewrite: "/pics/"
                  cluster: dapr
              - name: "dynamic"
                match:
                  prefix: "/d/"
                route:
                  prefix_rewrite: "/v1.0/invoke/\${APP}/method/"
                  cluster: dapr
              - name: "agg"
                match:
                  prefix: "/"
                route:
                  prefix_rewrite: "/v1.0/invoke/aggregator/method/"
                  cluster: dapr
  clusters:
  - name: dapr
    type: strict_dns
    hosts:
    - socket_address:
        address: 127.0.0.1
        port_value: 3500
`;

const ENVOY_V3 = `static_resources:
  listeners:
  - filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          "@type": type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager
          route_config:
            virtual_hosts:
            - name: all
              domains: ["*"]
              routes:
              - match: { prefix: "/orders" }
                route:
                  cluster: sidecar
                  regex_rewrite:
                    pattern: { regex: "^/orders/(.*)" }
                    substitution: "/v1.0/invoke/ordering/method/\\\\1"
              - match: { prefix: "/stock" }
                request_headers_to_add:
                - header: { key: dapr-app-id, value: inventory }
                route: { cluster: sidecar }
  clusters:
  - name: sidecar
    load_assignment:
      cluster_name: sidecar
      endpoints:
      - lb_endpoints:
        - endpoint: { address: { socket_address: { address: localhost, port_value: 3500 } } }
`;

test('envoy routes rewritten to Dapr invocation (or with a dapr-app-id header) call that app from the gateway service', async (t) => {
  const files = [
    {
      path: 'docker-compose.yml',
      text: `services:
  gateway:
    build:
      context: .
      dockerfile: gateways/envoy/Dockerfile
  edge:
    image: envoyproxy/envoy:v1.31
    volumes:
      - ./edge/envoy.yaml:/etc/envoy/envoy.yaml
  basket-api:
    image: shop/basket:1
  aggregator:
    image: shop/agg:1
  ordering:
    image: shop/ordering:1
  inventory:
    image: shop/inventory:1
`,
    },
    {
      path: 'gateways/envoy/Dockerfile',
      text: 'FROM envoyproxy/envoy:v1.14.2\nCOPY gateways/envoy/envoy.yaml /etc/envoy.yaml\n',
    },
    { path: 'gateways/envoy/envoy.yaml', text: ENVOY_V2 },
    { path: 'edge/envoy.yaml', text: ENVOY_V3 },
  ];
  const { graph, evidence } = await analyzeFiles(files);
  const e = connections(graph);
  const msg = e.join('\n');
  t.true(e.includes('service:gateway -> service:basket-api'), msg);
  t.true(e.includes('service:gateway -> service:aggregator'), msg);
  t.true(e.includes('service:edge -> service:ordering'), msg);
  t.true(e.includes('service:edge -> service:inventory'), msg);
  // Must not: a route that rewrites to no Dapr path, or names the app by a variable, nor the
  // sidecar's loopback cluster itself.
  t.deepEqual(
    e.filter((x) => x.startsWith('service:gateway ->')),
    ['service:gateway -> service:aggregator', 'service:gateway -> service:basket-api'],
  );
  const basket = evidence.find(
    (x) => x.provider === 'envoy' && x.object_key === 'service:basket-api',
  )!;
  t.is(basket.location.path, 'gateways/envoy/envoy.yaml');
  t.is(basket.location.start_line, 14);
  t.like(basket.attributes, { directive: 'dapr-invoke', upstream: 'dapr' });
});
