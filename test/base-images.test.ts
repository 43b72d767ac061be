/**
 * A base image is no service (issue 23, session 15): a folder a CI step builds into an image
 * that other Dockerfiles of the repository start `FROM`, and that no deployment runs, is a build
 * input of those images, not a deployable. Small repositories written here. Pure.
 */
import test from 'ava';
import { analyzeFileMap, entityKeys as keys } from './helpers/pipeline';

const POM = (artifact: string) => `<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>acme</groupId>
  <artifactId>${artifact}</artifactId>
  <packaging>war</packaging>
</project>
`;

const WORKFLOW = (base: string) => `name: images
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - name: base
        uses: docker/build-push-action@v5
        with:
          context: ./utilities/base
          push: true
          tags: ${base}:latest
      - name: orders
        uses: docker/build-push-action@v5
        with:
          context: ./services/orders
          push: true
          tags: acme/shop-orders:latest
`;

const files = (base: string, deployed: string[]) => ({
  '.github/workflows/images.yml': WORKFLOW(base),
  'utilities/base/pom.xml': POM('base'),
  'utilities/base/Dockerfile':
    'FROM tomcat:10\nENV DB_HOST 127.0.0.1\nEXPOSE 8080\nCMD catalina.sh run\n',
  'services/orders/pom.xml': POM('orders'),
  'services/orders/Dockerfile': `FROM acme/shop-base:latest\nCOPY target/*.war /usr/local/tomcat/webapps/\n`,
  'docker-compose.yml': `services:\n${deployed
    .map((d) => `  ${d.split('/').pop()!.replace('shop-', '')}:\n    image: ${d}\n`)
    .join('')}`,
});

test('base image: a folder built only as the FROM of other Dockerfiles is no service', async (t) => {
  const { graph } = await analyzeFileMap(files('acme/shop-base', ['acme/shop-orders']));
  const k = keys(graph);
  t.true(k.includes('service:orders'), k.join(' '));
  t.false(k.includes('service:base'), k.join(' '));
});

test('base image: an image a deployment also runs stays a service', async (t) => {
  const { graph } = await analyzeFileMap(
    files('acme/shop-base', ['acme/shop-orders', 'acme/shop-base']),
  );
  const k = keys(graph);
  t.true(k.includes('service:base'), k.join(' '));
});

test('base image: a built image no Dockerfile starts FROM is not a base image', async (t) => {
  const { graph } = await analyzeFileMap(files('acme/shop-other', ['acme/shop-orders']));
  const k = keys(graph);
  t.true(k.includes('service:base'), k.join(' '));
});

// An image a CI step builds from a folder whose name is not the image's: a deployment running
// that image runs the folder's code (docker/build-push-action `context`).
const CI_BUILT = {
  '.github/workflows/images.yml': `name: images
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: docker/build-push-action@v5
        with:
          context: ./utilities/logreader
          push: true
          tags: acme/shop-broker:latest
`,
  'utilities/logreader/pom.xml': POM('logreader'),
  'utilities/logreader/Dockerfile':
    'FROM rabbitmq:management\nCOPY target/*.war /opt/app.war\nEXPOSE 8080\n',
  'docker-compose.yml': 'services:\n  broker:\n    image: acme/shop-broker\n',
};

test('CI-built image: the deployment running it is the folder it is built from', async (t) => {
  const { graph } = await analyzeFileMap(CI_BUILT);
  const k = keys(graph);
  t.true(k.includes('queue:broker'), k.join(' '));
  t.false(
    k.some((x) => x.endsWith(':logreader')),
    k.join(' '),
  );
});

test('CI-built image: a deployment running another image keeps the folder apart', async (t) => {
  const { graph } = await analyzeFileMap({
    ...CI_BUILT,
    'docker-compose.yml': 'services:\n  broker:\n    image: acme/shop-other\n',
  });
  const k = keys(graph);
  t.true(
    k.some((x) => x.endsWith(':logreader')),
    k.join(' '),
  );
});
