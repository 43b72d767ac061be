/**
 * Well-known datastore, broker, object-storage and search client libraries by ecosystem. Engine
 * names follow the cloud analyzers' image classification (postgres, mysql, mariadb, mongodb,
 * redis, kafka, rabbitmq, nats, elasticsearch, opensearch, cassandra, memcached).
 */
import type { Ecosystem } from './model';

export type ClientCategory = 'datastore' | 'queue' | 'storage' | 'search';

export interface ClientClass {
  engine: string;
  category: ClientCategory;
}

type Rule = [RegExp, string, ClientCategory];

const NPM: Rule[] = [
  [
    /^(pg|pg-promise|pg-pool|postgres|@vercel\/postgres|@neondatabase\/serverless)$/,
    'postgres',
    'datastore',
  ],
  [/^(mysql|mysql2)$/, 'mysql', 'datastore'],
  [/^mariadb$/, 'mariadb', 'datastore'],
  [/^(mongodb|mongoose)$/, 'mongodb', 'datastore'],
  [/^(redis|ioredis|@redis\/client|@upstash\/redis)$/, 'redis', 'datastore'],
  [/^(bull|bullmq)$/, 'redis', 'queue'],
  [/^(memcached|memjs)$/, 'memcached', 'datastore'],
  [/^cassandra-driver$/, 'cassandra', 'datastore'],
  [/^(kafkajs|node-rdkafka|@confluentinc\/kafka-javascript)$/, 'kafka', 'queue'],
  [/^(amqplib|amqp-connection-manager|rascal)$/, 'rabbitmq', 'queue'],
  [/^(nats|nats\.ws)$/, 'nats', 'queue'],
  [/^@google-cloud\/pubsub$/, 'pubsub', 'queue'],
  [/^@aws-sdk\/client-sqs$/, 'sqs', 'queue'],
  [/^@aws-sdk\/client-sns$/, 'sns', 'queue'],
  [/^@azure\/service-bus$/, 'azure-service-bus', 'queue'],
  [/^@aws-sdk\/client-s3$/, 's3', 'storage'],
  [/^@google-cloud\/storage$/, 'gcs', 'storage'],
  [/^@azure\/storage-blob$/, 'azure-blob', 'storage'],
  [/^(@aws-sdk\/client-dynamodb|@aws-sdk\/lib-dynamodb)$/, 'dynamodb', 'datastore'],
  [/^@azure\/cosmos$/, 'cosmosdb', 'datastore'],
  [/^(@elastic\/elasticsearch|elasticsearch)$/, 'elasticsearch', 'search'],
  [/^@opensearch-project\/opensearch$/, 'opensearch', 'search'],
];

/** Go module paths (matched as a path prefix, case-insensitive). */
const GO: Rule[] = [
  [
    /^(github\.com\/jackc\/pgx|github\.com\/lib\/pq|gorm\.io\/driver\/postgres|github\.com\/go-pg\/pg)(\/|$)/,
    'postgres',
    'datastore',
  ],
  [/^(github\.com\/go-sql-driver\/mysql|gorm\.io\/driver\/mysql)(\/|$)/, 'mysql', 'datastore'],
  [/^go\.mongodb\.org\/mongo-driver(\/|$)/, 'mongodb', 'datastore'],
  [
    /^(github\.com\/go-redis\/redis|github\.com\/redis\/go-redis|github\.com\/gomodule\/redigo|github\.com\/redis\/rueidis)(\/|$)/,
    'redis',
    'datastore',
  ],
  [/^github\.com\/bradfitz\/gomemcache(\/|$)/, 'memcached', 'datastore'],
  [/^github\.com\/gocql\/gocql(\/|$)/, 'cassandra', 'datastore'],
  [
    /^(github\.com\/shopify\/sarama|github\.com\/ibm\/sarama|github\.com\/segmentio\/kafka-go|github\.com\/confluentinc\/confluent-kafka-go|github\.com\/twmb\/franz-go)(\/|$)/,
    'kafka',
    'queue',
  ],
  [/^(github\.com\/streadway\/amqp|github\.com\/rabbitmq\/amqp091-go)(\/|$)/, 'rabbitmq', 'queue'],
  [/^github\.com\/nats-io\/nats\.go(\/|$)/, 'nats', 'queue'],
  [/^cloud\.google\.com\/go\/pubsub(\/|$)/, 'pubsub', 'queue'],
  [/^github\.com\/aws\/aws-sdk-go-v2\/service\/sqs(\/|$)/, 'sqs', 'queue'],
  [/^github\.com\/aws\/aws-sdk-go-v2\/service\/s3(\/|$)/, 's3', 'storage'],
  [/^github\.com\/aws\/aws-sdk-go-v2\/service\/dynamodb(\/|$)/, 'dynamodb', 'datastore'],
  [/^github\.com\/azure\/azure-sdk-for-go\/sdk\/data\/azcosmos(\/|$)/, 'cosmosdb', 'datastore'],
  [/^cloud\.google\.com\/go\/storage(\/|$)/, 'gcs', 'storage'],
  [
    /^(github\.com\/elastic\/go-elasticsearch|github\.com\/olivere\/elastic)(\/|$)/,
    'elasticsearch',
    'search',
  ],
  [/^github\.com\/opensearch-project\/opensearch-go(\/|$)/, 'opensearch', 'search'],
];

