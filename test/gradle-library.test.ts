/**
 * Gradle library sub-projects (analysis/code/classify-gradle.ts): in a multi-project build, the
 * entry points of test source sets and an `@EnableAutoConfiguration` without `main` do not make
 * a sub-project a service; a convention plugin of buildSrc that applies Spring Boot does.
 */
import test from 'ava';
import type { SourceFile } from '../analysis/evidence';
import { analyzeFiles, entityKeys } from './helpers/pipeline';

const files = (m: Record<string, string>): SourceFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, text }));

const BUILD = {
  'settings.gradle': `include 'billing:billing-domain'
include 'billing:billing-messaging'
include 'billing:billing-contracts'
include 'billing:billing-main'
include 'ledger'
include 'audit'
include 'payments'
include 'notify'
`,
  'build.gradle': 'subprojects { apply plugin: "java" }\n',
  'buildSrc/build.gradle': "plugins { id 'groovy' }\n",
  'buildSrc/src/main/groovy/AppPlugin.groovy': `class AppPlugin implements Plugin<Project> {
  void apply(Project project) { project.apply(plugin: 'org.springframework.boot') }
}
`,
  'billing/billing-domain/build.gradle':
    'dependencies { implementation "org.springframework.boot:spring-boot-starter-data-jpa" }\n',
  'billing/billing-domain/src/main/java/acme/billing/Invoice.java':
    'package acme.billing;\npublic class Invoice {}\n',
  // Auto-configuration in main, a test application in src/test: a module the application imports.
  'billing/billing-messaging/build.gradle': `dependencies {
  implementation project(":billing:billing-domain")
  implementation "org.springframework.kafka:spring-kafka"
}
`,
  'billing/billing-messaging/src/main/java/acme/billing/messaging/MessagingConfiguration.java': `package acme.billing.messaging;
@Configuration
@EnableAutoConfiguration
public class MessagingConfiguration {}
`,
  'billing/billing-messaging/src/test/java/acme/billing/messaging/MessagingTest.java': `package acme.billing.messaging;
@SpringBootApplication
public class MessagingTest { public static void main(String[] args) {} }
`,
  'billing/billing-messaging/src/test/resources/application.properties':
    'spring.kafka.bootstrap-servers=localhost:9092\n',
  // A contract-test source set's base class.
  'billing/billing-contracts/build.gradle':
    "apply plugin: 'org.springframework.cloud.contract'\ndependencies { implementation project(':billing:billing-domain') }\n",
  'billing/billing-contracts/src/main/java/acme/billing/contracts/Publisher.java':
    'package acme.billing.contracts;\npublic class Publisher {}\n',
  'billing/billing-contracts/src/contractTest/java/acme/billing/contracts/ContractBase.java': `package acme.billing.contracts;
@SpringBootApplication
public abstract class ContractBase {}
`,
  // The application: runnable through the convention plugin.
  'billing/billing-main/build.gradle':
    'apply plugin: AppPlugin\ndependencies { implementation project(":billing:billing-messaging") }\n',
  'billing/billing-main/src/main/java/acme/billing/BillingMain.java': `package acme.billing;
@EnableAutoConfiguration
public class BillingMain {}
`,
  // Precompiled script plugins (Kotlin DSL): one applies Spring Boot, one a plain library.
  'buildSrc/src/main/kotlin/acme.service-conventions.gradle.kts':
    'plugins {\n  java\n  id("org.springframework.boot")\n}\n',
  'buildSrc/src/main/kotlin/acme.library-conventions.gradle.kts':
    'plugins {\n  `java-library`\n}\n',
  'payments/build.gradle.kts': 'plugins {\n  id("acme.service-conventions")\n}\n',
  'payments/src/main/java/acme/payments/Payments.java':
    'package acme.payments;\n@EnableAutoConfiguration\npublic class Payments {}\n',
  'notify/build.gradle.kts': 'plugins {\n  id("acme.library-conventions")\n}\n',
  'notify/src/main/java/acme/notify/NotifyConfiguration.java':
    'package acme.notify;\n@Configuration\n@EnableAutoConfiguration\npublic class NotifyConfiguration {}\n',
  // A plain main in the main source set runs.
  'ledger/build.gradle': 'dependencies { implementation "org.postgresql:postgresql:42.7.0" }\n',
  'ledger/src/main/java/acme/ledger/Ledger.java': `package acme.ledger;
public class Ledger { public static void main(String[] args) {} }
`,
  // Auto-configuration beside a main: a program.
  'audit/build.gradle':
    'dependencies { implementation "org.springframework.boot:spring-boot-starter-web" }\n',
  'audit/src/main/java/acme/audit/Audit.java': `package acme.audit;
@EnableAutoConfiguration
public class Audit { public static void main(String[] args) {} }
`,
};

test('gradle: test source sets and auto-configuration without main make no service', async (t) => {
  const { graph, evidence } = await analyzeFiles(files(BUILD));
  const keys = entityKeys(graph);
  for (const lib of [
    'service:billing-domain',
    'service:billing-messaging',
    'service:billing-contracts',
    'service:notify',
  ])
    t.false(keys.includes(lib), `${lib} in ${keys.join(', ')}`);
  t.true(keys.includes('service:billing-main'), `convention plugin: ${keys.join(', ')}`);
  t.true(keys.includes('service:payments'), `precompiled convention plugin: ${keys.join(', ')}`);
  t.true(keys.includes('service:ledger'), 'a main of the main source set runs');
  t.true(keys.includes('service:audit'), 'auto-configuration beside a main runs');
  const reason = evidence.find(
    (e) => e.evidence_kind === 'unit-declared' && e.subject_key === 'service:billing-messaging',
  )?.attributes;
  t.is(reason?.unit_class, 'library');
  t.regex(String(reason?.class_reason), /Gradle sub-project library/);
});

test('gradle: a library sub-project a compose service builds is still a service', async (t) => {
  const { graph } = await analyzeFiles(
    files({
      ...BUILD,
      'docker-compose.yml':
        'services:\n  billing-messaging:\n    build: ./billing/billing-messaging\n',
    }),
  );
  t.true(entityKeys(graph).includes('service:billing-messaging'), entityKeys(graph).join('\n'));
});
