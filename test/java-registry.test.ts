import test from 'ava';
import { analyzeFileMap, connections } from './helpers/pipeline';

const pom = (artifact: string, war: boolean, deps: string[] = []) => `<?xml version="1.0"?>
<project>
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>com.acme</groupId><artifactId>shop-parent</artifactId><version>1</version></parent>
  <artifactId>${artifact}</artifactId>
  <packaging>${war ? 'war' : 'jar'}</packaging>
  <dependencies>
${deps.map((d) => `    <dependency><groupId>com.acme</groupId><artifactId>${d}</artifactId><version>1</version></dependency>`).join('\n')}
    <dependency><groupId>jakarta.servlet</groupId><artifactId>jakarta.servlet-api</artifactId><version>6.0.0</version></dependency>
  </dependencies>
  <build>${war ? `<finalName>com.acme.${artifact}</finalName>` : ''}</build>
</project>
`;

const startup = (pkg: string) => `package com.acme.${pkg};

import jakarta.servlet.ServletContextEvent;
import jakarta.servlet.ServletContextListener;
import com.acme.client.RegistryClient;

public class Startup implements ServletContextListener {
  public void contextInitialized(ServletContextEvent event) {
    RegistryClient.getClient().register(event.getServletContext().getContextPath());
  }
}
`;

const files: Record<string, string> = {
  'pom.xml': `<project><modelVersion>4.0.0</modelVersion><groupId>com.acme</groupId><artifactId>shop-parent</artifactId><version>1</version><packaging>pom</packaging>
<modules><module>client</module><module>orders</module><module>carts</module><module>front</module><module>mailer</module></modules></project>
`,
  'client/pom.xml': pom('client', false),
  'client/src/main/java/com/acme/client/Service.java': `package com.acme.client;

public enum Service {
  ORDERS("com.acme.orders"),
  CARTS("com.acme.carts"),
  FRONT("com.acme.front");

  private final String name;
  Service(String name) { this.name = name; }
  public String getServiceName() { return name; }
}
`,
  'client/src/main/java/com/acme/client/RegistryClient.java': `package com.acme.client;

public class RegistryClient {
  private static final RegistryClient CLIENT = new RegistryClient();
  public static RegistryClient getClient() { return CLIENT; }
  public void register(String name) { }
}
`,
  'client/src/main/java/com/acme/client/ServiceLoadBalancer.java': `package com.acme.client;

public class ServiceLoadBalancer {
  public static String loadBalanceRESTOperation(Service service, String endpoint) { return ""; }
}
`,
  'client/src/main/java/com/acme/client/LoadBalancedCartOperations.java': `package com.acme.client;

public final class LoadBalancedCartOperations {
  private LoadBalancedCartOperations() { }

  public static String addToCart(String id) {
    return ServiceLoadBalancer.loadBalanceRESTOperation(Service.CARTS, "cart/" + id);
  }
}
`,
  'client/src/main/java/com/acme/client/LoadBalancedOrderOperations.java': `package com.acme.client;

public final class LoadBalancedOrderOperations {
  public static String placeOrder(String id) {
    return ServiceLoadBalancer.loadBalanceRESTOperation(Service.ORDERS, "orders/" + id);
  }
}
`,
  'orders/pom.xml': pom('orders', true, ['client']),
  'orders/src/main/java/com/acme/orders/Startup.java': startup('orders'),
  'orders/src/main/java/com/acme/orders/Replicas.java': `package com.acme.orders;

import com.acme.client.Service;
import com.acme.client.ServiceLoadBalancer;

public class Replicas {
  public void evict() { ServiceLoadBalancer.loadBalanceRESTOperation(Service.ORDERS, "cache"); }
}
`,
  'carts/pom.xml': pom('carts', true, ['client']),
  'carts/src/main/java/com/acme/carts/Startup.java': startup('carts'),
  'carts/src/main/java/com/acme/carts/CartRest.java': `package com.acme.carts;

import com.acme.client.Service;
import com.acme.client.ServiceLoadBalancer;

public class CartRest {
  public String checkout(String id) {
    return ServiceLoadBalancer
        .loadBalanceRESTOperation(Service.ORDERS, "orders/" + id);
  }
}
`,
  'front/pom.xml': pom('front', true, ['client']),
  'front/src/main/java/com/acme/front/Startup.java': startup('front'),
  'front/src/main/java/com/acme/front/CartServlet.java': `package com.acme.front;

import com.acme.client.LoadBalancedCartOperations;

public class CartServlet {
  public void doPost(String id) {
    LoadBalancedCartOperations.addToCart(id);
  }
}
`,
  'front/src/test/java/com/acme/front/OrderTest.java': `package com.acme.front;

import com.acme.client.LoadBalancedOrderOperations;

public class OrderTest {
  public void test() { LoadBalancedOrderOperations.placeOrder("1"); }
}
`,
  'mailer/pom.xml': pom('mailer', true, ['client']),
  'mailer/src/main/java/com/acme/mailer/Startup.java': startup('mailer'),
};

test('a lookup of an enum-named service through a load balancer connects to the unit registered under that name', async (t) => {
  const { graph } = await analyzeFileMap(files);
  t.true(connections(graph).includes('service:carts -> service:orders'));
});

test('a library function making the lookup counts only for the units calling it', async (t) => {
  const { graph, evidence } = await analyzeFileMap(files);
  const edges = connections(graph);
  t.true(edges.includes('service:front -> service:carts'));
  // placeOrder is called only by a test: no front -> orders; the mailer calls nothing.
  t.false(edges.includes('service:front -> service:orders'));
  t.false(edges.some((e) => e.startsWith('service:mailer ->')));
  t.false(edges.some((e) => e.startsWith('service:client')));
  // A call to its own replicas is no edge.
  t.false(edges.includes('service:orders -> service:orders'));
  t.true(
    evidence.some(
      (e) =>
        e.evidence_kind === 'registry-register' &&
        e.subject_key === 'service:orders' &&
        e.attributes.name === 'com.acme.orders',
    ),
  );
});