/** PEP 503-normalized names. */
const PYPI: Rule[] = [
  [
    /^(psycopg|psycopg-binary|psycopg-pool|psycopg2|psycopg2-binary|asyncpg|pg8000|aiopg)$/,
    'postgres',
    'datastore',
  ],
  [/^(pymysql|mysqlclient|mysql-connector-python|aiomysql|asyncmy)$/, 'mysql', 'datastore'],
  [/^(pymongo|motor|mongoengine|beanie)$/, 'mongodb', 'datastore'],
  [/^(redis|redis-py|aioredis|redis-py-cluster)$/, 'redis', 'datastore'],
  [/^(pymemcache|python-memcached)$/, 'memcached', 'datastore'],
  [/^cassandra-driver$/, 'cassandra', 'datastore'],
  [/^(kafka-python|confluent-kafka|aiokafka)$/, 'kafka', 'queue'],
  [/^(pika|aio-pika|aiormq)$/, 'rabbitmq', 'queue'],
  [/^(nats-py|asyncio-nats-client)$/, 'nats', 'queue'],
  [/^google-cloud-pubsub$/, 'pubsub', 'queue'],
  [/^google-cloud-storage$/, 'gcs', 'storage'],
  [/^azure-storage-blob$/, 'azure-blob', 'storage'],
  [/^azure-cosmos$/, 'cosmosdb', 'datastore'],
  [/^(elasticsearch|elasticsearch-dsl|elasticsearch-async)$/, 'elasticsearch', 'search'],
  [/^opensearch-py$/, 'opensearch', 'search'],
];

/** `groupId:artifactId`, lowercase. */
const MAVEN: Rule[] = [
  [
    /^(org\.postgresql:postgresql|org\.postgresql:r2dbc-postgresql|io\.r2dbc:r2dbc-postgresql)$/,
    'postgres',
    'datastore',
  ],
  [/^(mysql:mysql-connector-java|com\.mysql:mysql-connector-j)$/, 'mysql', 'datastore'],
  [/^org\.mariadb\.jdbc:mariadb-java-client$/, 'mariadb', 'datastore'],
  [
    /^(org\.mongodb:.*|org\.springframework\.boot:spring-boot-starter-data-mongodb(-reactive)?)$/,
    'mongodb',
    'datastore',
  ],
  [
    /^(redis\.clients:jedis|io\.lettuce:lettuce-core|org\.redisson:redisson|org\.springframework\.boot:spring-boot-starter-data-redis(-reactive)?)$/,
    'redis',
    'datastore',
  ],
  [
    /^(com\.datastax\.oss:java-driver-core|org\.springframework\.data:spring-data-cassandra|org\.springframework\.boot:spring-boot-starter-data-cassandra(-reactive)?)$/,
    'cassandra',
    'datastore',
  ],
  [
    /^(org\.apache\.kafka:kafka-clients|org\.apache\.kafka:kafka-streams|org\.springframework\.kafka:spring-kafka)$/,
    'kafka',
    'queue',
  ],
  [
    /^(com\.rabbitmq:amqp-client|org\.springframework\.boot:spring-boot-starter-amqp|org\.springframework\.amqp:spring-rabbit)$/,
    'rabbitmq',
    'queue',
  ],
  [/^io\.nats:jnats$/, 'nats', 'queue'],
  [
    /^(com\.google\.cloud:google-cloud-pubsub|com\.google\.cloud:spring-cloud-gcp-starter-pubsub)$/,
    'pubsub',
    'queue',
  ],
  [/^software\.amazon\.awssdk:sqs$/, 'sqs', 'queue'],
  [/^(software\.amazon\.awssdk:s3|com\.amazonaws:aws-java-sdk-s3)$/, 's3', 'storage'],
  [/^com\.google\.cloud:google-cloud-storage$/, 'gcs', 'storage'],
  [
    /^(software\.amazon\.awssdk:dynamodb(-enhanced)?|com\.amazonaws:aws-java-sdk-dynamodb)$/,
    'dynamodb',
    'datastore',
  ],
  [
    /^(com\.azure:azure-cosmos|com\.azure:azure-spring-data-cosmos|com\.azure\.spring:spring-cloud-azure-starter-data-cosmos)$/,
    'cosmosdb',
    'datastore',
  ],
  [
    /^(co\.elastic\.clients:elasticsearch-java|org\.elasticsearch\.client:.*|org\.springframework\.boot:spring-boot-starter-data-elasticsearch)$/,
    'elasticsearch',
    'search',
  ],
  [/^org\.opensearch\.client:.*$/, 'opensearch', 'search'],
];

