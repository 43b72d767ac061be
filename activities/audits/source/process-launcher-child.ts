/**
 * The process launcher (process-launcher.ts): a small process that runs commands for its parent
 * and sends back their results. It exits when its parent goes away (the IPC channel closes,
 * whatever way the parent ended); its exit hook then kills the process groups of commands still
 * running.
 */
import { runHere, type RunRequest } from './process-launcher';

process.on('message', (message: { id: number; req: RunRequest }) => {
  runHere(message.req).then(
    (result) => process.send!({ id: message.id, result }),
    (err: unknown) =>
      process.send!({ id: message.id, error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
// Its lifetime is its parent's: Ctrl-C reaches the whole process group, and the parent may still
// be finishing its work (graceful shutdown) while commands of it run here.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);
