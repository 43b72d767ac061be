/**
 * containers-non-root on the effective configuration (issue 30, item 1): real Dockerfiles,
 * Kubernetes manifests and compose files through the analyzers, a case that must pass and one
 * that must fail per format.
 */
import test from 'ava';
import { assessFiles, control } from './helpers/assess-files';

const NON_ROOT = 'containers-non-root';
const deployment = (name: string, pod: string, container = '') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
${pod}
      containers:
        - name: server
          image: ${name}
${container}
`;
const ROOTFUL =
  'FROM golang:1.22 AS build\nUSER 1000\nRUN go build\nFROM alpine:3.20\nCOPY --from=build /app /app\n';

async function nonRoot(files: Record<string, string>) {
  const a = control(await assessFiles(files), NON_ROOT);
  return { a, titles: a.findings.map((f) => f.title) };
}

test('kubernetes: a pod-level runAsNonRoot makes an image without USER non-root', async (t) => {
  const { a } = await nonRoot({
    'src/cart/Dockerfile': ROOTFUL,
    'k8s/cart.yaml': deployment(
      'cart',
      '      securityContext:\n        runAsNonRoot: true\n        runAsUser: 1000',
    ),
  });
  t.is(a.status, 'pass');
  t.deepEqual(a.findings, []);
});

test('kubernetes: without any securityContext the image without USER runs as root', async (t) => {
  const { a, titles } = await nonRoot({
    'src/cart/Dockerfile': ROOTFUL,
    'k8s/cart.yaml': deployment('cart', '      serviceAccountName: cart'),
  });
  t.is(a.status, 'fail');
  t.is(a.findings.length, 1);
  t.is(a.findings[0]?.location?.path, 'src/cart/Dockerfile');
  t.regex(titles[0] ?? '', /no USER instruction.*does not override it/);
});

test('kubernetes: the container-level securityContext wins over the pod-level one', async (t) => {
  const pod = '      securityContext:\n        runAsNonRoot: true';
  const failing = await nonRoot({
    'k8s/api.yaml': deployment('api', pod, '          securityContext:\n            runAsUser: 0'),
  });
  t.is(failing.a.status, 'fail');
  t.regex(failing.titles[0] ?? '', /container server may run as root/);
  const passing = await nonRoot({
    'k8s/api.yaml': deployment(
      'api',
      '      securityContext:\n        runAsNonRoot: false',
      '          securityContext:\n            runAsNonRoot: true',
    ),
  });
  t.is(passing.a.status, 'pass');
});

test('dockerfile: only the final stage counts; distroless nonroot and numeric users are non-root', async (t) => {
  const pass = await nonRoot({
    'a/Dockerfile':
      'FROM golang:1.22 AS build\nRUN go build\nFROM gcr.io/distroless/static:nonroot\nCOPY --from=build /a /a\n',
    'b/Dockerfile': 'FROM node:20-alpine\nUSER 10001:10001\n',
    'c/Dockerfile': 'FROM alpine:3.20 AS base\nUSER 1000\nFROM base\nRUN true\n',
    // A published image whose own default user is not root.
    'd/Dockerfile': 'FROM grafana/grafana:10.4.2\nCOPY dashboards /etc/grafana\n',
  });
  t.is(pass.a.status, 'pass', pass.titles.join('\n'));
  const fail = await nonRoot({
    'a/Dockerfile': ROOTFUL,
    'b/Dockerfile': 'FROM node:20-alpine\nUSER 0:0\n',
    'c/Dockerfile': 'FROM gcr.io/distroless/static:latest\n',
    'd/Dockerfile': 'FROM nginx:1.27-alpine\nCOPY site /usr/share/nginx/html\n',
  });
  t.is(fail.a.status, 'fail');
  t.deepEqual(fail.a.findings.map((f) => f.location?.path).sort(), [
    'a/Dockerfile',
    'b/Dockerfile',
    'c/Dockerfile',
    'd/Dockerfile',
  ]);
});

test('compose: user: overrides the image; a service built without USER and no user: fails', async (t) => {
  const dockerfile = 'FROM python:3.12-slim\nCMD ["python"]\n';
  const pass = await nonRoot({
    'web/Dockerfile': dockerfile,
    'docker-compose.yml': 'services:\n  web:\n    build: ./web\n    user: "1000:1000"\n',
  });
  t.is(pass.a.status, 'pass', pass.titles.join('\n'));
  const fail = await nonRoot({
    'web/Dockerfile': dockerfile,
    'worker/Dockerfile': 'FROM python:3.12-slim\nUSER app\n',
    'docker-compose.yml':
      'services:\n  web:\n    build: ./web\n  worker:\n    build: ./worker\n    user: root\n',
  });
  t.is(fail.a.status, 'fail');
  t.deepEqual(fail.a.findings.map((f) => f.location?.path).sort(), [
    'docker-compose.yml',
    'web/Dockerfile',
  ]);
});

test('test, code-generation and dev Dockerfiles are out of scope, and the applicability says so', async (t) => {
  const { a } = await nonRoot({
    'svc/Dockerfile': 'FROM alpine:3.20\nUSER 1000\n',
    'test/e2e/Dockerfile': 'FROM cypress/included:13.6.0\n',
    'src/checkout/genproto/Dockerfile': 'FROM golang:1.22\n',
    'src/frontend/Dockerfile.cypress': 'FROM cypress/base:20\n',
    'svc/Dockerfile.debug': 'FROM alpine:3.20\n',
  });
  t.is(a.status, 'pass');
  t.deepEqual(a.findings, []);
  t.regex(
    a.applicability_rationale,
    /out of scope: .*src\/checkout\/genproto\/Dockerfile \(a code-generation image\)/,
  );
  t.regex(a.applicability_rationale, /test\/e2e\/Dockerfile \(a test image\)/);
  t.regex(a.applicability_rationale, /svc\/Dockerfile\.debug \(a development or debug image\)/);
});

test('an artifact carrier and a test runner nothing deploys are out of scope, with the reason', async (t) => {
  const { a } = await nonRoot({
    'svc/Dockerfile': 'FROM alpine:3.20\nUSER 1000\n',
    'mobile/android.Dockerfile':
      'FROM node:20 AS builder\nRUN ./gradlew assembleRelease\nFROM scratch\nCOPY --from=builder /out/app-release.apk /app.apk\nENTRYPOINT ["/app.apk"]\n',
    'exports/Dockerfile':
      'FROM golang:1.22 AS b\nRUN go build -o /bin/x\nFROM scratch\nCOPY --from=b /bin/x /x\n',
    'contract/Dockerfile':
      'FROM node:20-alpine\nRUN npm install\nENTRYPOINT ["/usr/src/app/node_modules/dredd/bin/dredd"]\n',
    'suite/Dockerfile': 'FROM node:20\nCOPY . .\nCMD ["npm", "test"]\n',
  });
  t.is(a.status, 'pass', a.findings.map((f) => f.title).join('\n'));
  t.deepEqual(a.findings, []);
  t.regex(a.applicability_rationale, /mobile\/android\.Dockerfile \(an artifact carrier/);
  t.regex(a.applicability_rationale, /exports\/Dockerfile \(an artifact carrier/);
  t.regex(
    a.applicability_rationale,
    /contract\/Dockerfile \(a test runner image \(it runs dredd\)/,
  );
  t.regex(
    a.applicability_rationale,
    /suite\/Dockerfile \(a test runner image \(it runs npm test\)/,
  );
});

test('a scratch image that runs a program, and a test runner a deployment runs, are judged', async (t) => {
  const { a } = await nonRoot({
    'api/Dockerfile':
      'FROM golang:1.22 AS b\nRUN go build -o /server\nFROM scratch\nCOPY --from=b /server /server\nENTRYPOINT ["/server"]\n',
    'checker/Dockerfile': 'FROM node:20-alpine\nENTRYPOINT ["dredd"]\n',
    'docker-compose.yml': 'services:\n  checker:\n    build: ./checker\n',
  });
  t.is(a.status, 'fail');
  t.deepEqual(a.findings.map((f) => f.location?.path).sort(), [
    'api/Dockerfile',
    'checker/Dockerfile',
  ]);
  t.notRegex(a.applicability_rationale, /api\/Dockerfile|checker\/Dockerfile/);
});
