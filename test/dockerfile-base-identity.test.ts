/**
 * A Dockerfile built `FROM` an image another Dockerfile of the repository builds (a shared base
 * image, `FROM java`) is a different image: the services built on that base are not one
 * deployable with it, nor with each other (issue 23, session 15). Small repositories written
 * here. Pure.
 */
import test from 'ava';
import { analyzeFileMap } from './helpers/pipeline';

const repo = {
  'images/java/Dockerfile': 'FROM eclipse-temurin:17-jre\n',
  'images/registry/Dockerfile': 'FROM java\nCMD java -jar /app/registry.jar\nEXPOSE 8761\n',
  'images/orders-app/Dockerfile': 'FROM java\nCMD java -jar /app/orders.jar\nEXPOSE 8080\n',
  'images/stock-app/Dockerfile': 'FROM java\nCMD java -jar /app/stock.jar\nEXPOSE 8080\n',
  'docker-compose.yml': `services:
  registry:
    build: images/registry
  orders:
    build: images/orders-app
    links: [registry]
`,
};

test('dockerfiles FROM a base image the repository builds stay distinct deployables', async (t) => {
  const { graph } = await analyzeFileMap(repo);
  const byKey = new Map(graph.entities.map((e) => [e.canonical_key, e]));
  const aliasesOf = (k: string) => (byKey.get(k)?.attributes.aliases as string[] | undefined) ?? [];
  t.true(byKey.has('service:registry'));
  t.true(byKey.has('service:stock-app'), [...byKey.keys()].join('\n'));
  t.false(aliasesOf('service:registry').includes('service:stock-app'));
  t.false(aliasesOf('service:registry').includes('service:java'));
  t.false(aliasesOf('service:orders').includes('service:stock-app'));
});
