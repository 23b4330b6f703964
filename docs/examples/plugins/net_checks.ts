// Example plugin `net_checks` (docs/plugins.md): one symbol per network API of the task, each
// call made twice, in the awaited form and in the callback form, and an endpoint that scans
// and learns the message it is given. Its targets come from local.d/net_checks.yaml.
//
// Type imports are erased when the server compiles this file; they give your editor the API.
import type { EndpointTask, ModuleContext, Task } from '../../../src/plugin-api/index.js';
import type { PluginApi } from '../../../src/config/user-plugins.js';

export function plugin({ defineModule, z }: PluginApi) {
  const Config = z.strictObject({
    /** URL answered with a body; the symbol's option is the status and the body. */
    http_url: z.string().url(),
    /** A name with an A record. */
    dns_name: z.string().min(1),
    /** Redis holding `redis_key`. */
    redis_server: z.string().default('127.0.0.1:6379'),
    redis_key: z.string().min(1),
    /** A TCP service that echoes what it is sent. */
    tcp_host: z.string().default('127.0.0.1'),
    tcp_port: z.number().int().min(1).max(65535),
  });
  type Config = ReturnType<typeof Config.parse>;

  /** The callback forms as promises, so one check can wait for both forms. */
  const viaCallback = <T>(start: (done: (v: T) => void) => boolean): Promise<T | 'not scheduled'> =>
    new Promise((resolve) => {
      if (!start(resolve)) resolve('not scheduled');
    });

  const checks = (cfg: Config) => ({
    async http(task: Task) {
      const awaited = await task.http.request({ url: cfg.http_url, timeout: 2 });
      const cb = await viaCallback<string>((done) =>
        task.http.request({ url: cfg.http_url, timeout: 2, callback: (err, code, body) => done(err ?? `${code} ${body?.toString() ?? ''}`) }),
      );
      if (awaited.response) task.insert('NET_CHECKS_HTTP', 1, [`awaited ${awaited.response.code} ${awaited.response.content}`, `callback ${cb}`]);
      else task.insert('NET_CHECKS_FAIL', 1, [`http: ${awaited.err}`]);
    },
    async dns(task: Task) {
      const awaited = await task.dns.request({ type: 'a', name: cfg.dns_name });
      const cb = await viaCallback<string>((done) =>
        task.dns.request({ type: 'a', name: cfg.dns_name, callback: (err, results) => done(err ?? (results ?? []).map(String).join(',')) }),
      );
      if (awaited.ok) task.insert('NET_CHECKS_DNS', 1, [`awaited ${awaited.results.map(String).join(',')}`, `callback ${cb}`]);
      else task.insert('NET_CHECKS_FAIL', 1, [`dns: ${awaited.error}`]);
    },
    async redis(task: Task) {
      const params = { servers: cfg.redis_server, timeout: 1 };
      const awaited = await task.redis.request(params, {}, ['GET', cfg.redis_key]);
      const cb = await viaCallback<string>((done) =>
        task.redis.request(params, { callback: (err, data) => done(err ?? String(data)) }, ['GET', cfg.redis_key]),
      );
      if (awaited.ok) task.insert('NET_CHECKS_REDIS', 1, [`awaited ${String(awaited.data)}`, `callback ${cb}`]);
      else task.insert('NET_CHECKS_FAIL', 1, [`redis: ${awaited.error}`]);
    },
    async tcp(task: Task) {
      const awaited = await task.tcp.request({ host: cfg.tcp_host, port: cfg.tcp_port, data: 'ping-awaited\n', timeout: 2 });
      const cb = await viaCallback<string>((done) =>
        task.tcp.request({ host: cfg.tcp_host, port: cfg.tcp_port, data: ['ping-', 'callback\n'], timeout: 2, callback: (err, data) => done(err ?? (data?.toString().trim() ?? '')) }),
      );
      if (awaited.data) task.insert('NET_CHECKS_TCP', 1, [`awaited ${awaited.data.toString().trim()}`, `callback ${cb}`]);
      else task.insert('NET_CHECKS_FAIL', 1, [`tcp: ${awaited.err}`]);
    },
  });

  return defineModule<Config>({
    name: 'net_checks',
    config: Config,
    symbols: {
      NET_CHECKS_HTTP: { score: 0.1, group: 'net_checks', description: 'HTTP target answered' },
      NET_CHECKS_DNS: { score: 0.1, group: 'net_checks', description: 'DNS name resolved' },
      NET_CHECKS_REDIS: { score: 0.1, group: 'net_checks', description: 'Redis key read' },
      NET_CHECKS_TCP: { score: 0.1, group: 'net_checks', description: 'TCP echo answered' },
      NET_CHECKS_FAIL: { score: 0, group: 'net_checks', description: 'A network check failed', oneShot: false },
      NET_CHECKS_ALL: { score: 0.5, group: 'net_checks', description: 'Every network check answered' },
    },
    setup(ctx: ModuleContext<Config>) {
      const c = checks(ctx.config);
      // One callback symbol per API; `coro` because they await, a time budget for each.
      for (const [api, check] of Object.entries(c)) {
        ctx.symbol({ name: `NET_CHECKS_${api.toUpperCase()}_CB`, inserts: [`NET_CHECKS_${api.toUpperCase()}`, 'NET_CHECKS_FAIL'], flags: ['coro'], timeout: 5, check });
      }
      ctx.composite({ name: 'NET_CHECKS_ALL', expression: 'NET_CHECKS_HTTP & NET_CHECKS_DNS & NET_CHECKS_REDIS & NET_CHECKS_TCP', policy: 'leave' });

      // POST /plugins/net_checks/verdict (enable password): scan the body, learn it as the
      // `learn` parameter says (spam or ham), answer with the verdict.
      ctx.endpoint('net_checks', 'verdict', {
        enable: true,
        need_task: true,
        async handler(task: EndpointTask, conn, params) {
          const result = await task.scan();
          const mine = result.symbols.filter((s) => s.name.startsWith('NET_CHECKS_')).map((s) => s.name).sort();
          if (params.learn === 'spam' || params.learn === 'ham') await task.learn(params.learn);
          conn.send_ucl({ action: result.action, score: result.score, symbols: mine, learned: params.learn ?? null });
        },
      });
      // GET /plugins/net_checks/targets (normal password): what the checks ask.
      ctx.endpoint('net_checks', 'targets', {
        enable: false,
        handler(_task, conn) {
          conn.sendUcl({ http: ctx.config.http_url, dns: ctx.config.dns_name, tcp: `${ctx.config.tcp_host}:${ctx.config.tcp_port}` });
        },
      });
    },
  });
}
