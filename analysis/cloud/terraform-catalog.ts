/**
 * What Terraform resource types mean to the audit: which entity kind they declare, their engine,
 * and the security settings read from their arguments (with provider defaults where well known).
 */

type Obj = Record<string, unknown>;
export type TfEntityKind = 'datastore' | 'queue' | 'bucket' | 'network' | 'service' | 'cluster';

export interface CatalogEntry {
  kind: TfEntityKind;
  engine?: string | ((b: Obj) => string | null);
  /** Arguments naming the thing, first literal wins (dotted paths allowed); else the label. */
  names?: string[];
}

const sqlEngine = (b: Obj): string | null => {
  const e = str(b.engine) ?? str(b.database_version);
  if (!e) return null;
  const l = e.toLowerCase();
  if (l.includes('postgres')) return 'postgres';
  if (l.includes('mysql')) return 'mysql';
  if (l.includes('mariadb')) return 'mariadb';
  if (l.includes('sqlserver')) return 'sqlserver';
  if (l.includes('oracle')) return 'oracle';
  return l;
};

export const CATALOG: Record<string, CatalogEntry> = {
  aws_db_instance: { kind: 'datastore', engine: sqlEngine, names: ['identifier'] },
  aws_rds_cluster: {
    kind: 'datastore',
    engine: (b) => sqlEngine(b) ?? 'aurora',
    names: ['cluster_identifier'],
  },
  aws_docdb_cluster: { kind: 'datastore', engine: 'mongodb', names: ['cluster_identifier'] },
  aws_dynamodb_table: { kind: 'datastore', engine: 'dynamodb' },
  aws_opensearch_domain: { kind: 'datastore', engine: 'opensearch', names: ['domain_name'] },
  aws_elasticache_cluster: {
    kind: 'datastore',
    engine: (b) => str(b.engine) ?? 'redis',
    names: ['cluster_id'],
  },
  aws_elasticache_replication_group: {
    kind: 'datastore',
    engine: 'redis',
    names: ['replication_group_id'],
  },
  google_sql_database_instance: { kind: 'datastore', engine: sqlEngine },
  google_redis_instance: { kind: 'datastore', engine: 'redis' },
  azurerm_postgresql_server: { kind: 'datastore', engine: 'postgres' },
  azurerm_postgresql_flexible_server: { kind: 'datastore', engine: 'postgres' },
  azurerm_mysql_flexible_server: { kind: 'datastore', engine: 'mysql' },
  azurerm_mssql_server: { kind: 'datastore', engine: 'sqlserver' },
  azurerm_cosmosdb_account: {
    kind: 'datastore',
    engine: (b) => (str(b.kind) === 'MongoDB' ? 'mongodb' : 'cosmosdb'),
  },
  azurerm_redis_cache: { kind: 'datastore', engine: 'redis' },

  aws_sqs_queue: { kind: 'queue', engine: 'sqs' },
  aws_sns_topic: { kind: 'queue', engine: 'sns' },
  aws_msk_cluster: { kind: 'queue', engine: 'kafka', names: ['cluster_name'] },
  aws_kinesis_stream: { kind: 'queue', engine: 'kinesis' },
  aws_mq_broker: {
    kind: 'queue',
    engine: (b) => str(b.engine_type)?.toLowerCase() ?? 'activemq',
    names: ['broker_name'],
  },
  google_pubsub_topic: { kind: 'queue', engine: 'pubsub' },
  azurerm_servicebus_namespace: { kind: 'queue', engine: 'servicebus' },
  azurerm_servicebus_queue: { kind: 'queue', engine: 'servicebus' },
  azurerm_servicebus_topic: { kind: 'queue', engine: 'servicebus' },
  azurerm_eventhub_namespace: { kind: 'queue', engine: 'eventhubs' },
  azurerm_eventhub: { kind: 'queue', engine: 'eventhubs' },

  aws_s3_bucket: { kind: 'bucket', engine: 's3', names: ['bucket'] },
  google_storage_bucket: { kind: 'bucket', engine: 'gcs' },
  azurerm_storage_account: { kind: 'bucket', engine: 'azure-storage' },
  azurerm_storage_container: { kind: 'bucket', engine: 'azure-blob' },

  aws_vpc: { kind: 'network', names: ['tags.Name'] },
  aws_subnet: { kind: 'network', names: ['tags.Name'] },
  aws_security_group: { kind: 'network' },
  google_compute_network: { kind: 'network' },
  google_compute_subnetwork: { kind: 'network' },
  google_compute_firewall: { kind: 'network' },
  azurerm_virtual_network: { kind: 'network' },
  azurerm_subnet: { kind: 'network' },
  azurerm_network_security_group: { kind: 'network' },

  aws_ecs_service: { kind: 'service', engine: 'ecs' },
  aws_ecs_task_definition: { kind: 'service', engine: 'ecs', names: ['family'] },
  aws_lambda_function: { kind: 'service', engine: 'lambda', names: ['function_name'] },
  aws_apprunner_service: { kind: 'service', engine: 'apprunner', names: ['service_name'] },
  google_cloud_run_service: { kind: 'service', engine: 'cloud-run' },
  google_cloud_run_v2_service: { kind: 'service', engine: 'cloud-run' },
  google_cloudfunctions2_function: { kind: 'service', engine: 'cloud-functions' },
  azurerm_container_app: { kind: 'service', engine: 'container-apps' },
  azurerm_linux_web_app: { kind: 'service', engine: 'app-service' },

  aws_eks_cluster: { kind: 'cluster', engine: 'eks' },
  aws_ecs_cluster: { kind: 'cluster', engine: 'ecs' },
  google_container_cluster: { kind: 'cluster', engine: 'gke' },
  azurerm_kubernetes_cluster: { kind: 'cluster', engine: 'aks' },
};

