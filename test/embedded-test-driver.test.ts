import test from 'ava';
import { analyzeFileMap, connections, entityKeys } from './helpers/pipeline';

const pom = (scope: string) => `<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId>
  <artifactId>orders</artifactId>
  <version>1</version>
  <packaging>war</packaging>
  <dependencies>
    <dependency><groupId>org.eclipse.persistence</groupId><artifactId>eclipselink</artifactId><version>4.0.0</version></dependency>
    <dependency><groupId>org.hsqldb</groupId><artifactId>hsqldb</artifactId><version>2.7.1</version>${scope}</dependency>
  </dependencies>
</project>
`;

const manager = `package com.acme.orders;

import java.util.HashMap;

public final class EMFManager {
  private static final String IN_MEMORY_JDBC_URL_VALUE = "jdbc:hsqldb:mem:test";

  static HashMap<String, String> inMemory() {
    HashMap<String, String> p = new HashMap<>();
    p.put("jakarta.persistence.jdbc.url", IN_MEMORY_JDBC_URL_VALUE);
    return p;
  }
}
`;

test('an embedded database whose JVM driver is declared only in test scope is no datastore', async (t) => {
  const { graph, evidence } = await analyzeFileMap({
    'orders/pom.xml': pom('<scope>test</scope>'),
    'orders/src/main/java/com/acme/orders/EMFManager.java': manager,
  });
  t.false(entityKeys(graph).includes('datastore:orders-hsqldb'));
  t.false(connections(graph).some((c) => c.endsWith('datastore:orders-hsqldb')));
  t.true(evidence.some((e) => e.evidence_kind === 'embedded-store-test-driver'));
});

test("the same database with its driver in the runtime scope stays the unit's embedded store", async (t) => {
  const { graph } = await analyzeFileMap({
    'orders/pom.xml': pom(''),
    'orders/src/main/java/com/acme/orders/EMFManager.java': manager,
  });
  t.true(connections(graph).includes('service:orders -> datastore:orders-hsqldb'));
});
