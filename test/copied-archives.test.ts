/**
 * A module whose archive another folder's image copies in is part of that image (issue 23,
 * session 16): a Maven module building a runnable jar that no deployment runs by itself, while
 * another folder's Dockerfile copies the built jar by its artifact name and starts it from its
 * `CMD`, is no service of its own. Small repositories written here. Pure.
 */
import test from 'ava';
import { analyzeFileMap, entityKeys as keys } from './helpers/pipeline';
import { copiedFiles } from '../analysis/cloud/dockerfile';
import { namesArtifact } from '../analysis/reconcile-copied-artifacts';

const PARENT = `<project>
  <modelVersion>4.0.0</modelVersion>
  <groupId>acme</groupId>
  <artifactId>parent</artifactId>
  <packaging>pom</packaging>
  <modules>
    <module>runtime/heaptuner</module>
    <module>services/orders</module>
  </modules>
</project>
`;

const TUNER_POM = `<project>
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>acme</groupId><artifactId>parent</artifactId><version>1</version><relativePath>../..</relativePath></parent>
  <artifactId>heaptuner</artifactId>
  <packaging>jar</packaging>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-jar-plugin</artifactId>
        <configuration><archive><manifest><mainClass>acme.heaptuner.Main</mainClass></manifest></archive></configuration>
      </plugin>
    </plugins>
  </build>
</project>
`;

const ORDERS_POM = `<project>
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>acme</groupId><artifactId>parent</artifactId><version>1</version><relativePath>../..</relativePath></parent>
  <artifactId>orders</artifactId>
  <packaging>war</packaging>
</project>
`;

const files = (copy: string): Record<string, string> => ({
  'pom.xml': PARENT,
  'runtime/heaptuner/pom.xml': TUNER_POM,
  'runtime/heaptuner/src/main/java/acme/heaptuner/Main.java':
    'package acme.heaptuner;\npublic class Main { public static void main(String[] a) {} }\n',
  'services/orders/pom.xml': ORDERS_POM,
  'services/orders/Dockerfile': `FROM tomcat:10\n${copy}\nCOPY target/*.war /usr/local/tomcat/webapps/\nEXPOSE 8080\nCMD java -jar /opt/heaptuner.jar; catalina.sh run\n`,
  'docker-compose.yml':
    'services:\n  orders:\n    build: services/orders\n    ports: ["8080:8080"]\n',
});

test('copied archive: a jar module another image copies by its artifact name is no service', async (t) => {
  const { graph } = await analyzeFileMap(files('COPY target/jars/heaptuner* /opt/heaptuner.jar'));
  const k = keys(graph);
  t.true(k.includes('service:orders'), k.join(' '));
  t.false(k.includes('service:heaptuner'), k.join(' '));
});

test('copied archive: a versioned archive name matches too', async (t) => {
  const { graph } = await analyzeFileMap(
    files('COPY target/jars/heaptuner-1.0.jar /opt/heaptuner.jar'),
  );
  t.false(keys(graph).includes('service:heaptuner'));
});

test('copied archive: an image that copies another name or any jar leaves the module a service', async (t) => {
  for (const copy of [
    'COPY target/jars/heaptunerx* /opt/heaptuner.jar',
    'COPY target/jars/*.jar /opt/',
    'COPY heaptuner/ /opt/heaptuner/',
  ]) {
    const { graph } = await analyzeFileMap(files(copy));
    const k = keys(graph);
    t.true(k.includes('service:heaptuner'), `${copy}: ${k.join(' ')}`);
  }
});

test('copied archive: a module that a deployment runs stays a service', async (t) => {
  const map = files('COPY target/jars/heaptuner* /opt/heaptuner.jar');
  map['docker-compose.yml'] += '  heaptuner:\n    build: runtime/heaptuner\n';
  map['runtime/heaptuner/Dockerfile'] =
    'FROM eclipse-temurin:17\nCOPY target/heaptuner.jar /app.jar\nCMD java -jar /app.jar\n';
  const { graph } = await analyzeFileMap(map);
  t.true(keys(graph).includes('service:heaptuner'), keys(graph).join(' '));
});

test('copied archive: file patterns and artifact names', (t) => {
  t.deepEqual(
    copiedFiles('base', [
      { cmd: 'COPY', args: 'target/jars/tuner* /opt/tuner.jar' },
      { cmd: 'COPY', args: '--from=build /src/app.jar /app.jar' },
      { cmd: 'COPY', args: 'conf/ /etc/conf/' },
      { cmd: 'ADD', args: 'https://example.org/x.jar /x.jar' },
      { cmd: 'COPY', args: 'lib/driver-5.1.jar /lib/' },
    ]),
    ['base/lib/driver-5.1.jar', 'base/target/jars/tuner*'],
  );
  t.true(namesArtifact('tuner*', 'tuner'));
  t.true(namesArtifact('tuner-*.jar', 'tuner'));
  t.true(namesArtifact('tuner.jar', 'tuner'));
  t.true(namesArtifact('tuner-1.2.3.jar', 'tuner'));
  t.false(namesArtifact('*.jar', 'tuner'));
  t.false(namesArtifact('tunerx*', 'tuner'));
  t.false(namesArtifact('tuner-config.xml', 'tuner'));
  t.false(namesArtifact('tuner-extra.jar', 'tuner'));
});