/** Rules of a network's firewall, by the argument that names the network (or group) they belong to. */
const NETWORK_RULES: Record<string, string> = {
  aws_security_group_rule: 'security_group_id',
  aws_vpc_security_group_ingress_rule: 'security_group_id',
  azurerm_network_security_rule: 'network_security_group_name',
};

/** Security settings of a bucket or a service, by the argument that names it. */
const SECURITY_SETTINGS: Record<string, string> = {
  aws_s3_bucket_server_side_encryption_configuration: 'bucket',
  aws_s3_bucket_versioning: 'bucket',
  aws_s3_bucket_public_access_block: 'bucket',
  aws_s3_bucket_acl: 'bucket',
  google_cloud_run_service_iam_member: 'service',
  google_cloud_run_service_iam_binding: 'service',
  google_cloud_run_v2_service_iam_member: 'name',
  google_cloud_run_v2_service_iam_binding: 'name',
};

const companions = (parents: Record<string, string>, evidenceKind: string) =>
  Object.fromEntries(
    Object.entries(parents).map(([type, parent]) => [type, { parent, evidenceKind }]),
  );

/** Resources that configure another one: their facts belong to the parent they reference. */
export const COMPANIONS: Record<string, { parent: string; evidenceKind: string }> = {
  ...companions(NETWORK_RULES, 'network-declared'),
  ...companions(SECURITY_SETTINGS, 'security-configured'),
};

/**
 * Public registry modules that wrap one storage resource: the resource type they create and the
 * module's own input defaults where they differ from the resource's (each module's documented
 * variables). A call's inputs, over these defaults, are read as that resource's arguments.
 */
export const STORAGE_MODULES: Record<string, { type: string; defaults: Obj }> = {
  'cloudposse/elasticache-redis/aws': {
    type: 'aws_elasticache_replication_group',
    defaults: { at_rest_encryption_enabled: false, transit_encryption_enabled: true },
  },
  'terraform-aws-modules/rds/aws': {
    type: 'aws_db_instance',
    defaults: { storage_encrypted: true },
  },
  'terraform-aws-modules/rds-aurora/aws': {
    type: 'aws_rds_cluster',
    defaults: { storage_encrypted: true },
  },
  'terraform-aws-modules/dynamodb-table/aws': { type: 'aws_dynamodb_table', defaults: {} },
  'terraform-aws-modules/sqs/aws': {
    type: 'aws_sqs_queue',
    defaults: { sqs_managed_sse_enabled: true },
  },
};

// ---------------------------------------------------------------------------------------------
// Reading arguments

function str(v: unknown): string | null {
  return typeof v === 'string' && !v.includes('${') ? v : null;
}

