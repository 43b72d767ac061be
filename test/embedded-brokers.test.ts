/**
 * Embedded brokers: a service that starts a broker in its own process (ActiveMQ `BrokerService`)
 * hosts a queue of that engine (`queue:activemq`, embedded, its host named); addresses of the host
 * at the broker's ports (or with the engine's scheme, or in a variable naming the broker) are
 * connections to the queue, other addresses of the host stay calls to it. Compose replica
 * container names (`<project>_<service>_<n>`) name the compose service. Files written here.
 */
import test from 'ava';
import { replicaService } from '../analysis/cloud/compose-replicas';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';

const POM = (name: string, deps: string) =>
  `<project><modelVersion>4.0.0</modelVersion><groupId>x</groupId><artifactId>${name}</artifactId><version>1</version>
<dependencies><dependency><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-web</artifactId></dependency>${deps}</dependencies></project>`;
const AMQ =
  '<dependency><groupId>org.apache.activemq</groupId><artifactId>activemq-broker</artifactId></dependency>';

const SYSTEM: Record<string, string> = {
  'policy/pom.xml': POM('policy', AMQ),
  'policy/src/main/resources/application.properties':
    'server.port=8090\npolicy.tcpBind=tcp://0.0.0.0:61616\npolicy.stompBind=stomp://0.0.0.0:61613\n',
  'policy/src/main/java/x/MessagingConfiguration.java': `package x;
import org.apache.activemq.broker.BrokerService;
public class MessagingConfiguration {
  @Bean
  public BrokerService broker() throws Exception {
    final BrokerService broker = new BrokerService();
    broker.addConnector(tcpBind);
    return broker;
  }
}
`,
  'selfservice/pom.xml': POM('selfservice', AMQ),
  'selfservice/src/main/java/x/App.java': 'package x;\npublic class App {}\n',
  'risk/package.json': '{ "name": "risk", "dependencies": { "stompit": "1.0.0" } }\n',
  'risk/index.js': "const stompit = require('stompit')\n",
  'portal/package.json': '{ "name": "portal", "dependencies": { "express": "4.0.0" } }\n',
  'portal/index.js': "require('express')().listen(3000)\n",
  'docker-compose.yml': `services:
  policy:
    build: policy
    ports: ["8090:8090", "61616:61616", "61613:61613"]
  selfservice:
    build: selfservice
    environment:
      - POLICY_TCPBIND=tcp://policy:61616
  risk:
    build: risk
    environment:
      - ACTIVEMQ_HOST=policy
      - ACTIVEMQ_PORT=61613
  portal:
    build: portal
    environment:
      - POLICY_URL=http://policy:8090
`,
};

test('a service starting an ActiveMQ BrokerService hosts queue:activemq, reached at its ports', async (t) => {
  const { graph } = await analyzeFileMap(SYSTEM);
  const queue = graph.entities.find((e) => e.canonical_key === 'queue:activemq');
  t.truthy(queue);
  t.is(queue?.attributes.host, 'service:policy');
  t.is(queue?.attributes.embedded, true);
  const c = connections(graph);
  t.true(c.includes('service:policy -> queue:activemq'));
  t.true(c.includes('service:selfservice -> queue:activemq'));
  t.true(c.includes('service:risk -> queue:activemq'));
  t.false(c.includes('service:selfservice -> service:policy'));
  t.false(c.includes('service:risk -> service:policy'));
  // The host's HTTP port stays a call to the host.
  t.true(c.includes('service:portal -> service:policy'));
  t.false(c.includes('service:portal -> queue:activemq'));
});

test('a broker only a test starts hosts nothing', async (t) => {
  const files = { ...SYSTEM };
  files['policy/src/test/java/x/MessagingConfiguration.java'] =
    files['policy/src/main/java/x/MessagingConfiguration.java']!;
  delete files['policy/src/main/java/x/MessagingConfiguration.java'];
  const { graph } = await analyzeFileMap(files);
  t.false(entityKeys(graph).includes('queue:activemq'));
  t.true(connections(graph).includes('service:selfservice -> service:policy'));
});

test('a commented-out broker hosts nothing', async (t) => {
  const files = { ...SYSTEM };
  files['policy/src/main/java/x/MessagingConfiguration.java'] =
    'package x;\nimport org.apache.activemq.broker.BrokerService;\n// BrokerService b = new BrokerService();\n';
  const { graph } = await analyzeFileMap(files);
  t.false(entityKeys(graph).includes('queue:activemq'));
});

test('compose replica container names name the compose service', async (t) => {
  const projects = [
    { dir: 'core/lb', services: { app: {}, proxy: {} }, vars: new Map<string, string>() },
  ];
  t.is(replicaService('lb_app_3', projects), 'app');
  t.is(replicaService('lb-app-1', projects), 'app');
  t.is(replicaService('other_app_1', projects), null);
  t.is(replicaService('lb_app', projects), null);
  const named = [{ ...projects[0]!, name: 'shop' }];
  t.is(replicaService('shop_proxy_1', named), 'proxy');
  const { graph } = await analyzeFileMap({
    'core/pom.xml': POM('core', ''),
    'core/src/main/java/x/App.java': 'package x;\npublic class App {}\n',
    'core/Dockerfile': 'FROM eclipse-temurin:21\nCOPY target/app.jar /app.jar\n',
    'core/lb/docker-compose.yml': `services:
  app:
    build:
      context: ..
  proxy:
    build:
      context: ./nginx
    ports: ["80:80"]
    links: [app]
`,
    'core/lb/nginx/Dockerfile': 'FROM nginx\nCOPY nginx.conf /etc/nginx/nginx.conf\n',
    'core/lb/nginx/nginx.conf': `events {}
http {
  upstream app_servers {
    server lb_app_1:8110;
    server lb_app_2:8110;
  }
  server { listen 80; location / { proxy_pass http://app_servers; } }
}
`,
  });
  const keys = entityKeys(graph);
  t.false(keys.some((k) => /lb-app-\d/.test(k)));
  t.true(connections(graph).some((c) => /^service:proxy -> service:(app|core)$/.test(c)));
});
