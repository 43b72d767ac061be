/**
 * Runs `stop` once on SIGINT/SIGTERM, then exits. A second signal more than 2 s after the first
 * exits at once (an impatient second Ctrl-C); one sooner is the same Ctrl-C relayed again (tsx
 * and npm forward the terminal's signal to their child, which already got it).
 */
import type { Logger } from './logger';

export function onShutdown(log: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  let firstAt = 0;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping && Date.now() - firstAt < 2000) return;
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    stopping = true;
    firstAt = Date.now();
    log.info({ signal }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