/** True when the value is a Terraform expression rather than a literal. */
export function isExpression(v: unknown): boolean {
  return typeof v === 'string' && v.includes('${');
}

/** Value at a dotted path; nested blocks (arrays of objects) are entered at their first element. */
export function get(b: unknown, path: string): unknown {
  let cur: unknown = b;
  for (const k of path.split('.')) {
    if (Array.isArray(cur)) cur = cur[0];
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Obj)[k];
  }
  return Array.isArray(cur) &&
    cur.length > 0 &&
    typeof cur[0] === 'object' &&
    cur[0] !== null &&
    path !== ''
    ? cur[0]
    : cur;
}

/** All instances of a nested block (or list-of-objects argument). */
export function blocks(b: unknown, name: string): Obj[] {
  const v = typeof b === 'object' && b !== null ? (b as Obj)[name] : undefined;
  const list = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return list.filter((x): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x));
}

function literal(v: unknown): string | number | boolean | null {
  if (typeof v === 'boolean' || typeof v === 'number') return v;
  return str(v);
}

class Reader {
  readonly security: Obj = {};
  private readonly unresolved: string[] = [];

  constructor(private readonly body: Obj) {}

  raw(path: string): unknown {
    return get(this.body, path);
  }

  bool(path: string): boolean | null {
    const v = get(this.body, path);
    if (isExpression(v)) this.unresolved.push(path);
    if (v === true || v === 'true') return true;
    if (v === false || v === 'false') return false;
    return null;
  }

  num(path: string): number | null {
    const v = get(this.body, path);
    if (isExpression(v)) this.unresolved.push(path);
    const n =
      typeof v === 'number' ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : NaN;
    return Number.isFinite(n) ? n : null;
  }

  str(path: string): string | null {
    const v = get(this.body, path);
    if (isExpression(v)) this.unresolved.push(path);
    return str(v);
  }

  has(path: string): boolean {
    const v = get(this.body, path);
    return v !== undefined && v !== null && v !== '';
  }

  set(field: string, value: unknown): void {
    if (value !== undefined) this.security[field] = value;
  }

  result(): Obj {
    return this.unresolved.length > 0
      ? { ...this.security, unresolved: this.unresolved }
      : this.security;
  }
}

const WORLD = new Set(['0.0.0.0/0', '::/0', '*', 'Internet', 'Any', 'any', 'internet']);

function worldOpen(values: unknown): boolean {
  const list = Array.isArray(values) ? values : [values];
  return list.some((v) => typeof v === 'string' && WORLD.has(v));
}

function portNum(v: unknown): number | string | null {
  const l = literal(v);
  return typeof l === 'string' && /^\d+$/.test(l) ? Number(l) : (l as number | string | null);
}

function awsIngress(rules: Obj[]): Obj[] {
  return rules
    .filter(
      (r) =>
        worldOpen(r.cidr_blocks) ||
        worldOpen(r.ipv6_cidr_blocks) ||
        worldOpen(r.cidr_ipv4) ||
        worldOpen(r.cidr_ipv6),
    )
    .map((r) => ({
      from_port: portNum(r.from_port),
      to_port: portNum(r.to_port),
      protocol: literal(r.protocol ?? r.ip_protocol),
    }));
}

function azureIngress(rules: Obj[]): Obj[] {
  return rules
    .filter(
      (r) =>
        String(r.direction ?? '').toLowerCase() === 'inbound' &&
        String(r.access ?? '').toLowerCase() === 'allow' &&
        (worldOpen(r.source_address_prefix) || worldOpen(r.source_address_prefixes)),
    )
    .map((r) => ({
      ports: r.destination_port_range ?? r.destination_port_ranges ?? null,
      protocol: literal(r.protocol),
      rule: literal(r.name),
    }));
}

function publicIngress(r: Reader, rules: Obj[]): void {
  r.set('public_ingress', rules);
  r.set('open_to_world', rules.length > 0);
}

