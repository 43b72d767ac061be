/**
 * Dapr service invocation through the sidecar's HTTP proxy with the `dapr-app-id` header set
 * from a variable read from the environment with a literal default (analysis/code/dapr-header-env.ts).
 * A small Node app and a Python app written for this test.
 */
import test from 'ava';
import { envDefaultIds } from '../analysis/code/dapr-header-env';
import { analyzeFileMap, connections } from './helpers/pipeline';

const NODE_PKG = JSON.stringify({
  name: 'store',
  dependencies: { express: '^4.17.1', axios: '^0.27.0' },
});

const ROUTE = `const axios = require('axios').default;
const ordersApp = process.env.ORDERS_APP_ID || 'orders';
const daprPort = process.env.DAPR_HTTP_PORT || 3500;
const sidecar = \`http://localhost:\${daprPort}\`;
exports.get = async (id) =>
  axios.get(\`\${sidecar}/order?id=\${id}\`, { headers: { 'dapr-app-id': \`\${ordersApp}\` } });
`;

test('a dapr-app-id header from an env read with a default invokes the default app', async (t) => {
  const { graph } = await analyzeFileMap({
    'store/package.json': NODE_PKG,
    'store/app.js': "require('express')().listen(3000);\n",
    'store/routes/orders.js': ROUTE,
    'orders/requirements.txt': 'flask\n',
    'orders/app.py': 'from flask import Flask\napp = Flask(__name__)\napp.run(port=5000)\n',
  });
  const c = connections(graph);
  t.true(c.includes('service:store -> service:orders'), c.join('\n'));
  // The sidecar's port variable is no app id.
  t.false(
    c.some((x) => x.startsWith('service:store -> ') && /3500|localhost|dapr/.test(x)),
    c.join('\n'),
  );
});

test('a bare variable header and Python os.getenv defaults are read', async (t) => {
  const { graph } = await analyzeFileMap({
    'web/requirements.txt': 'flask\nrequests\n',
    'web/app.py': `import os
import requests
from flask import Flask
CART = os.getenv("CART_APP_ID", "cart")
DAPR = "http://localhost:3500"
app = Flask(__name__)
def get_cart():
    return requests.get(DAPR + "/cart", headers={"dapr-app-id": CART}).json()
`,
  });
  t.true(connections(graph).includes('service:web -> service:cart'), connections(graph).join('\n'));
});

test('a variable without a literal default, or assigned twice, names no app', (t) => {
  t.deepEqual(
    [...envDefaultIds("const a = process.env.A;\nconst b = process.env.B || 'x-y';\n")],
    [['b', { env: 'B', id: 'x-y' }]],
  );
  t.deepEqual([...envDefaultIds("let a = process.env.A || 'orders';\na = pick();\n")], []);
  // A default that is no app id (a URL) names nothing.
  t.deepEqual([...envDefaultIds("const u = process.env.U || 'http://x:80';\n")], []);
});

test('another header holding an env-read id is no Dapr invocation', async (t) => {
  const { graph } = await analyzeFileMap({
    'store/package.json': NODE_PKG,
    'store/app.js': `require('express')().listen(3000);
const target = process.env.TARGET || 'orders';
const h = { 'x-app-id': target };
`,
  });
  t.false(connections(graph).includes('service:store -> service:orders'));
});