/** Crate names with '_' folded to '-'. */
const CARGO: Rule[] = [
  [/^(tokio-postgres|postgres|deadpool-postgres|bb8-postgres)$/, 'postgres', 'datastore'],
  [/^(mysql|mysql-async)$/, 'mysql', 'datastore'],
  [/^mongodb$/, 'mongodb', 'datastore'],
  [/^(redis|deadpool-redis|fred)$/, 'redis', 'datastore'],
  [/^(scylla|cdrs-tokio)$/, 'cassandra', 'datastore'],
  [/^(rdkafka|kafka)$/, 'kafka', 'queue'],
  [/^(lapin|amiquip)$/, 'rabbitmq', 'queue'],
  [/^(async-nats|nats)$/, 'nats', 'queue'],
  [/^aws-sdk-sqs$/, 'sqs', 'queue'],
  [/^aws-sdk-s3$/, 's3', 'storage'],
  [/^aws-sdk-dynamodb$/, 'dynamodb', 'datastore'],
  [/^elasticsearch$/, 'elasticsearch', 'search'],
  [/^opensearch$/, 'opensearch', 'search'],
];

/** Lowercase package ids. */
const NUGET: Rule[] = [
  [/^(npgsql|npgsql\.entityframeworkcore\.postgresql)$/, 'postgres', 'datastore'],
  [/^(mysql\.data|mysqlconnector|pomelo\.entityframeworkcore\.mysql)$/, 'mysql', 'datastore'],
  [/^mongodb\.driver$/, 'mongodb', 'datastore'],
  [
    /^(stackexchange\.redis|microsoft\.extensions\.caching\.stackexchangeredis)$/,
    'redis',
    'datastore',
  ],
  [/^cassandracsharpdriver$/, 'cassandra', 'datastore'],
  [/^confluent\.kafka$/, 'kafka', 'queue'],
  [/^(rabbitmq\.client|masstransit\.rabbitmq)$/, 'rabbitmq', 'queue'],
  [/^(nats\.client|nats\.net)$/, 'nats', 'queue'],
  [/^google\.cloud\.pubsub\.v1$/, 'pubsub', 'queue'],
  [/^awssdk\.sqs$/, 'sqs', 'queue'],
  [/^azure\.messaging\.servicebus$/, 'azure-service-bus', 'queue'],
  [/^awssdk\.s3$/, 's3', 'storage'],
  [/^google\.cloud\.storage\.v1$/, 'gcs', 'storage'],
  [/^azure\.storage\.blobs$/, 'azure-blob', 'storage'],
  [/^awssdk\.dynamodbv2$/, 'dynamodb', 'datastore'],
  [/^(microsoft\.azure\.cosmos|microsoft\.entityframeworkcore\.cosmos)$/, 'cosmosdb', 'datastore'],
  [/^(elastic\.clients\.elasticsearch|nest|elasticsearch\.net)$/, 'elasticsearch', 'search'],
  [/^opensearch\.client$/, 'opensearch', 'search'],
  // .NET Aspire client integrations (`Aspire.Npgsql.EntityFrameworkCore.PostgreSQL`...).
  [/^aspire\.npgsql(\..+)?$/, 'postgres', 'datastore'],
  [/^aspire\.stackexchange\.redis(\..+)?$/, 'redis', 'datastore'],
  [
    /^aspire\.microsoft\.(entityframeworkcore\.sqlserver|data\.sqlclient)$/,
    'sqlserver',
    'datastore',
  ],
  [/^aspire\.(mysqlconnector|pomelo\.entityframeworkcore\.mysql)$/, 'mysql', 'datastore'],
  [/^aspire\.mongodb\.(driver|entityframeworkcore)(\..+)?$/, 'mongodb', 'datastore'],
  [/^aspire\.(microsoft\.)?(azure\.cosmos|entityframeworkcore\.cosmos)$/, 'cosmosdb', 'datastore'],
  [/^aspire\.rabbitmq\.client(\..+)?$/, 'rabbitmq', 'queue'],
  [/^aspire\.confluent\.kafka$/, 'kafka', 'queue'],
  [/^aspire\.nats\.net$/, 'nats', 'queue'],
  [/^aspire\.azure\.messaging\.servicebus$/, 'azure-service-bus', 'queue'],
  [/^aspire\.azure\.storage\.blobs$/, 'azure-blob', 'storage'],
  [/^aspire\.elastic\.clients\.elasticsearch$/, 'elasticsearch', 'search'],
];