/** Security settings of one resource, by type; `{}` for types without any. */
export function securityOf(type: string, body: Obj): Obj {
  const r = new Reader(body);
  const kms = (path: string) => r.has(path) && r.raw(path) !== false;
  switch (type) {
    case 'aws_db_instance':
    case 'aws_rds_cluster':
    case 'aws_docdb_cluster':
      r.set('encryption_at_rest', r.bool('storage_encrypted') ?? kms('kms_key_id'));
      r.set('kms_key', kms('kms_key_id'));
      r.set('publicly_accessible', r.bool('publicly_accessible') ?? false);
      r.set('deletion_protection', r.bool('deletion_protection') ?? false);
      r.set('backup_retention_period', r.num('backup_retention_period'));
      r.set('multi_az', r.bool('multi_az') ?? (type === 'aws_db_instance' ? false : null));
      r.set('iam_authentication', r.bool('iam_database_authentication_enabled') ?? false);
      break;
    case 'aws_dynamodb_table':
      r.set('encryption_at_rest', true);
      r.set('kms_key', r.bool('server_side_encryption.enabled') ?? false);
      r.set('point_in_time_recovery', r.bool('point_in_time_recovery.enabled') ?? false);
      r.set('deletion_protection', r.bool('deletion_protection_enabled') ?? false);
      break;
    case 'aws_elasticache_replication_group':
      r.set('encryption_at_rest', r.bool('at_rest_encryption_enabled') ?? false);
      r.set('tls_enforced', r.bool('transit_encryption_enabled') ?? false);
      r.set('multi_az', r.bool('multi_az_enabled') ?? false);
      r.set('backup_retention_period', r.num('snapshot_retention_limit'));
      break;
    case 'aws_elasticache_cluster':
      r.set('tls_enforced', r.bool('transit_encryption_enabled') ?? false);
      r.set('backup_retention_period', r.num('snapshot_retention_limit'));
      break;
    case 'aws_opensearch_domain':
      r.set('encryption_at_rest', r.bool('encrypt_at_rest.enabled') ?? false);
      r.set('tls_enforced', r.bool('domain_endpoint_options.enforce_https') ?? false);
      break;
    case 'google_sql_database_instance': {
      const ipv4 = r.bool('settings.ip_configuration.ipv4_enabled') ?? true;
      const networks = blocks(get(body, 'settings.ip_configuration'), 'authorized_networks');
      const sslMode = r.str('settings.ip_configuration.ssl_mode');
      r.set('encryption_at_rest', true);
      r.set('kms_key', r.has('encryption_key_name'));
      r.set('public_ip', ipv4);
      r.set('publicly_accessible', ipv4 && networks.some((n) => worldOpen(n.value)));
      r.set(
        'tls_enforced',
        r.bool('settings.ip_configuration.require_ssl') ??
          (sslMode ? sslMode !== 'ALLOW_UNENCRYPTED_AND_ENCRYPTED' : false),
      );
      r.set('deletion_protection', r.bool('deletion_protection') ?? true);
      r.set('backups_enabled', r.bool('settings.backup_configuration.enabled') ?? false);
      r.set('multi_az', r.str('settings.availability_type') === 'REGIONAL');
      break;
    }
    case 'google_redis_instance':
      r.set('encryption_at_rest', true);
      r.set('tls_enforced', r.str('transit_encryption_mode') === 'SERVER_AUTHENTICATION');
      r.set('auth_enabled', r.bool('auth_enabled') ?? false);
      r.set('multi_az', r.str('tier') === 'STANDARD_HA');
      break;
    case 'azurerm_postgresql_server':
      r.set('encryption_at_rest', true);
      r.set('tls_enforced', r.bool('ssl_enforcement_enabled'));
      r.set('min_tls_version', r.str('ssl_minimal_tls_version_enforced'));
      r.set('publicly_accessible', r.bool('public_network_access_enabled') ?? true);
      r.set('backup_retention_period', r.num('backup_retention_days'));
      r.set('geo_redundant_backup', r.bool('geo_redundant_backup_enabled') ?? false);
      break;
    case 'azurerm_postgresql_flexible_server':
    case 'azurerm_mysql_flexible_server':
      r.set('encryption_at_rest', true);
      // require_secure_transport is on by default; it is changed through a separate configuration resource.
      r.set('tls_enforced', true);
      r.set(
        'publicly_accessible',
        r.bool('public_network_access_enabled') ?? !r.has('delegated_subnet_id'),
      );
      r.set('backup_retention_period', r.num('backup_retention_days'));
      r.set('geo_redundant_backup', r.bool('geo_redundant_backup_enabled') ?? false);
      r.set('multi_az', r.has('high_availability'));
      break;
    case 'azurerm_mssql_server':
      r.set('publicly_accessible', r.bool('public_network_access_enabled') ?? true);
      r.set('min_tls_version', r.str('minimum_tls_version'));
      break;
    case 'azurerm_cosmosdb_account':
      r.set('encryption_at_rest', true);
      r.set('publicly_accessible', r.bool('public_network_access_enabled') ?? true);
      r.set('multi_az', blocks(body, 'geo_location').length > 1);
      break;
    case 'azurerm_redis_cache':
      r.set('encryption_at_rest', true);
      r.set(
        'tls_enforced',
        !(r.bool('non_ssl_port_enabled') ?? r.bool('enable_non_ssl_port') ?? false),
      );
      r.set('min_tls_version', r.str('minimum_tls_version'));
      r.set('publicly_accessible', r.bool('public_network_access_enabled') ?? true);
      break;
    case 'aws_sqs_queue':
      r.set(
        'encryption_at_rest',
        kms('kms_master_key_id') || (r.bool('sqs_managed_sse_enabled') ?? null),
      );
      r.set('kms_key', kms('kms_master_key_id'));
      break;
    case 'aws_sns_topic':
      r.set('encryption_at_rest', kms('kms_master_key_id'));
      r.set('kms_key', kms('kms_master_key_id'));
      break;
    case 'aws_kinesis_stream':
      r.set('encryption_at_rest', r.str('encryption_type') === 'KMS');
      break;
    case 'aws_msk_cluster':
      r.set('encryption_at_rest', true);
      r.set(
        'tls_enforced',
        (r.str('encryption_info.encryption_in_transit.client_broker') ?? 'TLS') === 'TLS',
      );
      break;
    case 'google_pubsub_topic':
      r.set('encryption_at_rest', true);
      r.set('kms_key', r.has('kms_key_name'));
      break;
    case 'azurerm_servicebus_namespace':
    case 'azurerm_eventhub_namespace':
      r.set('encryption_at_rest', true);
      r.set('min_tls_version', r.str('minimum_tls_version'));
      r.set('publicly_accessible', r.bool('public_network_access_enabled') ?? true);
      break;
    case 'aws_s3_bucket': {
      const acl = r.str('acl');
      r.set('encryption_at_rest', r.has('server_side_encryption_configuration') ? true : null);
      r.set('versioning', r.bool('versioning.enabled'));
      r.set('publicly_accessible', acl ? acl.startsWith('public-') : null);
      break;
    }
    case 'google_storage_bucket':
      r.set('encryption_at_rest', true);
      r.set('versioning', r.bool('versioning.enabled') ?? false);
      r.set('uniform_access', r.bool('uniform_bucket_level_access') ?? false);
      r.set('public_access_prevention', r.str('public_access_prevention'));
      break;
    case 'azurerm_storage_account':
      r.set('encryption_at_rest', true);
      r.set(
        'publicly_accessible',
        r.bool('allow_nested_items_to_be_public') ?? r.bool('allow_blob_public_access'),
      );
      r.set(
        'tls_enforced',
        r.bool('https_traffic_only_enabled') ?? r.bool('enable_https_traffic_only') ?? true,
      );
      r.set('min_tls_version', r.str('min_tls_version'));
      r.set('public_network_access', r.bool('public_network_access_enabled') ?? true);
      break;
    case 'azurerm_storage_container': {
      const access = r.str('container_access_type') ?? 'private';
      r.set('publicly_accessible', access === 'blob' || access === 'container');
      break;
    }
    case 'aws_security_group':
      publicIngress(r, awsIngress(blocks(body, 'ingress')));
      break;
    case 'aws_security_group_rule':
      publicIngress(r, r.str('type') === 'ingress' ? awsIngress([body]) : []);
      break;
    case 'aws_vpc_security_group_ingress_rule':
      publicIngress(r, awsIngress([body]));
      break;
    case 'google_compute_firewall': {
      const ingress =
        (r.str('direction') ?? 'INGRESS') === 'INGRESS' && worldOpen(get(body, 'source_ranges'));
      const allow = ingress
        ? blocks(body, 'allow').map((a) => ({
            protocol: literal(a.protocol),
            ports: a.ports ?? null,
          }))
        : [];
      publicIngress(r, allow);
      break;
    }
    case 'azurerm_network_security_group':
      publicIngress(r, azureIngress(blocks(body, 'security_rule')));
      break;
    case 'azurerm_network_security_rule':
      publicIngress(r, azureIngress([body]));
      break;
    case 'aws_ecs_service':
      r.set('publicly_accessible', r.bool('network_configuration.assign_public_ip') ?? false);
      break;
    case 'aws_eks_cluster':
      r.set('public_endpoint', r.bool('vpc_config.endpoint_public_access') ?? true);
      r.set('secrets_encryption', r.has('encryption_config'));
      break;
    case 'google_container_cluster':
      r.set(
        'public_endpoint',
        !(r.bool('private_cluster_config.enable_private_endpoint') ?? false),
      );
      break;
    case 'azurerm_kubernetes_cluster':
      r.set('public_endpoint', !(r.bool('private_cluster_enabled') ?? false));
      break;
    case 'google_cloud_run_v2_service':
      r.set('ingress', r.str('ingress') ?? 'INGRESS_TRAFFIC_ALL');
      break;
    case 'aws_s3_bucket_server_side_encryption_configuration':
      r.set('encryption_at_rest', true);
      r.set(
        'kms_key',
        r
          .str('rule.apply_server_side_encryption_by_default.sse_algorithm')
          ?.startsWith('aws:kms') ?? false,
      );
      break;
    case 'aws_s3_bucket_versioning':
      r.set('versioning', r.str('versioning_configuration.status') === 'Enabled');
      break;
    case 'aws_s3_bucket_public_access_block': {
      const flags = [
        'block_public_acls',
        'block_public_policy',
        'ignore_public_acls',
        'restrict_public_buckets',
      ];
      const block: Obj = {};
      for (const f of flags) block[f] = r.bool(f) ?? false;
      r.set('public_access_block', block);
      r.set(
        'blocks_public_access',
        flags.every((f) => block[f] === true),
      );
      break;
    }
    case 'aws_s3_bucket_acl': {
      const acl = r.str('acl');
      r.set('publicly_accessible', acl ? acl.startsWith('public-') : null);
      break;
    }
    case 'google_cloud_run_service_iam_member':
    case 'google_cloud_run_v2_service_iam_member':
    case 'google_cloud_run_service_iam_binding':
    case 'google_cloud_run_v2_service_iam_binding': {
      const members = [get(body, 'member'), ...(Array.isArray(body.members) ? body.members : [])];
      r.set('publicly_accessible', members.includes('allUsers'));
      r.set('role', r.str('role'));
      break;
    }
  }
  return r.result();
}

