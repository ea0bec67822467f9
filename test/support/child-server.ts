/**
 * The end of a bench's server child (dirid-ldap-server.ts, dirid-server.ts):
 * the server it started stops, and the process exits, on SIGTERM, SIGINT or
 * when the parent that forked it goes away.
 */
import type { RunningServer } from '../../src/server/start.js';

export interface ChildServer {
  /** the server to stop at the end */
  server: RunningServer | undefined;
  stop(): Promise<void>;
}

export function childServer(): ChildServer {
  const child: ChildServer = {
    server: undefined,
    async stop() {
      await child.server?.stop();
      process.exit(0);
    },
  };
  for (const event of ['SIGTERM', 'SIGINT', 'disconnect'] as const) process.once(event, () => void child.stop());
  return child;
}
