/**
 * Stores missed at first sight (issue 23, session 11): a local address in a profile's settings
 * reaching the store a compose file publishes on its port, and Azure stores declared in Bicep
 * joined by the code's SDK client. Each with a small system written for this test.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { analyzeCloud } from '../analysis/cloud';
import { bicepStoreClass } from '../analysis/cloud/bicep';
import { analyzeFiles, connections, entityKeys } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const POM = `<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.example</groupId>
  <artifactId>clinic</artifactId>
  <name>clinic</name>
  <dependencies>
    <dependency><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-data-jpa</artifactId></dependency>
    <dependency><groupId>com.mysql</groupId><artifactId>mysql-connector-j</artifactId></dependency>
    <dependency><groupId>org.postgresql</groupId><artifactId>postgresql</artifactId></dependency>
  </dependencies>
</project>
`;
const SPRING = {
  'pom.xml': POM,
  'src/main/java/org/example/App.java':
    'package org.example;\n@SpringBootApplication\npublic class App { public static void main(String[] a) {} }\n',
  'src/main/resources/application.properties': 'database=h2\n',
  'src/main/resources/application-mysql.properties':
    'spring.datasource.url=${MYSQL_URL:jdbc:mysql://localhost/clinic}\n',
  'src/main/resources/application-postgres.properties':
    'spring.datasource.url=${POSTGRES_URL:jdbc:postgresql://localhost/clinic}\n',
};
const DATABASES = `services:
  mysql:
    image: mysql:9
    ports:
      - "3306:3306"
  postgres:
    image: postgres:18
    ports:
      - "5432:5432"
`;

test('a local address in a profile reaches the one compose store published on its port', async (t) => {
  const { graph } = await analyzeFiles(files({ ...SPRING, 'docker-compose.yml': DATABASES }));
  t.deepEqual(connections(graph), [
    'service:clinic -> datastore:mysql',
    'service:clinic -> datastore:postgres',
  ]);
  // An inference from a port: never a confident edge.
  for (const r of graph.relationships.filter((x) => x.kind === 'connects_to'))
    t.true(Number(r.confidence) <= 0.6, r.confidence);

  // Not published on the host (or on another port): the local address reaches nothing we know.
  const unpublished = await analyzeFiles(
    files({
      ...SPRING,
      'docker-compose.yml': `services:
  mysql:
    image: mysql:9
    ports:
      - "3307:3306"
  postgres:
    image: postgres:18
`,
    }),
  );
  t.deepEqual(connections(unpublished.graph), []);

  // Two stores of the engine publishing the port (in two files): which one is unknown.
  const two = await analyzeFiles(
    files({
      ...SPRING,
      'docker-compose.yml': DATABASES,
      'other/docker-compose.yml':
        'services:\n  db2:\n    image: mysql:8\n    ports: ["3306:3306"]\n',
    }),
  );
  t.false(connections(two.graph).some((c) => c.endsWith('datastore:mysql')));
  t.true(connections(two.graph).includes('service:clinic -> datastore:postgres'));
});

test('a service compose runs is not joined by its localhost settings', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      ...SPRING,
      Dockerfile:
        'FROM eclipse-temurin:21\nCOPY target/app.jar /app.jar\nCMD ["java","-jar","/app.jar"]\n',
      'docker-compose.yml': `${DATABASES}  clinic:
    build: .
`,
    }),
  );
  t.deepEqual(connections(graph), []);
});

const COSMOS_MODULE = `param accountName string
module cosmos 'br/public:avm/res/document-db/database-account:0.6.0' = {
  name: 'cosmos-sql'
  params: {
    name: accountName
    sqlDatabases: [
      {
        name: 'Todo'
      }
    ]
  }
}
output endpoint string = cosmos.outputs.endpoint
`;
const ROLE = `param cosmosAccountName string
resource roleAssignment 'Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments@2024-05-15' = {
  name: '\${cosmosAccountName}/role'
  properties: {}
}
`;
const API = {
  'src/api/package.json': JSON.stringify({
    name: 'todo-api',
    scripts: { start: 'node dist/index.js' },
    dependencies: { '@azure/cosmos': '^4.4.1', express: '^4.0.0' },
  }),
  'src/api/src/index.ts':
    'import { CosmosClient } from "@azure/cosmos";\nimport express from "express";\nconst client = new CosmosClient({ endpoint: process.env.AZURE_COSMOS_ENDPOINT! });\nexpress().listen(3100);\n',
  'src/api/Dockerfile': 'FROM node:20\nCOPY . .\nCMD ["npm", "run", "start"]\n',
};

test('Bicep: a Cosmos DB account (Azure Verified Module) is a store the SDK client joins; child resources declare none', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({ 'infra/app/db.bicep': COSMOS_MODULE, 'infra/app/role.bicep': ROLE, ...API }),
  );
  t.true(entityKeys(graph).includes('datastore:cosmos'));
  t.false(entityKeys(graph).some((k) => k.includes('roleassignment')));
  t.deepEqual(connections(graph), ['service:api -> datastore:cosmos']);
  const declared = evidence.find((e) => e.subject_key === 'datastore:cosmos')!;
  t.is(declared.attributes.engine, 'cosmosdb');
  t.deepEqual([declared.location.start_line, declared.location.end_line], [2, 12]);
  t.true(Number(graph.relationships.find((r) => r.kind === 'connects_to')!.confidence) < 0.5);
});

test('Bicep: resource types and modules by engine; beside a compose deployment it is a second variant', async (t) => {
  t.deepEqual(bicepStoreClass('resource', 'Microsoft.Cache/redis@2023-08-01'), {
    kind: 'datastore',
    engine: 'redis',
  });
  t.deepEqual(bicepStoreClass('resource', 'Microsoft.ServiceBus/namespaces@2022-10-01-preview'), {
    kind: 'queue',
    engine: 'servicebus',
  });
  t.is(bicepStoreClass('resource', 'Microsoft.Web/sites@2022-03-01'), null);
  t.is(bicepStoreClass('module', './app/db.bicep'), null);
  t.deepEqual(
    bicepStoreClass('module', 'br/public:avm/res/db-for-postgre-sql/flexible-server:0.1.0'),
    { kind: 'datastore', engine: 'postgres' },
  );
  // A Cosmos DB account of the MongoDB API is a MongoDB store to its clients.
  const mongo = await analyzeCloud(
    files({
      'main.bicep': `resource account 'Microsoft.DocumentDB/databaseAccounts@2023-04-15' = {
  name: 'acct'
  kind: 'MongoDB'
  properties: {}
}
`,
    }),
  );
  t.is(
    mongo.evidence.find((e) => e.evidence_kind === 'datastore-declared')?.attributes.engine,
    'mongodb',
  );
  // Beside compose: the Bicep stores stay out of the graph, and a gap says why.
  const both = await analyzeCloud(
    files({
      'infra/db.bicep': COSMOS_MODULE,
      'docker-compose.yml': 'services:\n  mongo:\n    image: mongo:7\n',
    }),
  );
  t.false(both.evidence.some((e) => e.provider === 'bicep'));
  t.true(
    both.gaps.some(
      (g) => g.path === 'infra/db.bicep' && g.reason === 'secondary_deployment_variant',
    ),
  );
});
