/**
 * Temporal plumbing shared by the API, the worker and the dev runner: a lazily connected client
 * (the API starts and serves reads even while Temporal is down) and search-attribute setup.
 */
import { Client, Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { activeTracing } from './tracing';

/** Custom search attributes operators filter on in the Temporal UI. */
export const SEARCH_ATTRIBUTES = {
  WorkspaceId: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  RepositoryId: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  AuditStatus: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
} as const;

export class TemporalGateway {
  private connection: Connection | undefined;
  private connecting: Promise<Client> | undefined;
  private clientValue: Client | undefined;

  constructor(
    readonly address: string,
    readonly namespace: string,
  ) {}

  /** The client, connecting on first use; a failed attempt is retried on the next call. */
  async client(): Promise<Client> {
    if (this.clientValue) return this.clientValue;
    this.connecting ??= (async () => {
      try {
        this.connection = await Connection.connect({ address: this.address, connectTimeout: '3s' });
        this.clientValue = new Client({
          connection: this.connection,
          namespace: this.namespace,
          // Tracing on: a workflow start is a span of the request that made it, and the workflow
          // continues its trace.
          interceptors: activeTracing()
            ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] }
            : undefined,
        });
        return this.clientValue;
      } finally {
        this.connecting = undefined;
      }
    })();
    return this.connecting;
  }

  /** True when the frontend answers within the timeout. */
  async healthy(timeoutMs = 2000): Promise<boolean> {
    try {
      const client = await this.client();
      await Promise.race([
        client.workflowService.getSystemInfo({}),
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('timeout')), timeoutMs).unref(),
        ),
      ]);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.connection?.close();
    this.connection = undefined;
    this.clientValue = undefined;
  }
}

/** Registers our custom search attributes on a namespace; attributes already there are kept. */
export async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.fromEntries(
    Object.entries(SEARCH_ATTRIBUTES).filter(
      ([name]) => !(name in (existing.customAttributes ?? {})),
    ),
  );
  if (Object.keys(missing).length === 0) return;
  await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
}
