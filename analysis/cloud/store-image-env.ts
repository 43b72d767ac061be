/**
 * The variables a stock database image reads. A Compose `env_file` shared by an application and
 * its database (`env_file: .env` on both) hands the database container every variable of the
 * file, `REDIS_URL` and `DATABASE_URL` included; the database's own image reads only its
 * documented variables (the official `postgres` image: `POSTGRES_*` and `PGDATA`), so the others
 * name no connection the database opens.
 */
import { isServerSetting } from './common';

/**
 * Per engine, its stock images (the last segment of the repository: `postgres`,
 * `bitnami/postgresql`) and the variables they read (the Docker Hub pages of the official images
 * and of Bitnami's, which add `REDIS_MASTER_HOST`-style replication settings under the same
 * prefix). A vendor's wrapping (`acme/orders-postgres`) may run scripts of its own, and an engine
 * not listed keeps every variable (a pooler image may read a client URL: `edoburu/pgbouncer`
 * takes `DATABASE_URL`).
 */
const STOCK_IMAGES: Record<string, { image: RegExp; variables: RegExp }> = {
  postgres: {
    image: /^(postgres|postgresql|postgis|timescaledb|pgvector)$/,
    variables: /^(POSTGRES_|PG)/,
  },
  mysql: { image: /^(mysql|mysql-server)$/, variables: /^MYSQL_/ },
  mariadb: { image: /^mariadb$/, variables: /^(MARIADB|MYSQL)_/ },
  mongodb: { image: /^(mongo|mongodb)$/, variables: /^MONGO_/ },
  redis: { image: /^(redis|valkey|keydb)$/, variables: /^(REDIS|VALKEY|KEYDB)_/ },
  memcached: { image: /^memcached$/, variables: /^MEMCACHED_/ },
};

/**
 * Whether a variable of an `env_file` given to a container of `engine`'s image (undefined for
 * no store image) names no connection of that container: the engine's server settings
 * (`POSTGRES_HOST` configures the server, isServerSetting), and for a stock image pulled as it is
 * (not `built` by the repository, whose own scripts may read more), any variable the image does
 * not read.
 */
export function storeIgnores(
  engine: string | undefined,
  image: { repo: string } | null,
  built: boolean,
  variable: string,
): boolean {
  if (engine === undefined) return false;
  if (isServerSetting(engine, variable)) return true;
  const stock = STOCK_IMAGES[engine];
  const last = image?.repo.toLowerCase().split('/').pop() ?? '';
  return !built && stock !== undefined && stock.image.test(last) && !stock.variables.test(variable);
}
