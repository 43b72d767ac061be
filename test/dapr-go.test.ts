/**
 * The Dapr Go SDK (github.com/dapr/go-sdk): a subscription declared as a struct
 * (`&common.Subscription{PubsubName: "pubsub", ...}`), state and pub/sub calls with any context
 * expression before the component name, and a Helm value that is a URL (`image: https://...`)
 * never taken for an image that names a code unit. A small system written for this test.
 */
import test from 'ava';
import type { Graph } from '../analysis/reconcile';
import { analyzeFileMap } from './helpers/pipeline';

const edges = (g: Graph) => g.relationships.map((r) => `${r.source_key} -> ${r.target_key}`);

const component = (name: string, type: string) => `apiVersion: dapr.io/v1alpha1
kind: Component
metadata:
  name: ${name}
spec:
  type: ${type}
  version: v1
  metadata:
  - name: redisHost
    value: localhost:6379
`;

const goMod = (m: string) =>
  `module github.com/acme/${m}\n\ngo 1.22\n\nrequire github.com/dapr/go-sdk v1.10.0\n`;

test('the Dapr Go SDK: a subscription struct and calls with a context name their components', async (t) => {
  const { graph, evidence } = await analyzeFileMap({
    'components/pubsub.yaml': component('pubsub', 'pubsub.redis'),
    'components/statestore.yaml': component('statestore', 'state.redis'),
    'sale/go.mod': goMod('sale'),
    'sale/main.go': `package main

import (
\t"github.com/dapr/go-sdk/service/common"
\tdaprd "github.com/dapr/go-sdk/service/http"
)

const ordersPubsub = "orders-pubsub"

var sub = &common.Subscription{
\tPubsubName: "pubsub",
\tTopic:      "processing-order",
\tRoute:      "/orders",
}

var second = &common.Subscription{Topic: "paid", PubsubName: ordersPubsub, Route: "/paid"}

func main() {
\ts := daprd.NewService(":5005")
\t_ = s.AddTopicEventHandler(sub, handler)
\t// Logging a subscription's fields names no component.
\tlog.Printf("PubsubName: %s", e.PubsubName)
}
`,
    'cart/go.mod': goMod('cart'),
    'cart/main.go': `package main

import dapr "github.com/dapr/go-sdk/client"

func save(r *http.Request, client dapr.Client) {
\tclient.SaveState(r.Context(), "statestore", "k", data, nil)
\tclient.PublishEvent(context.Background(), "pubsub", "topic", data)
}
`,
  });
  const e = edges(graph);
  const msg = e.join('\n');
  t.true(e.includes('service:sale -> queue:pubsub'), msg);
  t.true(e.includes('service:sale -> queue:orders-pubsub'), msg);
  t.true(e.includes('service:cart -> datastore:statestore'), msg);
  t.true(e.includes('service:cart -> queue:pubsub'), msg);
  const cited = evidence.find(
    (x) => x.subject_key === 'service:sale' && x.object_key === 'queue:pubsub',
  );
  t.is(cited?.location.start_line, 10);
  t.is(cited?.attributes.via, 'dapr-pubsub');
});

test('a Helm image value that is a URL does not join the chart to the code unit of that name', async (t) => {
  const { graph } = await analyzeFileMap({
    'src/go/go.mod': goMod('shop'),
    'src/go/main.go': 'package main\n\nfunc main() {}\n',
    'charts/web/Chart.yaml': 'apiVersion: v2\nname: web\nversion: 0.1.0\nappVersion: "1.0"\n',
    'charts/web/values.yaml':
      'fullnameOverride: web\nimage:\n  repository: https://github.com/acme/shop\n  pullPolicy: IfNotPresent\n',
  });
  const shop = graph.entities.find((x) => x.canonical_key === 'service:shop');
  t.truthy(shop, graph.entities.map((x) => x.canonical_key).join(', '));
  const aliases = (shop?.attributes.aliases as string[] | undefined) ?? [];
  t.false(aliases.includes('service:web'), aliases.join(', '));
});
