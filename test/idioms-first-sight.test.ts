/**
 * Idioms seen at first sight in new systems (issue 23, session 11), each on a small system written
 * for this test: vendor-wrapped engine images, build modules that run nothing, nested .NET
 * settings naming a host, a unit's own address, PHP DSNs, Go `LookupEnv` defaults.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { classifyImage } from '../analysis/cloud/common';
import { parseImageRef } from '../analysis/shared/images';
import { analyzeFiles, connections, entityKeys } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

test('a vendor-wrapped engine image is that engine; its tools are not', (t) => {
  const cls = (image: string) => classifyImage(parseImageRef(image));
  t.deepEqual(cls('eventuateio/eventuate-kafka:0.16'), { kind: 'queue', engine: 'kafka' });
  t.deepEqual(cls('acme/eventuate-mysql8'), { kind: 'datastore', engine: 'mysql' });
  t.deepEqual(cls('acme/rs-mysql-db:2'), { kind: 'datastore', engine: 'mysql' });
  t.deepEqual(cls('bitnami/redis-cluster'), { kind: 'datastore', engine: 'redis' });
  for (const tool of [
    'provectuslabs/kafka-ui',
    'obsidiandynamics/kafdrop',
    'kbudde/rabbitmq-exporter',
    'prom/mysqld-exporter',
    'mongo-express',
    'rediscommander/redis-commander',
    'confluentinc/cp-kafka-connect',
    'acme/debezium-connect-postgresql',
    'jaegertracing/jaeger-cassandra-schema',
    'acme/postgres-backup-s3',
    'eventuateio/eventuate-zookeeper',
  ])
    t.is(cls(tool), null, tool);
});

test('compose: services of a vendor-wrapped broker use a queue, not a service', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  kafka:
    image: eventuateio/eventuate-kafka:0.16.0
  kafka-gui:
    image: provectuslabs/kafka-ui:latest
    environment:
      KAFKA_CLUSTERS_0_BOOTSTRAPSERVERS: kafka:9092
  orders:
    image: acme/orders:1
    environment:
      SPRING_KAFKA_BOOTSTRAP_SERVERS: kafka:9092
`,
    }),
  );
  const keys = entityKeys(graph);
  t.true(keys.includes('queue:kafka'), keys.join('\n'));
  t.false(keys.includes('service:kafka'));
  t.true(keys.includes('service:kafka-gui'), 'a UI of the broker stays a service');
  t.true(
    connections(graph).includes('service:orders -> queue:kafka'),
    connections(graph).join('\n'),
  );
});

const GRADLE = {
  'settings.gradle': 'include "orders-service"\ninclude "orders-api"\ninclude "common"\n',
  'build.gradle': `buildscript {
    dependencies { classpath "org.springframework.boot:spring-boot-gradle-plugin:2.7.0" }
}
apply plugin: 'docker-compose'
subprojects { apply plugin: "java" }
`,
  'buildSrc/build.gradle': "plugins { id 'groovy' }\n",
  'buildSrc/src/main/groovy/ServicePlugin.groovy':
    'class ServicePlugin implements Plugin<Project> { void apply(Project p) {} }\n',
  'orders-api/build.gradle':
    'dependencies { implementation "com.fasterxml.jackson.core:jackson-databind:2.15.0" }\n',
  'orders-api/src/main/java/shop/orders/api/OrderCreated.java':
    'package shop.orders.api;\npublic class OrderCreated { public String id; }\n',
  'common/build.gradle':
    'dependencies { implementation "org.springframework.boot:spring-boot-starter-web:2.7.0" }\n',
  'common/src/main/java/shop/common/Money.java': 'package shop.common;\npublic class Money {}\n',
  'common/src/main/resources/application.properties':
    'shop.identity.url=http://identity/realms/shop\n',
  'orders-service/build.gradle': `apply plugin: 'org.springframework.boot'
dependencies { implementation project(":orders-api") }
`,
  'orders-service/src/main/java/shop/orders/OrdersApplication.java': `package shop.orders;
@SpringBootApplication
public class OrdersApplication { public static void main(String[] args) {} }
`,
  'worker/build.gradle':
    "plugins { id 'application' }\napplication { mainClass = 'shop.Worker' }\n",
  'worker/src/main/java/shop/Worker.java': 'package shop;\npublic class Worker {}\n',
};

test('gradle multi-project: modules that run nothing are no services', async (t) => {
  const { graph, evidence } = await analyzeFiles(files(GRADLE));
  const keys = entityKeys(graph);
  t.true(keys.includes('service:orders-service'), keys.join('\n'));
  t.true(keys.includes('service:worker'), 'the application plugin makes a runnable module');
  for (const lib of ['service:root', 'service:buildsrc', 'service:orders-api', 'service:common'])
    t.false(keys.includes(lib), `${lib} in ${keys.join(', ')}`);
  // A library's settings are no calls of a service.
  t.false(connections(graph).some((c) => c.startsWith('service:common ->')));
  const reason = evidence.find(
    (e) => e.evidence_kind === 'unit-declared' && e.subject_key === 'service:orders-api',
  )?.attributes;
  t.is(reason?.unit_class, 'library');
  t.regex(String(reason?.class_reason), /no application plugin, no main class/);
});

test('gradle: a library module that a compose service builds is a service', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      ...GRADLE,
      'docker-compose.yml': `services:
  common:
    build: ./common
`,
    }),
  );
  t.true(entityKeys(graph).includes('service:common'), entityKeys(graph).join('\n'));
});

test('maven: a lone module is the program, a module of an aggregator without main is a library', async (t) => {
  const lone = await analyzeFiles(
    files({
      'pom.xml': '<project><artifactId>billing</artifactId></project>',
      'src/main/java/Billing.java': 'public class Billing {}\n',
    }),
  );
  t.true(entityKeys(lone.graph).includes('service:billing'));
  const multi = await analyzeFiles(
    files({
      'pom.xml':
        '<project><artifactId>shop</artifactId><packaging>pom</packaging><modules><module>billing</module><module>common-library</module></modules></project>',
      'billing/pom.xml':
        '<project><artifactId>billing</artifactId><build><plugins><plugin><groupId>org.springframework.boot</groupId><artifactId>spring-boot-maven-plugin</artifactId></plugin></plugins></build></project>',
      'billing/src/main/java/Billing.java': 'public class Billing {}\n',
      'common-library/pom.xml': '<project><artifactId>common-library</artifactId></project>',
      'common-library/src/main/java/Money.java': 'public class Money {}\n',
    }),
  );
  const keys = entityKeys(multi.graph);
  t.true(keys.includes('service:billing'), keys.join('\n'));
  t.false(keys.includes('service:common-library'), keys.join('\n'));
});

const csproj = `<Project Sdk="Microsoft.NET.Sdk.Web">
  <PropertyGroup><TargetFramework>net8.0</TargetFramework></PropertyGroup>
</Project>`;

test('.NET settings: nested Redis / RabbitMQ keys are store connections; own and client URLs are no calls', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  redis:
    image: redis:7
  rabbitmq:
    image: rabbitmq:3-management
  catalog-service:
    build: ./catalog
  identity-service:
    build: ./identity
  web:
    image: acme/web:1
`,
      'catalog/Catalog.csproj': csproj,
      'catalog/Program.cs': 'var app = WebApplication.Create(args); app.Run();\n',
      'catalog/appsettings.Docker.json': `{
  // Settings of the Docker environment
  "App": {
    "SelfUrl": "https://catalog-service",
    "CorsOrigins": "https://web"
  },
  "RemoteServices": { "Identity": { "BaseUrl": "http://identity-service" } },
  "Redis": {
    "Configuration": "redis:6379,abortConnect=false"
  },
  "RabbitMQ": {
    "Connections": {
      "Default": {
        "HostName": "rabbitmq"
      }
    },
    "EventBus": { "ClientName": "Catalog" }
  },
  "Kestrel": {
    "EndPoints": {
      "Http": { "Url": "http://docker.host.internal:80" }
    }
  }
}
`,
      'identity/Identity.csproj': csproj,
      'identity/Program.cs': 'var app = WebApplication.Create(args); app.Run();\n',
      'identity/appsettings.json': `{
  "Redis": { "Configuration": "localhost:6379" },
  "IdentityServer": {
    "Clients": {
      "Web": { "RootUrl": "https://web", "RedirectUri": "https://web/signin-oidc" },
      "Catalog": { "RootUrl": "https://catalog-service" }
    }
  }
}
`,
    }),
  );
  const c = connections(graph);
  t.true(c.includes('service:catalog-service -> datastore:redis'), c.join('\n'));
  t.true(c.includes('service:catalog-service -> queue:rabbitmq'), c.join('\n'));
  t.true(c.includes('service:catalog-service -> service:identity-service'), c.join('\n'));
  // The unit's own public URL and listening endpoint, and the clients an identity provider
  // registers, are no calls; a local Redis names no store.
  t.false(c.includes('service:catalog-service -> service:catalog-service'), c.join('\n'));
  t.false(
    c.some((x) => x.endsWith('service:docker')),
    c.join('\n'),
  );
  t.false(
    c.some((x) => x.startsWith('service:identity-service ->')),
    c.join('\n'),
  );
  t.false(entityKeys(graph).includes('service:docker'));
  const roles = evidence
    .filter((e) => e.evidence_kind === 'address-handed')
    .map((e) => `${String(e.attributes.host)}:${String(e.attributes.address_role)}`);
  t.true(roles.includes('catalog-service:self'), roles.join('\n'));
  t.true(roles.includes('web:client-registration'), roles.join('\n'));
});

test('environment: `App__SelfUrl`, Kestrel endpoints and `*Clients__X__RootUrl` are no calls', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  identity:
    image: acme/identity:1
    environment:
      - App__SelfUrl=https://identity
      - Kestrel__Endpoints__Http__Url=http://identity:80
      - IdentityServerClients__Web__RootUrl=https://web
      - AuthServer__Authority=http://keycloak
  web:
    image: acme/web:1
    environment:
      - HttpClients__Catalog__RootUrl=http://catalog
  catalog:
    image: acme/catalog:1
  keycloak:
    image: quay.io/keycloak/keycloak:24.0
`,
    }),
  );
  const c = connections(graph);
  t.true(c.includes('service:identity -> service:keycloak'), c.join('\n'));
  t.true(c.includes('service:web -> service:catalog'), 'an HTTP client list is no client registry');
  t.false(c.includes('service:identity -> service:identity'), c.join('\n'));
  t.false(c.includes('service:identity -> service:web'), c.join('\n'));
});

test('spring: a setting bound only to return / cancel URL fields is handed to a provider, not called', async (t) => {
  const pom = (name: string) =>
    `<project><artifactId>${name}</artifactId><build><plugins><plugin><artifactId>spring-boot-maven-plugin</artifactId></plugin></plugins></build></project>`;
  const { graph, evidence } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  payment:
    build: ./payment
  storefront:
    image: acme/storefront:1
  orders:
    image: acme/orders:1
`,
      'payment/pom.xml': pom('payment'),
      'payment/src/main/resources/application.properties':
        'shop.public.url=http://storefront/complete-payment\nshop.services.orders=http://orders\n',
      'payment/src/main/java/shop/PaypalService.java': `package shop;
public class PaypalService {
    @Value("\${shop.public.url}/capture")
    private String returnUrl;
    @Value("\${shop.public.url}/cancel")
    private String cancelUrl;
    public PaypalService(@Value("\${shop.services.orders}") String ordersBase) {}
}
`,
    }),
  );
  const c = connections(graph);
  t.true(c.includes('service:payment -> service:orders'), c.join('\n'));
  t.false(c.includes('service:payment -> service:storefront'), c.join('\n'));
  const handed = evidence.find((e) => e.evidence_kind === 'address-handed');
  t.is(handed?.attributes.address_role, 'redirect');
});

test('php: a PDO DSN is a datastore address; a Dockerfile copying the PHP folder builds that unit', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  mysql:
    build: ./mysql
  ratings:
    build:
      context: ratings
  catalogue:
    image: acme/catalogue:1
`,
      'mysql/Dockerfile': `FROM mysql:5.7
ENV MYSQL_ALLOW_EMPTY_PASSWORD=yes \\
    MYSQL_DATABASE=cities \\
    MYSQL_USER=ratings
`,
      'ratings/Dockerfile': `FROM php:7.4-apache
COPY status.conf /etc/apache2/mods-available/status.conf
COPY html/ /var/www/html
COPY --from=composer /usr/bin/composer /usr/bin/composer
`,
      'ratings/html/composer.json':
        '{ "name": "acme/ratings-api", "require": { "php": ">=7.4" } }\n',
      'ratings/html/src/Kernel.php': `<?php
class Kernel {
    private $catalogue = getenv('CATALOGUE_URL') ?: 'http://catalogue:8080/';
    private $dsn = getenv('PDO_URL') ?: 'mysql:host=mysql;dbname=ratings;charset=utf8mb4';
}
`,
    }),
  );
  const c = connections(graph);
  t.true(c.includes('service:ratings -> datastore:mysql'), c.join('\n'));
  t.true(c.includes('service:ratings -> service:catalogue'), c.join('\n'));
  const keys = entityKeys(graph);
  t.false(keys.includes('service:html'), keys.join('\n'));
  t.false(keys.includes('service:ratings-api'), keys.join('\n'));
  // The database image's own user name is no address of the service of that name.
  t.false(
    c.some((x) => x.startsWith('datastore:mysql ->')),
    c.join('\n'),
  );
});

test('gradle: a library-looking module whose folder holds a Dockerfile is a service', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      ...GRADLE,
      'common/Dockerfile':
        'FROM eclipse-temurin:21-jre\nCOPY build/libs/common.jar app.jar\nENTRYPOINT ["java", "-jar", "/app.jar"]\n',
    }),
  );
  const keys = entityKeys(graph);
  t.true(keys.includes('service:common'), keys.join('\n'));
  t.false(keys.includes('service:orders-api'), keys.join('\n'));
});

test('go: a program without go.mod is a unit; its LookupEnv default is its address', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    files({
      'docker-compose.yml': `services:
  rabbitmq:
    image: rabbitmq:3.8-management
  dispatch:
    build:
      context: dispatch
    depends_on:
      - rabbitmq
`,
      'dispatch/Dockerfile':
        'FROM golang:1.17\nWORKDIR /go/src/app\nCOPY *.go .\nRUN go mod init dispatch && go get\nRUN go install\nCMD dispatch\n',
      'dispatch/main.go': `package main

import (
	"fmt"
	"os"
)

func main() {
	amqpHost, ok := os.LookupEnv("AMQP_HOST")
	if !ok {
		amqpHost = "rabbitmq"
	}
	fmt.Println(fmt.Sprintf("amqp://guest:guest@%s:5672/", amqpHost))
}
`,
      'vendor/github.com/acme/tool/main.go': 'package main\n\nfunc main() {}\n',
    }),
  );
  const c = connections(graph);
  t.true(c.includes('service:dispatch -> queue:rabbitmq'), c.join('\n'));
  const unit = evidence.find((e) => e.evidence_kind === 'unit-declared');
  t.is(unit?.location.path, 'dispatch/main.go');
  t.deepEqual(unit?.attributes.ecosystems, ['go']);
  // Vendored code is no program of the repository.
  t.is(evidence.filter((e) => e.evidence_kind === 'unit-declared').length, 1);
});
