/**
 * The server's metrics in the Prometheus text format (prom-client; the
 * names and labels are listed in docs/operations.md): requests, outcomes
 * and latency per KDC exchange, API command and LDAP operation, the
 * device codes being polled, the KDC's IdP step outcomes per IdP reference,
 * and the store's latency per kind of call (timedDirectory). The KDC, the
 * API and the LDAP service know nothing of Prometheus: each calls a
 * function given to it with what it already logs, and this module counts.
 * Label values come from closed sets (exchange, transport, result-code and
 * error names, registered commands, reference names the directory holds),
 * so what a client sends cannot grow the series without bound.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Directory } from '../directory/types.js';
import type { IdpStepOutcome, KdcNote } from '../kdc/exchange-context.js';

/** Seconds: the KDC answers in well under a millisecond, and holds a device-flow answer up to 15 s. */
const KDC_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const STORE_BUCKETS = [0.00001, 0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5];

export type StoreCall = 'get' | 'search' | 'write' | 'read_secret';

export class ServerMetrics {
  readonly registry = new Registry();
  private readonly kdcRequests: Counter<'exchange' | 'transport' | 'outcome'>;
  private readonly kdcSeconds: Histogram<'exchange'>;
  private readonly idpSteps: Counter<'idp' | 'outcome'>;
  private readonly apiRequests: Counter<'command' | 'outcome'>;
  private readonly apiSeconds: Histogram<'command'>;
  private readonly ldapOps: Counter<'operation' | 'outcome'>;
  private readonly ldapSeconds: Histogram<'operation'>;
  private readonly storeSeconds: Histogram<'call'>;

  constructor(o: { version: string; realm: string; commands: (name: string) => boolean; pendingDeviceCodes: () => number }) {
    const registers = [this.registry];
    new Gauge({ name: 'dirid_build_info', help: 'the server version and realm (always 1)', labelNames: ['version', 'realm'], registers }).set({ version: o.version, realm: o.realm }, 1);
    this.kdcRequests = new Counter({ name: 'dirid_kdc_requests_total', help: 'KDC requests answered, by exchange, transport and outcome (ISSUE or the KRB-ERROR name)', labelNames: ['exchange', 'transport', 'outcome'], registers });
    this.kdcSeconds = new Histogram({ name: 'dirid_kdc_request_duration_seconds', help: 'time to answer a KDC request, by exchange', labelNames: ['exchange'], buckets: KDC_BUCKETS, registers });
    this.idpSteps = new Counter({ name: 'dirid_idp_requests_total', help: "outcomes of the KDC's device-flow steps at each IdP reference", labelNames: ['idp', 'outcome'], registers });
    new Gauge({
      name: 'dirid_idp_pending_device_flows',
      help: 'device codes the server is polling (device flows not yet finished or expired)',
      registers,
      collect() {
        this.set(o.pendingDeviceCodes());
      },
    });
    this.apiRequests = new Counter({ name: 'dirid_api_requests_total', help: 'API commands answered, by command and outcome (ok or the error name)', labelNames: ['command', 'outcome'], registers });
    this.apiSeconds = new Histogram({ name: 'dirid_api_request_duration_seconds', help: 'time to answer an API command, by command', labelNames: ['command'], buckets: REQUEST_BUCKETS, registers });
    this.ldapOps = new Counter({ name: 'dirid_ldap_operations_total', help: 'LDAP operations answered, by operation and outcome (the result code name, or abandoned)', labelNames: ['operation', 'outcome'], registers });
    this.ldapSeconds = new Histogram({ name: 'dirid_ldap_operation_duration_seconds', help: 'time to answer an LDAP operation, by operation', labelNames: ['operation'], buckets: REQUEST_BUCKETS, registers });
    this.storeSeconds = new Histogram({ name: 'dirid_store_call_duration_seconds', help: 'time of a call to the store (entries read from its cache included), by kind', labelNames: ['call'], buckets: STORE_BUCKETS, registers });
    this.isCommand = o.commands;
  }

  private readonly isCommand: (name: string) => boolean;

  /** One KDC request answered (kdc-server.ts), with what its log line says. */
  kdc(exchange: string, transport: string, outcome: string, ms: number, note: KdcNote): void {
    this.kdcRequests.inc({ exchange, transport, outcome });
    this.kdcSeconds.observe({ exchange }, ms / 1000);
    if (note.idp) this.idpStep(note.idp.reference, note.idp.outcome);
  }

  idpStep(reference: string, outcome: IdpStepOutcome): void {
    this.idpSteps.inc({ idp: reference, outcome });
  }

  /** One API command answered (rpc/server.ts); a method no command has counts as unknown. */
  api(command: string, outcome: string, ms: number): void {
    const name = this.isCommand(command) ? command : 'unknown';
    this.apiRequests.inc({ command: name, outcome });
    this.apiSeconds.observe({ command: name }, ms / 1000);
  }

  /** One LDAP operation answered (ldap-server/connection.ts). */
  ldap(operation: string, outcome: string, ms: number): void {
    this.ldapOps.inc({ operation, outcome });
    this.ldapSeconds.observe({ operation }, ms / 1000);
  }

  store(call: StoreCall, seconds: number): void {
    this.storeSeconds.observe({ call }, seconds);
  }

  /** The exposition, and its content type. */
  async text(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}

/**
 * `dir` with each call timed into `metrics`: the same store, seen by every
 * caller of the server (its KDC, API and LDAP service) through this one
 * object, so the directory's per-handle state (its generation, the queues
 * keyed by the handle) is unchanged.
 */
export function timedDirectory(dir: Directory, metrics: ServerMetrics): Directory {
  const timed = <A extends unknown[], R>(call: StoreCall, f: (...a: A) => Promise<R>): ((...a: A) => Promise<R>) => {
    const bound = f.bind(dir);
    return (...a) => {
      const t = performance.now();
      const p = bound(...a);
      const done = () => metrics.store(call, (performance.now() - t) / 1000);
      p.then(done, done);
      return p;
    };
  };
  return {
    get baseDn() {
      return dir.baseDn;
    },
    get schema() {
      return dir.schema;
    },
    get generation() {
      return dir.generation;
    },
    subtreeGeneration: (dn) => dir.subtreeGeneration(dn),
    get: timed('get', dir.get),
    search: timed('search', dir.search),
    add: timed('write', dir.add),
    modify: timed('write', dir.modify),
    delete: timed('write', dir.delete),
    rename: timed('write', dir.rename),
    batch: timed('write', dir.batch),
    readSecret: timed('read_secret', dir.readSecret),
    close: () => dir.close(),
  };
}