/** Engine version, size and replica facts worth comparing across sources. */
export function detailsOf(body: Obj): Obj {
  const out: Obj = {};
  const pick = (field: string, ...paths: string[]) => {
    for (const p of paths) {
      const v = literal(get(body, p));
      if (v !== null && v !== undefined) {
        out[field] = v;
        return;
      }
    }
  };
  pick(
    'engine_version',
    'engine_version',
    'database_version',
    'redis_version',
    'kafka_version',
    'version',
  );
  pick(
    'instance_class',
    'instance_class',
    'node_type',
    'settings.tier',
    'tier',
    'sku_name',
    'instance_type',
  );
  pick('replicas', 'desired_count', 'num_cache_nodes', 'number_of_broker_nodes');
  return out;
}

/** Container images a compute resource runs, as [argument path, image]. */
export function imagesOf(type: string, body: Obj): [string, string][] {
  const candidates: Record<string, string[]> = {
    google_cloud_run_service: ['template.spec.containers.image'],
    google_cloud_run_v2_service: ['template.containers.image'],
    azurerm_container_app: ['template.container.image'],
    aws_lambda_function: ['image_uri'],
    aws_apprunner_service: ['source_configuration.image_repository.image_identifier'],
  };
  return (candidates[type] ?? []).flatMap((p) => {
    const v = str(get(body, p));
    return v ? [[p, v] as [string, string]] : [];
  });
}
