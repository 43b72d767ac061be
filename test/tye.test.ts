/**
 * Microsoft Tye's tye.yaml (analysis/cloud/tye.ts): each service is a deployable named by its
 * tye name, a `project` or a `dockerFile` build is the code unit of its folder (a Go module named
 * after its repository takes the tye name), an image is pulled (a datastore image is a store),
 * and `env` addresses on the host (`localhost`, `host.docker.internal`) reach the service binding
 * that port. Fixtures of our own, written inline.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { analyzeFiles, connections as edges, entityKeys as keys } from './helpers/pipeline';

const TYE: SourceFile = {
  path: 'tye.yaml',
  text: [
    'name: shop',
    'services:',
    '- name: gatewayapp',
    '  project: src/api-gateway/Gateway.csproj',
    '  env:',
    '    - Orders__Address=http://host.docker.internal:6002',
    '    - Catalog__Address=http://localhost:6003',
    '    - Unknown__Address=http://localhost:7999',
    '  bindings:',
    '    - port: 6000',
    '      protocol: https',
    '- name: ordersapp',
    '  dockerFile: src/go/docker/Dockerfile-orders',
    '  dockerFileContext: src/go/',
    '  env:',
    '  - name: PG_HOST',
    '    value: postgres',
    '  bindings:',
    '    - port: 6002',
    '      containerPort: 6002',
    '- name: catalogapp',
    '  dockerFile: src/catalog/Dockerfile',
    '  bindings:',
    '    - port: 6003',
    '- name: postgres',
    '  image: postgres',
    '  env:',
    '  - name: POSTGRES_PASSWORD',
    '    value: "s3cret-Pa55"',
    '  bindings:',
    '  - port: 5432',
    '    connectionString: Server=${host};Port=${port};',
    '',
  ].join('\n'),
};
const FILES: SourceFile[] = [
  TYE,
  {
    path: 'src/api-gateway/Gateway.csproj',
    text: '<Project Sdk="Microsoft.NET.Sdk.Web"><PropertyGroup><TargetFramework>net6.0</TargetFramework></PropertyGroup></Project>\n',
  },
  {
    path: 'src/api-gateway/Program.cs',
    text: 'var builder = WebApplication.CreateBuilder(args);\nvar app = builder.Build();\napp.MapGet("/", () => "ok");\napp.Run();\n',
  },
  { path: 'src/go/go.mod', text: 'module github.com/acme/shop-microservices\n\ngo 1.17\n' },
  {
    path: 'src/go/cmd/orders/main.go',
    text: 'package main\n\nimport "net/http"\n\nfunc main() { http.ListenAndServe(":6002", nil) }\n',
  },
  {
    path: 'src/go/docker/Dockerfile-orders',
    text: 'FROM golang:1.17 AS build\nWORKDIR /src\nCOPY . ./\nRUN go build ./cmd/orders\nFROM scratch\nCOPY --from=build /src/orders /bin/orders\nENTRYPOINT ["/bin/orders"]\n',
  },
  {
    path: 'src/catalog/package.json',
    text: '{"name":"catalog","version":"1.0.0","main":"index.js","dependencies":{"express":"^4.0.0"}}\n',
  },
  {
    path: 'src/catalog/index.js',
    text: "const express = require('express');\nexpress().listen(6003);\n",
  },
  { path: 'src/catalog/Dockerfile', text: 'FROM node:18\nCOPY . .\nCMD ["node", "index.js"]\n' },
];

test('tye: services are deployables named by tye, built from their project or Docker context', async (t) => {
  const { graph } = await analyzeFiles(FILES);
  const k = keys(graph);
  for (const want of ['service:gatewayapp', 'service:ordersapp', 'service:catalogapp'])
    t.true(k.includes(want), `${want} in ${k.join(', ')}`);
  t.true(k.includes('datastore:postgres'), k.join(', '));
  // The Go module named after the repository is the unit tye builds as ordersapp.
  t.false(
    k.some((x) => /shop-microservices|^service:gateway$|^service:catalog$/.test(x)),
    k.join(', '),
  );
});

test('tye: env addresses on the host reach the service binding that port; names resolve', async (t) => {
  const { graph, evidence } = await analyzeFiles(FILES);
  t.deepEqual(edges(graph), [
    'service:gatewayapp -> service:catalogapp',
    'service:gatewayapp -> service:ordersapp',
    'service:ordersapp -> datastore:postgres',
  ]);
  // A host port no service binds is left unresolved, not drawn as an external system.
  t.false(evidence.some((e) => e.provider === 'tye' && e.object_key?.startsWith('external:')));
  // The image's own password is a literal secret, said so.
  t.true(
    evidence.some(
      (e) =>
        e.provider === 'tye' && e.evidence_kind === 'literal-secret' && e.location.start_line > 0,
    ),
  );
});

test('tye: a file that does not parse is a gap, not an empty system', async (t) => {
  const { graph } = await analyzeFiles([{ path: 'tye.yaml', text: 'services:\n- name: [a\n' }]);
  t.deepEqual(keys(graph), []);
});
