/**
 * A deployment started from JVM code with Testcontainers: the launcher a Gradle JavaExec task
 * runs declares the containers (network aliases, env, Dockerfiles of the sub-projects), which
 * become deployment units merged with their code units; the same containers in an integration
 * test no task runs are no deployment. A small system written for this test.
 */
import test from 'ava';
import { analyzeFiles, connections, entityKeys } from './helpers/pipeline';

type Files = Record<string, string>;

const service = (pkg: string, main: string): Files => ({
  [`${pkg}/build.gradle`]: `plugins { id 'org.springframework.boot' version '3.2.0' }
dependencies { implementation 'org.springframework.boot:spring-boot-starter-web' }
`,
  [`${pkg}/Dockerfile`]: `FROM eclipse-temurin:17\nCOPY build/libs/app.jar app.jar\nCMD ["java", "-jar", "app.jar"]\n`,
  [`${pkg}/src/main/java/com/acme/${pkg}/${main}.java`]: `package com.acme.${pkg};

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

@SpringBootApplication
public class ${main} {
  public static void main(String[] args) { SpringApplication.run(${main}.class, args); }
}
`,
});

const STACK = `package com.acme.launcher;

import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.Network;
import org.testcontainers.containers.PostgreSQLContainer;
import org.testcontainers.images.builder.ImageFromDockerfile;
import java.nio.file.Paths;

public class LocalStack extends Stack {
  private final GenericContainer<?> gateway;

  public LocalStack() {
    Network network = Network.newNetwork();
    PostgreSQLContainer<?> ordersDb = new PostgreSQLContainer<>("postgres:16")
        .withNetwork(network)
        .withNetworkAliases("orders-db");
    GenericContainer<?> orders = new GenericContainer<>(new ImageFromDockerfile().withDockerfile(Paths.get("../orders/Dockerfile")))
        .withNetwork(network)
        .withNetworkAliases("orders")
        .withEnv("SPRING_DATASOURCE_URL", "jdbc:postgresql://orders-db:5432/orders")
        .dependsOn(ordersDb);
    gateway = new GenericContainer<>(new ImageFromDockerfile().withDockerfile(Paths.get("../gateway/Dockerfile")))
        .withNetwork(network)
        .withExposedPorts(8080)
        .withEnv("ORDERS_URL", "http://orders:8080")
        .dependsOn(orders);
  }

  @Override
  public void start() { gateway.start(); }
}
`;

const LAUNCHER: Files = {
  ...service('orders', 'OrdersMain'),
  ...service('gateway', 'GatewayMain'),
  'launcher/src/e2e/java/com/acme/launcher/Stack.java': `package com.acme.launcher;

public abstract class Stack {
  public static Stack make() throws Exception {
    return (Stack) Class.forName(Stack.class.getName().replace("Stack", "LocalStack")).getDeclaredConstructor().newInstance();
  }
  public abstract void start();
}
`,
  'launcher/src/e2e/java/com/acme/launcher/LocalStack.java': STACK,
  'launcher/src/e2e/java/com/acme/launcher/RunLocally.java': `package com.acme.launcher;

public class RunLocally {
  public static void main(String[] args) throws Exception { Stack.make().start(); }
}
`,
};

const RUN_TASK = `sourceSets { e2e { java.srcDir 'src/e2e/java' } }
dependencies { e2eImplementation 'org.testcontainers:testcontainers:1.19.0' }
tasks.register("runLocally", JavaExec) {
    classpath = sourceSets.e2e.runtimeClasspath
    mainClass = "com.acme.launcher.RunLocally"
}
`;

test('a launcher a Gradle JavaExec task runs is the deployment: aliases, env, Dockerfiles', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    Object.entries({ ...LAUNCHER, 'launcher/build.gradle': RUN_TASK }).map(([path, text]) => ({
      path,
      text,
    })),
  );
  const keys = entityKeys(graph);
  t.true(keys.includes('service:gateway'));
  t.true(keys.includes('service:orders'));
  t.true(keys.includes('datastore:orders-db'));
  // The unaliased gateway is named after its variable and built from gateway/Dockerfile: one
  // entity with the gateway code unit.
  t.false(keys.some((k) => k.startsWith('service:gateway-')));
  const edges = connections(graph);
  t.true(edges.includes('service:gateway -> service:orders'));
  t.true(edges.includes('service:orders -> datastore:orders-db'));
  const declared = evidence.filter(
    (e) => e.provider === 'testcontainers' && e.evidence_kind === 'service-declared',
  );
  t.deepEqual(declared.map((e) => e.subject_key).sort(), [
    'service:gateway',
    'service:orders',
    'service:orders-db',
  ]);
  const orders = declared.find((e) => e.subject_key === 'service:orders');
  t.is(orders?.attributes.build_context, 'orders');
  t.is(orders?.location.path, 'launcher/src/e2e/java/com/acme/launcher/LocalStack.java');
});

test('a container handed to a library helper (withDatabase) is a weak connection', async (t) => {
  const stack = STACK.replace(
    '.withEnv("SPRING_DATASOURCE_URL", "jdbc:postgresql://orders-db:5432/orders")',
    '.withDatabase(ordersDb)',
  ).replace(
    'new GenericContainer<>(new ImageFromDockerfile().withDockerfile(Paths.get("../orders/Dockerfile")))',
    'ServiceContainer.makeFromDockerfileInFileSystem("../orders/Dockerfile")',
  );
  const { graph, evidence } = await analyzeFiles(
    Object.entries({
      ...LAUNCHER,
      'launcher/src/e2e/java/com/acme/launcher/LocalStack.java': stack,
      'launcher/build.gradle': RUN_TASK,
    }).map(([path, text]) => ({ path, text })),
  );
  t.true(connections(graph).includes('service:orders -> datastore:orders-db'));
  const handed = evidence.find((e) => e.evidence_kind === 'container-reference');
  t.is(handed?.attributes.method, 'withDatabase');
  t.is(handed?.subject_key, 'service:orders');
});

test('the same containers in an integration test no run task starts are no deployment', async (t) => {
  const { graph, evidence } = await analyzeFiles(
    Object.entries({
      ...LAUNCHER,
      'launcher/build.gradle': `dependencies { testImplementation 'org.testcontainers:testcontainers:1.19.0' }\n`,
    }).map(([path, text]) => ({ path, text })),
  );
  t.false(evidence.some((e) => e.provider === 'testcontainers'));
  t.false(entityKeys(graph).includes('datastore:orders-db'));
  t.false(connections(graph).includes('service:gateway -> service:orders'));
});