const RULES: Record<Ecosystem, Rule[]> = {
  npm: NPM,
  go: GO,
  pypi: PYPI,
  maven: MAVEN,
  cargo: CARGO,
  nuget: NUGET,
  composer: [
    [/^predis\/predis$/, 'redis', 'datastore'],
    [/^php-amqplib\/php-amqplib$/, 'rabbitmq', 'queue'],
    [/^mongodb\/mongodb$/, 'mongodb', 'datastore'],
    [/^(elasticsearch|elastic)\/elasticsearch(-php)?$/, 'elasticsearch', 'search'],
  ],
};

/** PEP 503: lowercase, runs of '-', '_', '.' become '-'. */
export function pep503(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, '-');
}

function matchKey(ecosystem: Ecosystem, name: string): string {
  const lower = name.trim().toLowerCase();
  if (ecosystem === 'pypi') return pep503(lower);
  if (ecosystem === 'cargo') return lower.replace(/_/g, '-');
  return lower;
}

/**
 * The engine a dependency is a client of. `hints` are extras (pip), features (Cargo) or other
 * words of the declaration: ORMs and query builders only count with a driver hint
 * (`sqlalchemy[postgresql]`, `sqlx = { features = ["postgres"] }`).
 */
export function classifyClient(
  ecosystem: Ecosystem,
  name: string,
  hints: string[] = [],
): ClientClass | null {
  const key = matchKey(ecosystem, name);
  for (const [re, engine, category] of RULES[ecosystem]) {
    if (re.test(key)) return { engine, category };
  }
  const hinted = hints.map((h) => h.toLowerCase());
  const orm =
    (ecosystem === 'pypi' && /^(sqlalchemy|databases|tortoise-orm|peewee)$/.test(key)) ||
    (ecosystem === 'cargo' && /^(sqlx|diesel|sea-orm)$/.test(key));
  if (orm) {
    if (hinted.some((h) => /postgres|psycopg|asyncpg/.test(h)))
      return { engine: 'postgres', category: 'datastore' };
    if (hinted.some((h) => /mysql/.test(h))) return { engine: 'mysql', category: 'datastore' };
  }
  return null;
}

/** Generic cloud SDKs: which service they talk to is only visible in the source. */
export function isGenericCloudSdk(ecosystem: Ecosystem, name: string): boolean {
  const key = matchKey(ecosystem, name);
  return (
    (ecosystem === 'pypi' && /^(boto3|aioboto3|aiobotocore|botocore)$/.test(key)) ||
    (ecosystem === 'npm' && key === 'aws-sdk') ||
    (ecosystem === 'go' && /^github\.com\/aws\/aws-sdk-go(\/|$)/.test(key)) ||
    (ecosystem === 'maven' && /^com\.amazonaws:aws-java-sdk(-core)?$/.test(key))
  );
}

export const AWS_SERVICES: Record<string, ClientClass> = {
  s3: { engine: 's3', category: 'storage' },
  sqs: { engine: 'sqs', category: 'queue' },
  sns: { engine: 'sns', category: 'queue' },
  kinesis: { engine: 'kinesis', category: 'queue' },
  dynamodb: { engine: 'dynamodb', category: 'datastore' },
};
