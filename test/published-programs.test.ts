/**
 * Programs a repository publishes as images and deploys by image name only (issue 23, session
 * 15): one image repository with a tag per program is each tag's code unit; a host:port held by
 * a JavaScript variable and spliced into a URL template is an address; a script a container's
 * command runs from a bind-mounted folder is that container's code; a program whose manifests
 * declare a store's client library uses the store it depends on. Small repositories written
 * here. Pure.
 */
import test from 'ava';
import { jsLiteralVariables } from '../analysis/code/string-constants';
import { analyzeFileMap, connections as edges, entityKeys as keys } from './helpers/pipeline';

const WORKFLOW = `name: images
on: { push: { branches: [main] } }
jobs:
  build:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        app: [caller-app, web-app]
    steps:
      - uses: actions/checkout@v4
      - uses: docker/build-push-action@v6
        with:
          context: apps
          file: apps/docker/Dockerfile
          build-args: APP=\${{ matrix.app }}
          push: true
          tags: ghcr.io/acme/shop:\${{ matrix.app }}-\${{ github.sha }}
`;

const COMPOSE = `services:
  api:
    image: ghcr.io/acme/shop:api-app-latest
    ports: ["4000:4000"]
  caller:
    image: ghcr.io/acme/shop:caller-app-latest
    depends_on: [broker]
  web:
    image: ghcr.io/acme/shop:web-app-1.4.2
    ports: ["8080:80"]
  broker:
    image: rabbitmq:3
  load:
    image: grafana/k6:1.5.0
    volumes: ["./load:/scripts"]
    command: ["run", "/scripts/test.js"]
  static:
    image: nginx:alpine
    volumes: ["./static:/usr/share/nginx/html"]
`;

const FILES: Record<string, string> = {
  '.github/workflows/images.yml': WORKFLOW,
  'docker-compose.yml': COMPOSE,
  'apps/docker/Dockerfile': 'FROM node:20\nARG APP\nCOPY ${APP}/*.js ./\nCMD ["npm", "start"]\n',
  // The manifests' names are not the folders' (what the tags say).
  'apps/api-app/package.json': '{"name":"backend","scripts":{"start":"node index.js"}}',
  'apps/api-app/index.js': 'require("express")().listen(4000);\n',
  'apps/caller-app/package.json':
    '{"name":"httpcaller","scripts":{"start":"node index.js"},"dependencies":{"axios":"1","amqplib":"0.10"}}',
  'apps/caller-app/index.js': `const axios = require('axios');
const send = require('./queue');
let apiHostPort = "api:4000"
if (process.env.API_HOST_PORT) {
  apiHostPort = process.env.API_HOST_PORT
}
axios.get(\`http://\${apiHostPort}/items\`).then(() => send('done'));
`,
  'apps/web-app/package.json': '{"name":"frontend-ui","scripts":{"start":"vite"}}',
  'apps/web-app/Dockerfile': 'FROM nginx:alpine\nCOPY nginx.conf /etc/nginx/nginx.conf\n',
  'apps/web-app/nginx.conf':
    'events {}\nhttp {\n  server {\n    listen 80;\n    location /api/ {\n      proxy_pass http://api:4000;\n    }\n  }\n}\n',
  'load/test.js':
    'import http from "k6/http";\nconst url = "http://api:4000";\nexport default function () {\n  http.get(`${url}/items`);\n}\n',
  'static/app.js': 'fetch("http://caller:9000/ping");\n',
};

test('image tags: a deployment running the tag of a published program is that code unit', async (t) => {
  const { graph } = await analyzeFileMap(FILES);
  const k = keys(graph);
  // The units named by their manifests merge into the services running their tags.
  for (const name of ['backend', 'httpcaller', 'frontend-ui'])
    t.false(k.includes(`service:${name}`), name);
  // The web unit's nginx route is the web service's.
  t.true(edges(graph).includes('service:web -> service:api'));
});

test('image tags: a vendor image tag names no unit of the repository', async (t) => {
  const { graph } = await analyzeFileMap({
    'docker-compose.yml': 'services:\n  portal:\n    image: acme/portal:worker-latest\n',
    'worker/package.json': '{"name":"worker","scripts":{"start":"node index.js"}}',
    'worker/index.js': 'console.log(1);\n',
  });
  // Nothing in the repository builds acme/portal: the worker stays its own unit.
  t.true(keys(graph).includes('service:worker'));
  t.true(keys(graph).includes('service:portal'));
});

test('URL templates: a variable holding host:port spliced after http:// is that address', async (t) => {
  const { graph } = await analyzeFileMap(FILES);
  t.true(edges(graph).includes('service:caller -> service:api'));
});

test('literal variables: one literal per name; two different literals name none', (t) => {
  const v = jsLiteralVariables(
    'let a = "x:1"\na = process.env.A\nconst b = "y"; b2 = "z";\nlet c = "p"\nc = "q"\nif (d === "e") {}\n',
  );
  t.is(v.get('a'), 'x:1');
  t.is(v.get('b'), 'y');
  t.is(v.get('b2'), 'z');
  t.false(v.has('c'));
  t.false(v.has('d'));
});

test('run scripts: a script the command runs from a bind mount is the container code', async (t) => {
  const { graph } = await analyzeFileMap(FILES);
  const e = edges(graph);
  t.true(e.includes('service:load -> service:api'));
  // A folder only served (mounted, never named by the command) is not run by the container.
  t.false(e.includes('service:static -> service:caller'));
  t.false(keys(graph).some((x) => x.startsWith('program:')));
});

test('depended stores: a program declaring the store client uses the one store it depends on', async (t) => {
  const { graph } = await analyzeFileMap(FILES);
  // The caller's queue address is in no file of its folder; it declares amqplib.
  t.true(edges(graph).includes('service:caller -> queue:broker'));
});
