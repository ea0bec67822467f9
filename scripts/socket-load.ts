/**
 * The long socket load (docs/load.md): a dirid server started in a child
 * process gets at least `--count` random and mutated KDC messages, as many
 * malformed HTTP requests and as many malformed LDAP messages through its
 * sockets, slow clients, silent connections past every limit, clients that
 * never read and lengths announcing gigabytes; the rate of correct
 * requests, the resident memory and the store are checked before and
 * after (test/support/socket-load.ts). Prints every figure; exits 1 on a
 * failure.
 *
 *   node --import tsx scripts/socket-load.ts [--count N] [--measure-seconds S] [--seed S]
 *        [--min-rate-ratio R] [--rss-slack-mib M] [--rss-slack-ratio R] [--short-timeouts] [--report-rates-only]
 *
 * --short-timeouts starts the server with time-outs of a few seconds
 * instead of its defaults, so the slow clients are dropped sooner.
 */
import { DEFAULT_OPTIONS, SHORT_BOUNDS, socketLoad } from '../test/support/socket-load.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const num = (name: string, dflt: number) => {
  const v = arg(name);
  if (v === undefined) return dflt;
  const n = Number(v.replace(/_/g, ''));
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number`);
  return n;
};

const options = {
  count: num('count', DEFAULT_OPTIONS.count),
  measureSeconds: num('measure-seconds', DEFAULT_OPTIONS.measureSeconds),
  seed: num('seed', Date.now() % 1_000_000),
  bounds: process.argv.includes('--short-timeouts') ? SHORT_BOUNDS : DEFAULT_OPTIONS.bounds,
  minRateRatio: num('min-rate-ratio', DEFAULT_OPTIONS.minRateRatio),
  judgeRates: !process.argv.includes('--report-rates-only'),
  rssSlackBytes: num('rss-slack-mib', DEFAULT_OPTIONS.rssSlackBytes / 1048576) * 1048576,
  rssSlackRatio: num('rss-slack-ratio', DEFAULT_OPTIONS.rssSlackRatio),
  halfOpenExtra: DEFAULT_OPTIONS.halfOpenExtra,
  out: (line: string) => console.log(line),
};
console.log(`socket load: ${options.count} messages of each kind, seed ${options.seed}${process.argv.includes('--short-timeouts') ? ', short time-outs' : ''}`);
const t0 = performance.now();
const report = await socketLoad(options);
console.log(`${'total.seconds'.padEnd(34)} ${((performance.now() - t0) / 1000).toFixed(0)}`);
for (const f of report.failures) console.log(`FAIL ${f}`);
console.log(report.failures.length ? `socket load: ${report.failures.length} failures` : 'socket load: ok');
process.exit(report.failures.length ? 1 : 0);
